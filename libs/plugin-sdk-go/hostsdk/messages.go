package hostsdk

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
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
	"image":            {{"type"}, {"url", "mediaId", "alt"}},
	"file":             {{"type"}, {"url", "mediaId", "fileName"}},
}

// mediaIDPattern is the form of the ids media.finish gives (the protocol's MediaId).
var mediaIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{16,64}$`)

// mediaSourceProblem says why an image or file part cannot name its bytes ("" when it can): exactly one
// of a URL (mediaURLProblem) and the id of an upload.
func mediaSourceProblem(url, mediaID string) string {
	switch {
	case (url == "") == (mediaID == ""):
		return `needs exactly one of "url" and "mediaId"`
	case mediaID != "" && !mediaIDPattern.MatchString(mediaID):
		return fmt.Sprintf("has the mediaId %q, which is not a media id from media.finish (16 to 64 letters, digits, _ or -)", mediaID)
	case url != "":
		if problem := mediaURLProblem(url); problem != "" {
			return fmt.Sprintf("has the URL %q, which %s", url, problem)
		}
	}
	return ""
}

// mediaURLProblem says why url cannot be the URL of an image, a file or a link button ("" when it can):
// an absolute http or https URL without spaces, of at most wire.LimitMaxMediaURLChars characters.
func mediaURLProblem(url string) string {
	if n := utf8.RuneCountInString(url); n > wire.LimitMaxMediaURLChars {
		return fmt.Sprintf("has %d characters; at most %d are allowed", n, wire.LimitMaxMediaURLChars)
	}
	rest, ok := strings.CutPrefix(url, "https://")
	if !ok {
		rest, ok = strings.CutPrefix(url, "http://")
	}
	if !ok || rest == "" || strings.ContainsFunc(rest, jsWhitespace) || strings.ContainsAny(rest[:1], "/?#") {
		return "must be an absolute http or https URL without spaces"
	}
	return ""
}

// nonBlank: 1 to limit characters, not blank, no control characters (the protocol's NonBlankString).
func nonBlank(s string, limit int) bool {
	if s == "" || utf8.RuneCountInString(s) > limit || blankOfWhitespace(s) {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

func blankOfWhitespace(s string) bool {
	for _, r := range s {
		if !jsWhitespace(r) {
			return false
		}
	}
	return true
}

func keyboardInvalid(target *wire.Target, format string, args ...any) error {
	return messageError(wire.CodeMessageKeyboardInvalid, target, fmt.Sprintf(format, args...))
}

var buttonIDPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

// checkButton checks the fields of one button (message.keyboard.invalid).
func checkButton(b wire.Button, path string, target *wire.Target) error {
	if b.ID != "" && !buttonIDPattern.MatchString(b.ID) {
		return keyboardInvalid(target, "%s.id %q is not 1 to 64 letters, digits or _ . : -", path, b.ID)
	}
	if !nonBlank(b.Label, wire.LimitMaxButtonLabelChars) {
		return keyboardInvalid(target, "%s.label must be 1 to %d characters, not blank, without control characters", path, wire.LimitMaxButtonLabelChars)
	}
	if style := b.GetStyle(); style != "primary" && style != "secondary" {
		return keyboardInvalid(target, `%s.style must be "primary" or "secondary"`, path)
	}
	if b.Action != "callback" && b.Action != "link" && b.Action != "command" {
		return keyboardInvalid(target, `%s.action must be "callback", "link" or "command", not %q`, path, b.Action)
	}
	if n := utf8.RuneCountInString(b.Data); n < 1 || n > wire.LimitMaxButtonDataChars {
		return keyboardInvalid(target, "%s.data must be 1 to %d characters", path, wire.LimitMaxButtonDataChars)
	}
	return nil
}

// parseKeyboard checks the JSON shape of a keyboard and returns it typed (message.keyboard.invalid).
func parseKeyboard(v any) (*wire.Keyboard, error) {
	obj, ok := v.(map[string]any)
	rows, isList := obj["rows"].([]any)
	if !ok || !isList || len(obj) != 1 {
		return nil, keyboardInvalid(nil, `keyboard must be an object {"rows": [{"buttons": [...]}, ...]}`)
	}
	k := &wire.Keyboard{Rows: make([]wire.KeyboardRowsItem, len(rows))}
	for r, rawRow := range rows {
		row, ok := rawRow.(map[string]any)
		buttons, isList := row["buttons"].([]any)
		if !ok || !isList || len(row) != 1 {
			return nil, keyboardInvalid(nil, `keyboard.rows[%d] must be an object {"buttons": [...]}`, r)
		}
		for c, rawButton := range buttons {
			path := fmt.Sprintf("keyboard.rows[%d].buttons[%d]", r, c)
			b, ok := rawButton.(map[string]any)
			if !ok {
				return nil, keyboardInvalid(nil, "%s is %s, not a button object", path, describe(rawButton))
			}
			for key := range b {
				if !contains([]string{"id", "label", "style", "action", "data", "send"}, key) {
					return nil, keyboardInvalid(nil, `%s has the unknown field "%s"`, path, key)
				}
			}
			var button wire.Button
			var typed bool
			if button.Label, typed = b["label"].(string); !typed {
				return nil, keyboardInvalid(nil, `%s needs "label", a string`, path)
			}
			if button.Action, typed = b["action"].(string); !typed {
				return nil, keyboardInvalid(nil, `%s needs "action", a string`, path)
			}
			if button.Data, typed = b["data"].(string); !typed {
				return nil, keyboardInvalid(nil, `%s needs "data", a string`, path)
			}
			if id, has := b["id"]; has {
				if button.ID, typed = id.(string); !typed || button.ID == "" {
					return nil, keyboardInvalid(nil, "%s.id must be 1 to 64 letters, digits or _ . : -", path)
				}
			}
			if style, has := b["style"]; has {
				s, typed := style.(string)
				if !typed {
					return nil, keyboardInvalid(nil, `%s.style must be "primary" or "secondary"`, path)
				}
				button.Style = &s
			}
			if send, has := b["send"]; has {
				if button.Send, typed = send.(bool); !typed {
					return nil, keyboardInvalid(nil, "%s.send must be true or false", path)
				}
			}
			if err := checkButton(button, path, nil); err != nil {
				return nil, err
			}
			k.Rows[r].Buttons = append(k.Rows[r].Buttons, button)
		}
	}
	return k, nil
}

// normalizeKeyboard checks a keyboard against the protocol's limits (v2.md 7.2 step 8) and gives every
// button its id (r<row>c<column> when none), style and send. Order: format, size row by row, ids, links.
func normalizeKeyboard(k *wire.Keyboard, format string, target *wire.Target) (*wire.Keyboard, error) {
	if format != "markdown" {
		return nil, messageError(wire.CodeMessageKeyboardUnsupportedFormat, target, `the message has a keyboard and format "text"; send it with ReplyMarkdown or SendMarkdown`)
	}
	if n := len(k.Rows); n < 1 || n > wire.LimitMaxKeyboardRows {
		return nil, messageError(wire.CodeMessageKeyboardTooLarge, target, fmt.Sprintf("the keyboard has %d rows; it takes 1 to %d", n, wire.LimitMaxKeyboardRows))
	}
	seen := map[string]string{}
	out := &wire.Keyboard{Rows: make([]wire.KeyboardRowsItem, len(k.Rows))}
	for r, row := range k.Rows {
		if n := len(row.Buttons); n < 1 || n > wire.LimitMaxKeyboardButtonsPerRow {
			return nil, messageError(wire.CodeMessageKeyboardTooLarge, target,
				fmt.Sprintf("keyboard.rows[%d] has %d buttons; a row takes 1 to %d", r, n, wire.LimitMaxKeyboardButtonsPerRow))
		}
		buttons := make([]wire.Button, len(row.Buttons))
		for c, b := range row.Buttons {
			path := fmt.Sprintf("keyboard.rows[%d].buttons[%d]", r, c)
			if err := checkButton(b, path, target); err != nil {
				return nil, err
			}
			id := b.ID
			if id == "" {
				id = fmt.Sprintf("r%dc%d", r, c)
			}
			if first, dup := seen[id]; dup {
				return nil, keyboardInvalid(target, "%s has the id %q of %s", path, id, first)
			}
			seen[id] = path
			if b.Action == "link" && mediaURLProblem(b.Data) != "" {
				return nil, keyboardInvalid(target, "%s is a link button whose data %q is not an absolute http or https URL", path, b.Data)
			}
			style := b.GetStyle()
			buttons[c] = wire.Button{ID: id, Label: b.Label, Style: &style, Action: b.Action, Data: b.Data, Send: b.Action == "command" && b.Send}
		}
		out.Rows[r] = wire.KeyboardRowsItem{Buttons: buttons}
	}
	return out, nil
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
	case "text", "image", "file":
		shape = kind.(string)
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
	case "image", "file":
		_, hasURL := obj["url"]
		_, hasID := obj["mediaId"]
		if hasURL == hasID {
			return nil, unsupported(`%s needs exactly one of "url" and "mediaId"`, path)
		}
		url, mediaID := "", ""
		if hasID {
			id, ok := obj["mediaId"].(string)
			if !ok || !mediaIDPattern.MatchString(id) {
				return nil, unsupported("%s.mediaId must be a media id from media.finish (16 to 64 letters, digits, _ or -)", path)
			}
			mediaID = id
		} else {
			u, ok := obj["url"].(string)
			if !ok {
				return nil, unsupported("%s.url must be a string", path)
			}
			if problem := mediaURLProblem(u); problem != "" {
				return nil, unsupported("%s.url %s", path, problem)
			}
			url = u
		}
		if shape == "image" {
			alt, has := obj["alt"]
			text, isString := alt.(string)
			if has && (!isString || utf8.RuneCountInString(text) > 200) {
				return nil, unsupported("%s.alt must be a string of at most 200 characters", path)
			}
			return wire.MessagePartImage{Type: "image", URL: url, MediaID: mediaID, Alt: text}, nil
		}
		name, has := obj["fileName"]
		text, isString := name.(string)
		if has && (!isString || !nonBlank(text, 255)) {
			return nil, unsupported("%s.fileName must be 1 to 255 characters, not blank, without control characters", path)
		}
		return wire.MessagePartFile{Type: "file", URL: url, MediaID: mediaID, FileName: text}, nil
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

// parseOutgoing checks the JSON shape of an outgoing message {format?, parts, keyboard?}; format defaults
// to text. A keyboard comes back as the WithKeyboard part at the end of the parts.
func parseOutgoing(v any) (string, []Part, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return "", nil, messageError(wire.CodeMessageEmpty, nil, fmt.Sprintf(`the message must be an object {"format"?, "parts": [...]}, not %s`, describe(v)))
	}
	list, ok := obj["parts"].([]any)
	if !ok {
		return "", nil, messageError(wire.CodeMessageEmpty, nil, `"parts" must be an array of parts`)
	}
	parts := make([]Part, 0, len(list)+1)
	for i, raw := range list {
		p, err := parsePart(raw, fmt.Sprintf("parts[%d]", i), 0)
		if err != nil {
			return "", nil, err
		}
		parts = append(parts, p)
	}
	for key := range obj {
		if key != "format" && key != "parts" && key != "keyboard" {
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
	if raw, has := obj["keyboard"]; has {
		k, err := parseKeyboard(raw)
		if err != nil {
			return "", nil, err
		}
		parts = append(parts, keyboardOption{wire.MessagePartComposite{Type: "composite"}, k})
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
	media          int
	keyboard       *wire.Keyboard
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
		case wire.MessagePartImage, wire.MessagePartFile:
			kind, url, mediaID := "file", "", ""
			if image, ok := v.(wire.MessagePartImage); ok {
				kind, url, mediaID = "image", image.URL, image.MediaID
			} else {
				url, mediaID = v.(wire.MessagePartFile).URL, v.(wire.MessagePartFile).MediaID
			}
			if problem := mediaSourceProblem(url, mediaID); problem != "" {
				return messageError(wire.CodeMessagePartUnsupported, f.target, fmt.Sprintf("the %s part %s", kind, problem))
			}
			// A file separates the text around it: a provider may send the two apart.
			f.flush()
			f.out = append(f.out, v)
			f.media++
		case keyboardOption:
			if f.keyboard != nil {
				return messageError(wire.CodeMessageKeyboardInvalid, f.target, "the message has two keyboards; pass WithKeyboard once")
			}
			f.keyboard = v.keyboard
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

// normalize applies the host's normalisation (v2.md 7.2) to typed parts; the keyboard (WithKeyboard) comes
// back normalised, or nil.
func normalize(format string, parts []Part, target *wire.Target) (wire.MessagePartList, *wire.Keyboard, error) {
	f := &flattener{markdown: format == "markdown", target: target, out: wire.MessagePartList{}}
	if err := f.add(parts, 0); err != nil {
		return nil, nil, err
	}
	f.flush()
	if !f.hasMention && f.media == 0 {
		blank := true
		for _, p := range f.out {
			if t, ok := p.(wire.MessagePartText); ok && !blankText(t.Text) {
				blank = false
			}
		}
		if blank {
			return nil, nil, messageError(wire.CodeMessageEmpty, target, "")
		}
	}
	if f.media > wire.LimitMaxMediaParts {
		return nil, nil, messageError(wire.CodeMessageMediaTooMany, target,
			fmt.Sprintf("it has %d image or file parts; a message takes at most %d. Send one message per file", f.media, wire.LimitMaxMediaParts))
	}
	if len(f.out) > wire.LimitMaxMessageParts {
		return nil, nil, messageError(wire.CodeMessagePartsTooMany, target, fmt.Sprintf("it has %d parts after merging adjacent text", len(f.out)))
	}
	if f.keyboard == nil {
		return f.out, nil, nil
	}
	keyboard, err := normalizeKeyboard(f.keyboard, format, target)
	if err != nil {
		return nil, nil, err
	}
	return f.out, keyboard, nil
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
func renderQQBot(format string, parts wire.MessagePartList, keyboard *wire.Keyboard, target wire.Target) (map[string]any, error) {
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
	var image map[string]any
	for i, p := range parts {
		switch v := p.(type) {
		case wire.MessagePartFile:
			return nil, messageError(wire.CodeMessagePartUnsupportedTarget, &t,
				fmt.Sprintf("parts[%d] is a file; QQ Bot's upload endpoint takes no files yet (file_type 4). Send a link to it in a text part", i))
		case wire.MessagePartImage:
			if target.Type != "group" && target.Type != "user" {
				return nil, messageError(wire.CodeMessagePartUnsupportedTarget, &t,
					fmt.Sprintf("parts[%d] is an image and the target is of type %q; the host sends images to QQ groups and one-to-one chats only", i, target.Type))
			}
			if v.MediaID != "" {
				image = map[string]any{"file_type": 1, "media_id": v.MediaID}
			} else {
				image = map[string]any{"file_type": 1, "url": v.URL}
			}
			continue
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
	if image != nil {
		if keyboard != nil {
			return nil, messageError(wire.CodeMessageKeyboardUnsupportedFormat, &t,
				"the message has an image and a keyboard; QQ Bot shows buttons only under Markdown. Send the buttons in a Markdown message of their own")
		}
		if text == "" {
			text = " " // the platform wants a non-empty content with msg_type 7
		}
		return map[string]any{"msg_type": 7, "content": text, "media": image}, nil
	}
	if !markdown {
		return map[string]any{"msg_type": 0, "content": text}, nil
	}
	body := map[string]any{"msg_type": 2, "markdown": map[string]any{"content": text}}
	if keyboard != nil {
		body["keyboard"] = map[string]any{"content": map[string]any{"rows": qqKeyboardRows(keyboard)}}
	}
	return body, nil
}

// qqKeyboardRows is a normalised keyboard as QQ Bot's rows of buttons (action type 0 link, 1 callback,
// 2 command); everyone may click every button.
func qqKeyboardRows(k *wire.Keyboard) []any {
	rows := make([]any, len(k.Rows))
	for r, row := range k.Rows {
		buttons := make([]any, len(row.Buttons))
		for c, b := range row.Buttons {
			style := 0
			if b.GetStyle() == "primary" {
				style = 1
			}
			action := map[string]any{
				"type":           map[string]int{"link": 0, "callback": 1, "command": 2}[b.Action],
				"data":           b.Data,
				"permission":     map[string]any{"type": 2},
				"unsupport_tips": b.Label,
			}
			if b.Action == "command" {
				action["enter"] = b.Send
			}
			buttons[c] = map[string]any{
				"id":          b.ID,
				"render_data": map[string]any{"label": b.Label, "visited_label": b.Label, "style": style},
				"action":      action,
			}
		}
		rows[r] = map[string]any{"buttons": buttons}
	}
	return rows
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
