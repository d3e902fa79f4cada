package hostsdk

import (
	"strings"

	"plugin-host.dev/sdk-go/hostsdk/wire"
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

// normalize flattens composites, merges adjacent text parts of the same kind and checks the parts the way
// the host does before rendering (docs/protocol/v2.md 7.2).
func normalize(parts []Part, target *wire.Target) (wire.MessagePartList, error) {
	out := wire.MessagePartList{}
	var walk func(list []Part, depth int) error
	walk = func(list []Part, depth int) error {
		for _, p := range list {
			switch v := p.(type) {
			case wire.MessagePartText:
				if last, ok := lastText(out); ok && last.Literal == v.Literal {
					last.Text += v.Text
					out[len(out)-1] = last
				} else {
					out = append(out, wire.MessagePartText{Type: "text", Text: v.Text, Literal: v.Literal})
				}
			case wire.MessagePartMentionUser:
				if strings.TrimSpace(v.ID) == "" || strings.ContainsAny(v.ID, "<>\"\x00\r\n\t") {
					return messageError(wire.CodeMessageMentionInvalidID, target, "")
				}
				out = append(out, v)
			case wire.MessagePartMentionEveryone:
				out = append(out, v)
			case mentionGroup:
				if v.users < 1 || v.users > wire.LimitMaxMentionUsers {
					return messageError(wire.CodeMessageMentionTooMany, target, "")
				}
				if err := walk(v.Parts, depth+1); err != nil {
					return err
				}
			case wire.MessagePartComposite:
				if depth >= maxCompositeDepth {
					return messageError(wire.CodeMessagePartUnsupported, target, "composites nest more than 8 levels deep; flatten the message")
				}
				if err := walk(v.Parts, depth+1); err != nil {
					return err
				}
			default:
				return messageError(wire.CodeMessagePartUnsupported, target, "")
			}
		}
		return nil
	}
	if err := walk(parts, 0); err != nil {
		return nil, err
	}
	empty := true
	for _, p := range out {
		if t, ok := p.(wire.MessagePartText); !ok || strings.TrimSpace(t.Text) != "" {
			empty = false
		}
	}
	if empty {
		return nil, messageError(wire.CodeMessageEmpty, target, "")
	}
	if len(out) > wire.LimitMaxMessageParts {
		return nil, messageError(wire.CodeMessagePartsTooMany, target, "")
	}
	return out, nil
}

func lastText(list wire.MessagePartList) (wire.MessagePartText, bool) {
	if len(list) == 0 {
		return wire.MessagePartText{}, false
	}
	t, ok := list[len(list)-1].(wire.MessagePartText)
	return t, ok
}
