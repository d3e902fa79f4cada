package hostsdk

import (
	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// Part is one part of an outgoing message: build it with Text, Literal, AtUser, AtUserID, AtUsers,
// AtEveryone or Composite.
type Part = wire.MessagePart

// Text is a text part. It is never read as provider markup, so it cannot forge a mention; in a Markdown
// message its Markdown syntax is the plugin's own formatting.
func Text(text string) Part { return wire.MessagePartText{Type: "text", Text: text} }

// Literal is text shown exactly as written: in a Markdown message its Markdown syntax is escaped. Use it
// for text that comes from users (command arguments, stored notes).
func Literal(text string) Part {
	return wire.MessagePartText{Type: "text", Text: text, Literal: true}
}

// AtUser mentions a user of an event (the sender, or one of message.mentions).
func AtUser(user wire.UserRef) Part {
	return wire.MessagePartMentionUser{Type: "mention", Target: "user", ID: user.MentionID, DisplayName: user.DisplayName}
}

// AtUserID mentions a user by a mentionId taken from an event.
func AtUserID(mentionID, displayName string) Part {
	return wire.MessagePartMentionUser{Type: "mention", Target: "user", ID: mentionID, DisplayName: displayName}
}

// AtUsers mentions 1 to wire.LimitMaxMentionUsers users, separated by spaces. More or fewer is refused
// with message.mention.too_many when the message is sent.
func AtUsers(users ...wire.UserRef) Part {
	parts := make(wire.MessagePartList, 0, 2*len(users))
	for i, u := range users {
		if i > 0 {
			parts = append(parts, Text(" "))
		}
		parts = append(parts, AtUser(u))
	}
	return mentionGroup{wire.MessagePartComposite{Type: "composite", Parts: parts}, len(users)}
}

// AtEveryone mentions everyone; it needs the messages.mentionEveryone permission.
func AtEveryone() Part {
	return wire.MessagePartMentionEveryone{Type: "mention", Target: "everyone"}
}

// Composite groups parts; composites are flattened before sending.
func Composite(parts ...Part) Part {
	return wire.MessagePartComposite{Type: "composite", Parts: wire.MessagePartList(parts)}
}

// mentionGroup is the composite AtUsers builds, remembering how many users it names.
type mentionGroup struct {
	wire.MessagePartComposite
	users int
}

const maxCompositeDepth = 8

// ImageFromURL is an image the host has the provider fetch from url, an absolute http or https URL of at
// most wire.LimitMaxMediaURLChars characters (QQ Bot: PNG or JPEG, to groups and one-to-one chats). Set
// Alt for the text shown where the image cannot be. A message takes at most wire.LimitMaxMediaParts image
// or file; a URL that is not http(s) is refused with message.part.unsupported when the message is sent.
func ImageFromURL(url string) wire.MessagePartImage {
	return wire.MessagePartImage{Type: "image", URL: url}
}

// FileFromURL is a file the host has the provider fetch from url (rules as ImageFromURL). Set FileName for
// the name the recipient sees. QQ Bot takes no files yet (message.part.unsupported_target).
func FileFromURL(url string) wire.MessagePartFile {
	return wire.MessagePartFile{Type: "file", URL: url}
}

// ImageFromMedia is an image of bytes this plugin uploaded: mediaID is Media.MediaID from UploadMedia
// (uploaded with an image type, message.media.type_mismatch otherwise). The host refuses an id that is not
// this plugin's or has expired with message.media.unknown when the message is sent.
func ImageFromMedia(mediaID string) wire.MessagePartImage {
	return wire.MessagePartImage{Type: "image", MediaID: mediaID}
}

// FileFromMedia is a file of bytes this plugin uploaded (mediaID from UploadMedia); without FileName the
// recipient sees the name given WithFileName.
func FileFromMedia(mediaID string) wire.MessagePartFile {
	return wire.MessagePartFile{Type: "file", MediaID: mediaID}
}

// CallbackButton is a button whose click the plugin gets as interaction.created, with data as
// ctx.Data() (OnInteraction). Set ID to know the button by ctx.Interaction().ButtonID (default "r<row>c<column>").
func CallbackButton(label, data string) wire.Button {
	return wire.Button{Label: label, Action: "callback", Data: data}
}

// LinkButton is a button that opens url (an absolute http or https URL) in the user's client; no event follows.
func LinkButton(label, url string) wire.Button {
	return wire.Button{Label: label, Action: "link", Data: url}
}

// CommandButton is a button that puts text in the user's input box; what the user sends comes back as a
// message event. Set Send to have the client send it at once.
func CommandButton(label, text string) wire.Button {
	return wire.Button{Label: label, Action: "command", Data: text}
}

// Primary is b shown as the keyboard's main choice.
func Primary(b wire.Button) wire.Button {
	style := "primary"
	b.Style = &style
	return b
}

// Keyboard is rows of buttons under a Markdown message: send it with
// ctx.ReplyMarkdown(parts..., WithKeyboard(k)). It is checked when the message is sent, against the
// protocol's limits: 1 to wire.LimitMaxKeyboardRows rows of 1 to wire.LimitMaxKeyboardButtonsPerRow
// buttons (message.keyboard.too_large), unique ids and http(s) links (message.keyboard.invalid); Check
// runs the same check at once.
func Keyboard(rows ...[]wire.Button) wire.Keyboard {
	k := wire.Keyboard{Rows: make([]wire.KeyboardRowsItem, len(rows))}
	for i, row := range rows {
		k.Rows[i] = wire.KeyboardRowsItem{Buttons: row}
	}
	return k
}

// CheckKeyboard checks k as sending it would (the error is a *MessageError).
func CheckKeyboard(k wire.Keyboard) error {
	_, err := normalizeKeyboard(&k, "markdown", nil)
	return err
}

// WithKeyboard puts k under the message it is passed with: ctx.ReplyMarkdown(Text("Vote?"),
// WithKeyboard(k)). It adds no content; a keyboard goes only with Markdown (message.keyboard.unsupported_format).
func WithKeyboard(k wire.Keyboard) Part {
	return keyboardOption{wire.MessagePartComposite{Type: "composite"}, &k}
}

// keyboardOption is the Part WithKeyboard makes: the message's keyboard, no content.
type keyboardOption struct {
	wire.MessagePartComposite
	keyboard *wire.Keyboard
}
