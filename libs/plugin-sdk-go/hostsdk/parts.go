package hostsdk

import (
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
