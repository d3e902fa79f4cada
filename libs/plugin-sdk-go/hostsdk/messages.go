package hostsdk

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"plugin-host.dev/sdk-go/hostsdk/wire"
)

// Outgoing messages as the host checks them (docs/protocol/v2.md section 7): the JSON shape, the
// normalisation and the QQ Bot rendering, pinned by the shared rendering vectors. The SDK applies the
// same rules before it sends, so a mistake fails the handler that made it instead of a later refusal.

var (
	qqTargetPattern  = regexp.MustCompile(`^[A-Za-z0-9_.:@-]{1,128}$`)
	bidiControls     = regexp.MustCompile("[\u202a-\u202e\u2066-\u2069]")
	asciiPunctuation = regexp.MustCompile("[!-/:-@\\[-`{-~]")
)

// isBidiControl: the characters bidiControls matches.
func isBidiControl(r rune) bool {
	return (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069')
}

// isInvisible: zero-width characters, which do not make a message non-blank.
func isInvisible(r rune) bool {
	return (r >= '\u200b' && r <= '\u200d') || r == '\u2060' || r == '\ufeff'
}

// blankText: nothing but white space and invisible characters.
func blankText(s string) bool {
	for _, r := range s {
		if !jsWhitespace(r) && !isInvisible(r) {
			return false
		}
	}
	return true
}

// validMentionID: 1 to 128 of A-Z a-z 0-9 _ . : @ - (checked on every mention sent).
func validMentionID(id string) bool {
	if len(id) < 1 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == ':' || c == '@' || c == '-') {
			return false
		}
	}
	return true
}

// jsWhitespace is what JavaScript's String.prototype.trim removes, the host's meaning of "blank".
func jsWhitespace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', '\u00a0', '\u1680', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff':
		return true
	}
	return r >= '\u2000' && r <= '\u200a'
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("boolean %v", x)
	case []any:
		return "an array"
	case string:
		return fmt.Sprintf("%q", x)
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%v", x)
	}
}

// partKeys are the required and optional fields of each part shape.
var partKeys = map[string][2][]string{
	"text":             {{"type", "text"}, {"literal"}},
	"mention-user":     {{"type", "target", "id"}, {"displayName"}},
	"mention-everyone": {{"type", "target"}, nil},
	"composite":        {{"type", "parts"}, nil},
}

func unsupported(format string, args ...any) error {
	return messageError(wire.CodeMessagePartUnsupported, nil, fmt.Sprintf(format, args...))
}

// parsePart checks the JSON shape of one part and returns it typed.
func parsePart(v any, path string, depth int) (Part, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, unsupported("%s is %s, not a part object", path, describe(v))
	}
	var shape string
	var children wire.MessagePartList
	switch kind := obj["type"]; kind {
	case "composite":
		if depth >= maxCompositeDepth {
			return nil, unsupported("%s nests composites %d levels deep; at most %d are allowed", path, depth+1, maxCompositeDepth)
		}
		inner, ok := obj["parts"].([]any)
		if !ok {
			return nil, unsupported("%s.parts must be an array of parts", path)
		}
		for i, child := range inner {
			p, err := parsePart(child, fmt.Sprintf("%s.parts[%d]", path, i), depth+1)
			if err != nil {
				return nil, err
			}
			children = append(children, p)
		}
		shape = "composite"
	case "text":
		shape = "text"
	case "mention":
		target := obj["target"]
		if target != "user" && target != "everyone" {
			return nil, unsupported(`%s is a mention with target %s; use "user" or "everyone"`, path, describe(target))
		}
		shape = "mention-" + target.(string)
	default:
		return nil, unsupported("%s has type %s", path, describe(kind))
	}
	keys := partKeys[shape]
	for key := range obj {
		if !contains(keys[0], key) && !contains(keys[1], key) {
			return nil, unsupported(`%s has the unknown field "%s"`, path, key)
		}
	}
	for _, key := range keys[0] {
		if _, ok := obj[key]; !ok {
			if shape == "mention-user" && key == "id" {
				return nil, messageError(wire.CodeMessageMentionInvalidID, nil, path+".id is missing")
			}
			return nil, unsupported(`%s needs "%s"`, path, key)
		}
	}
	switch shape {
	case "text":
		text, ok := obj["text"].(string)
		if !ok {
			return nil, unsupported("%s.text must be a string", path)
		}
		literal, has := obj["literal"]
		lit, isBool := literal.(bool)
		if has && !isBool {
			return nil, unsupported("%s.literal must be true or false", path)
		}
		return wire.MessagePartText{Type: "text", Text: text, Literal: lit}, nil
	case "mention-user":
		id, ok := obj["id"].(string)
		if !ok {
			return nil, messageError(wire.CodeMessageMentionInvalidID, nil, path+".id must be a string")
		}
		name, has := obj["displayName"]
		display, isString := name.(string)
		if has && !isString {
			return nil, unsupported("%s.displayName must be a string", path)
		}
		return wire.MessagePartMentionUser{Type: "mention", Target: "user", ID: id, DisplayName: display}, nil
	case "mention-everyone":
		return AtEveryone(), nil
	default:
		return wire.MessagePartComposite{Type: "composite", Parts: children}, nil
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// parseOutgoing checks the JSON shape of an outgoing message {format?, parts}; format defaults to text.
func parseOutgoing(v any) (string, []Part, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return "", nil, messageError(wire.CodeMessageEmpty, nil, fmt.Sprintf(`the message must be an object {"format"?, "parts": [...]}, not %s`, describe(v)))
	}
	list, ok := obj["parts"].([]any)
	if !ok {
		return "", nil, messageError(wire.CodeMessageEmpty, nil, `"parts" must be an array of parts`)
	}
	parts := make([]Part, 0, len(list))
	for i, raw := range list {
		p, err := parsePart(raw, fmt.Sprintf("parts[%d]", i), 0)
		if err != nil {
			return "", nil, err
		}
		parts = append(parts, p)
	}
	for key := range obj {
		if key != "format" && key != "parts" {
			return "", nil, unsupported(`the message has the unknown field "%s"`, key)
		}
	}
	format := "text"
	if f, has := obj["format"]; has {
		s, _ := f.(string)
		if s != "text" && s != "markdown" {
			return "", nil, unsupported(`"format" must be "text" or "markdown", not %s`, describe(f))
		}
		format = s
	}
	return format, parts, nil
}

// flattener turns parts into the normalised list: composites flattened, empty text dropped, adjacent text
// of the same kind merged (literal only counts in Markdown), bidirectional controls removed.
type flattener struct {
	markdown       bool
	target         *wire.Target
	out            wire.MessagePartList
	pending        strings.Builder
	pendingLiteral bool
	hasMention     bool
}

func (f *flattener) add(parts []Part, depth int) error {
	for _, p := range parts {
		switch v := p.(type) {
		case wire.MessagePartText:
			if v.Text == "" {
				continue
			}
			literal := f.markdown && v.Literal
			if literal != f.pendingLiteral {
				f.flush()
			}
			f.pendingLiteral = literal
			text := v.Text
			if strings.ContainsFunc(text, isBidiControl) {
				text = bidiControls.ReplaceAllString(text, "")
			}
			f.pending.WriteString(text)
		case wire.MessagePartMentionUser:
			if !validMentionID(v.ID) {
				return messageError(wire.CodeMessageMentionInvalidID, f.target,
					fmt.Sprintf("the mention id %q is not 1 to 128 letters, digits or _ . : @ -; use sender.mentionId from the event", v.ID))
			}
			f.flush()
			f.out = append(f.out, v)
			f.hasMention = true
		case wire.MessagePartMentionEveryone:
			f.flush()
			f.out = append(f.out, v)
			f.hasMention = true
		case mentionGroup:
			if v.users < 1 || v.users > wire.LimitMaxMentionUsers {
				return messageError(wire.CodeMessageMentionTooMany, f.target, "")
			}
			if err := f.add(v.Parts, depth+1); err != nil {
				return err
			}
		case wire.MessagePartComposite:
			if depth >= maxCompositeDepth {
				return messageError(wire.CodeMessagePartUnsupported, f.target, "composites nest more than 8 levels deep; flatten the message")
			}
			if err := f.add(v.Parts, depth+1); err != nil {
				return err
			}
		default:
			return messageError(wire.CodeMessagePartUnsupported, f.target, "")
		}
	}
	return nil
}

func (f *flattener) flush() {
	if f.pending.Len() == 0 {
		return
	}
	f.out = append(f.out, wire.MessagePartText{Type: "text", Text: f.pending.String(), Literal: f.pendingLiteral})
	f.pending.Reset()
}

// normalize applies the host's normalisation (v2.md 7.2) to typed parts.
func normalize(format string, parts []Part, target *wire.Target) (wire.MessagePartList, error) {
	f := &flattener{markdown: format == "markdown", target: target, out: wire.MessagePartList{}}
	if err := f.add(parts, 0); err != nil {
		return nil, err
	}
	f.flush()
	if !f.hasMention {
		blank := true
		for _, p := range f.out {
			if t, ok := p.(wire.MessagePartText); ok && !blankText(t.Text) {
				blank = false
			}
		}
		if blank {
			return nil, messageError(wire.CodeMessageEmpty, target, "")
		}
	}
	if len(f.out) > wire.LimitMaxMessageParts {
		return nil, messageError(wire.CodeMessagePartsTooMany, target, fmt.Sprintf("it has %d parts after merging adjacent text", len(f.out)))
	}
	return f.out, nil
}

var (
	entityReplacer = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	tagStart       = regexp.MustCompile(`<([A-Za-z@#!/])`)
)

// escapeGuildText escapes & < > as entities (the platform unescapes guild messages once) and puts a word
// joiner after @ in the words @everyone.
func escapeGuildText(s string) string {
	return strings.ReplaceAll(entityReplacer.Replace(s), "@everyone", "@\u2060everyone")
}

// breakTags puts a word joiner after each < that could open a tag (groups and one-to-one chats show text as typed).
func breakTags(s string) string {
	return tagStart.ReplaceAllString(s, "<\u2060$1")
}

func escapeMarkdownLiteral(s string) string {
	return asciiPunctuation.ReplaceAllStringFunc(s, func(c string) string { return `\` + c })
}

// renderQQBot renders a normalised message for QQ Bot (v2.md 7.3): the body the host would send.
func renderQQBot(format string, parts wire.MessagePartList, target wire.Target) (map[string]any, error) {
	t := target
	if !qqTargetPattern.MatchString(target.ID) || target.ID == "." || target.ID == ".." {
		return nil, messageError(wire.CodeMessageTargetInvalid, &t, fmt.Sprintf("the target id %q is not a QQ id", target.ID))
	}
	markdown := format == "markdown"
	if markdown && target.Type != "group" {
		return nil, messageError(wire.CodeMessageFormatUnsupportedTarget, &t, fmt.Sprintf("the target is of type %q", target.Type))
	}
	oneToOne := target.Type == "user" || target.Type == "direct"
	guild := target.Type == "channel" || target.Type == "direct"
	var content strings.Builder
	for _, p := range parts {
		switch v := p.(type) {
		case wire.MessagePartText:
			switch {
			case v.Literal:
				content.WriteString(escapeMarkdownLiteral(v.Text))
			case guild:
				content.WriteString(escapeGuildText(v.Text))
			default:
				content.WriteString(breakTags(v.Text))
			}
			continue
		}
		if oneToOne {
			return nil, messageError(wire.CodeMessageMentionUnsupportedTarget, &t, "")
		}
		switch v := p.(type) {
		case wire.MessagePartMentionEveryone:
			if target.Type != "channel" {
				return nil, messageError(wire.CodeMessageMentionUnsupportedTarget, &t, "QQ shows an everyone mention only in a guild channel")
			}
			content.WriteString("<qqbot-at-everyone />")
		case wire.MessagePartMentionUser:
			content.WriteString(`<qqbot-at-user id="` + v.ID + `" />`)
		}
	}
	text := content.String()
	if n := utf8.RuneCountInString(text); n > wire.LimitMaxMessageChars {
		return nil, messageError(wire.CodeMessageTooLong, &t, fmt.Sprintf("the rendered content has %d characters, over the limit of %d", n, wire.LimitMaxMessageChars))
	}
	if markdown {
		return map[string]any{"msg_type": 2, "markdown": map[string]any{"content": text}}, nil
	}
	return map[string]any{"msg_type": 0, "content": text}, nil
}

// parseTarget checks a target {type, id}; any fault is message.target.invalid.
func parseTarget(v any) (wire.Target, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return wire.Target{}, messageError(wire.CodeMessageTargetInvalid, nil, "the target must be an object {type, id}")
	}
	kind, _ := obj["type"].(string)
	id, _ := obj["id"].(string)
	if kind != "group" && kind != "channel" && kind != "user" && kind != "direct" {
		return wire.Target{}, messageError(wire.CodeMessageTargetInvalid, nil, `"target.type" must be one of group, channel, user, direct`)
	}
	if id == "" {
		return wire.Target{}, messageError(wire.CodeMessageTargetInvalid, nil, `"target.id" is empty: use the conversation id from the event`)
	}
	for key := range obj {
		if key != "type" && key != "id" && key != "botAccountId" {
			return wire.Target{}, messageError(wire.CodeMessageTargetInvalid, nil, fmt.Sprintf(`the target has the unknown field "%s"`, key))
		}
	}
	bot, isString := obj["botAccountId"].(string)
	if _, named := obj["botAccountId"]; named && (!isString || bot == "") {
		return wire.Target{}, messageError(wire.CodeMessageTargetInvalid, nil, `"target.botAccountId" must be a non-empty string: use bot.botAccountId of an event`)
	}
	return wire.Target{Type: kind, ID: id, BotAccountID: bot}, nil
}
