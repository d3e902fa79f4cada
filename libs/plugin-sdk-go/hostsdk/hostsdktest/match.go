package hostsdktest

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// isSpace is whitespace as the host's matcher sees it (JavaScript's \s).
func isSpace(r rune) bool {
	return r == 0xFEFF || (unicode.IsSpace(r) && r != 0x85)
}

// MatchCommand matches a message text against manifest commands exactly as the host routes
// (docs/protocol/v2.md 6.2): the longest prefix + word wins, ties go to the first declared; it returns
// the match and the index of the command, or nil and -1.
func MatchCommand(text string, commands []wire.Command, conversation string) (*wire.CommandMatch, int) {
	trimmed := strings.TrimLeftFunc(text, isSpace)
	bestIndex, bestLen, bestEnd := -1, -1, 0
	var bestPrefix, bestWord string
	for i, c := range commands {
		if c.ConversationScopes != nil && !contains(c.ConversationScopes, conversation) {
			continue
		}
		prefixes := c.Prefixes
		if prefixes == nil {
			prefixes = []string{"/"}
		}
		for _, prefix := range prefixes {
			for _, word := range append([]string{c.Name}, c.Aliases...) {
				head := prefix + word
				n := utf8.RuneCountInString(head)
				if bestIndex >= 0 && n <= bestLen {
					continue
				}
				end, ok := foldPrefix(trimmed, head)
				if !ok {
					continue
				}
				if next, _ := utf8.DecodeRuneInString(trimmed[end:]); end < len(trimmed) && !isSpace(next) {
					continue
				}
				bestIndex, bestLen, bestEnd, bestPrefix, bestWord = i, n, end, prefix, word
			}
		}
	}
	if bestIndex < 0 {
		return nil, -1
	}
	return &wire.CommandMatch{
		Name:   commands[bestIndex].Name,
		Word:   bestWord,
		Prefix: bestPrefix,
		Args:   strings.TrimLeftFunc(trimmed[bestEnd:], isSpace),
	}, bestIndex
}

// foldPrefix reports whether text starts with head ignoring case, and the byte length it covers in text.
func foldPrefix(text, head string) (int, bool) {
	i := 0
	for _, h := range head {
		if i >= len(text) {
			return 0, false
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if unicode.ToLower(r) != unicode.ToLower(h) {
			return 0, false
		}
		i += size
	}
	return i, true
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
