package hostsdk

import (
	"fmt"
	"unicode/utf8"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// The event types other than message.created (docs/protocol/v2.md 5.4): a click on a callback button,
// the bot added to or removed from a conversation, a conversation opened. The host delivers them with
// events.deliver (stdio) or POST /host/plugin/events/deliver (HTTP), only to plugins whose manifest
// subscribes to them; the SDK runs them through the same admission, ACK and completion as a message.

// EventHandler handles one event of another type than message.created. Returning an error reports it as
// the event's failure, as for a Handler.
type EventHandler func(ctx *EventContext) error

// EventContext is what OnInteraction, OnBotAdded, OnBotRemoved and OnConversationOpened handlers receive:
// a context.Context cancelled like a message handler's, with the event, replies in its conversation, the
// log, the settings and the decision, and no command or message accessors.
type EventContext struct {
	Lifecycle
	inner *Context
	event *wire.ChatEvent
}

// Event is the event exactly as the host sent it.
func (c *EventContext) Event() *wire.ChatEvent { return c.event }

// EventType is "interaction.created", "bot.added", "bot.removed" or "conversation.opened".
func (c *EventContext) EventType() string { return c.event.EventType }

// Sender is who clicked, added or removed the bot, or opened the conversation; nil when the provider
// does not say (a click always has one).
func (c *EventContext) Sender() *wire.UserRef { return c.event.Sender }

// Interaction is the click of an interaction.created event ({id, data, buttonId?, messageId?}), else nil.
func (c *EventContext) Interaction() *wire.Interaction { return c.event.Interaction }

// Data is the callback data of the clicked button ("" for other event types).
func (c *EventContext) Data() string {
	if c.event.Interaction == nil {
		return ""
	}
	return c.event.Interaction.Data
}

// CanReply reports whether the event says where a reply goes (messageReference): always for a click,
// never for bot.removed.
func (c *EventContext) CanReply() bool { return c.event.MessageReference != nil }

// Reply replies in the event's conversation in text format (see Context.Reply). An event without a
// messageReference (bot.removed) takes no reply: message.reference.unavailable.
func (c *EventContext) Reply(parts ...Part) (*wire.SendResult, error) {
	return c.replyAs("text", parts)
}

// ReplyMarkdown replies in Markdown (groups only); pass WithKeyboard(k) among the parts for buttons.
func (c *EventContext) ReplyMarkdown(parts ...Part) (*wire.SendResult, error) {
	return c.replyAs("markdown", parts)
}

// ReplyText replies with one text part.
func (c *EventContext) ReplyText(format string, args ...any) (*wire.SendResult, error) {
	return c.Reply(Text(fmt.Sprintf(format, args...)))
}

func (c *EventContext) replyAs(format string, parts []Part) (*wire.SendResult, error) {
	if c.event.MessageReference == nil {
		return nil, messageError(wire.CodeMessageReferenceUnavailable, nil,
			fmt.Sprintf("the %s event %s takes no reply (it has no messageReference); do not reply to it", c.event.EventType, c.event.EventID))
	}
	return c.inner.replyAs(format, parts)
}

// To is a sender to any target from this handler (needs messages.send), as the bot that received the event.
func (c *EventContext) To(target wire.Target) *Sender { return c.inner.To(target) }

// Group is a sender to a group from this handler.
func (c *EventContext) Group(id string) *Sender { return c.inner.Group(id) }

// User is a sender to a one-to-one chat from this handler.
func (c *EventContext) User(id string) *Sender { return c.inner.User(id) }

// Channel is a sender to a channel from this handler.
func (c *EventContext) Channel(id string) *Sender { return c.inner.Channel(id) }

// Direct is a sender to a guild direct message from this handler.
func (c *EventContext) Direct(id string) *Sender { return c.inner.Direct(id) }

// Intercept stops the event from reaching the plugins after this one (needs plugin.Intercepts()).
func (c *EventContext) Intercept() error { return c.inner.Intercept() }

// Pass lets the event go on to the plugins after this one, as early as the handler knows it.
func (c *EventContext) Pass() error { return c.inner.Pass() }

// OnInteraction sets the handler of interaction.created: a user clicked a callback button of a keyboard
// the plugin sent (ctx.Data() is the button's data). The manifest must subscribe to
// "interaction.created"; it panics with SDK_DEFINITION_INVALID otherwise.
func (p *Plugin) OnInteraction(h EventHandler) *Plugin {
	return p.onEvent("interaction.created", "OnInteraction", h)
}

// OnBotAdded sets the handler of bot.added: the bot was added to a group, or a user added it as a friend.
// The manifest must subscribe to "bot.added".
func (p *Plugin) OnBotAdded(h EventHandler) *Plugin { return p.onEvent("bot.added", "OnBotAdded", h) }

// OnBotRemoved sets the handler of bot.removed: the bot was removed from a group, or a user removed it.
// The event takes no reply. The manifest must subscribe to "bot.removed".
func (p *Plugin) OnBotRemoved(h EventHandler) *Plugin {
	return p.onEvent("bot.removed", "OnBotRemoved", h)
}

// OnConversationOpened sets the handler of conversation.opened: a conversation accepts the bot's messages
// again. The manifest must subscribe to "conversation.opened".
func (p *Plugin) OnConversationOpened(h EventHandler) *Plugin {
	return p.onEvent("conversation.opened", "OnConversationOpened", h)
}

func (p *Plugin) onEvent(eventType, what string, h EventHandler) *Plugin {
	if h == nil {
		panic(sdkError(wire.ErrSDKDefinitionInvalid, "%s: the handler is nil", what))
	}
	if p.manifest != nil {
		subscribed := false
		for _, s := range p.manifest.EventSubscriptions {
			subscribed = subscribed || s.EventType == eventType
		}
		if !subscribed {
			panic(sdkError(wire.ErrSDKDefinitionInvalid,
				"%s handles %q, which manifest.json does not subscribe to, so the host would never send it; add {\"eventType\": %q} to \"eventSubscriptions\"",
				what, eventType, eventType))
		}
	}
	if p.events == nil {
		p.events = map[string]EventHandler{}
	}
	p.events[eventType] = h
	return p
}

// chatHandler is the Handler that runs the handler of event's type with an EventContext, and the message
// envelope the runtimes carry for it (its id, bot, conversation and reference), or nil when no handler
// takes the type (the SDK declines the event).
func (p *Plugin) chatHandler(event *wire.ChatEvent) (Handler, *wire.MessageEvent) {
	h := p.events[event.EventType]
	if h == nil {
		return nil, nil
	}
	envelope := &wire.MessageEvent{
		EventID: event.EventID, EventType: event.EventType, Timestamp: event.Timestamp, Source: event.Source,
		Bot: event.Bot, Conversation: event.Conversation,
	}
	if event.Sender != nil {
		envelope.Sender = *event.Sender
	}
	if event.MessageReference != nil {
		envelope.MessageReference = *event.MessageReference
	}
	run := func(ctx *Context) error {
		return h(&EventContext{
			Lifecycle: Lifecycle{Context: ctx.Context, s: ctx.s, logWrite: ctx.logWrite, settings: ctx.settings},
			inner:     ctx,
			event:     event,
		})
	}
	return run, envelope
}

// describeEvent names an event in log lines: a command, a message or another type.
func describeEvent(event *wire.MessageEvent) string {
	switch {
	case event.EventType != "" && event.EventType != "message.created":
		return event.EventType + " event"
	case event.Command != nil:
		return fmt.Sprintf("command %q", event.Command.Name)
	default:
		return "message"
	}
}

// decodeChatEvent checks an event of another type (an HTTP body) against the events.deliver params and
// decodes it.
func decodeChatEvent(raw []byte, v *wire.ChatEvent) []Issue {
	if !utf8.Valid(raw) {
		return []Issue{{"event.field.invalid", "", "the event is not valid UTF-8"}}
	}
	if err := checkSyntax(raw); err != nil {
		return []Issue{{"event.field.invalid", "", "the event is not JSON: " + err.Error()}}
	}
	return decodeChecked(raw, methodSchema(wire.MethodEventsDeliver, "params"), v, "event")
}
