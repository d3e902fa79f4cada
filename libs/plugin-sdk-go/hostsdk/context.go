package hostsdk

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// Transport names which runtime runs the plugin.
type Transport string

// The transports.
const (
	TransportStdio Transport = "stdio"
	TransportHTTP  Transport = "http"
)

// Settings are the plugin's settings values (secrets included), as the host sends them.
type Settings map[string]any

// String is the value of key when it is a string, else "".
func (s Settings) String(key string) string {
	v, _ := s[key].(string)
	return v
}

// Number is the value of key when it is a number, else 0.
func (s Settings) Number(key string) float64 {
	v, _ := s[key].(float64)
	return v
}

// Bool is the value of key when it is a boolean, else false.
func (s Settings) Bool(key string) bool {
	v, _ := s[key].(bool)
	return v
}

// Directories are the folders the host gives a stdio plugin: the package folder (read-only by
// convention) and the data, config and cache folders, which survive updates.
type Directories = wire.HostInitializeParamsDirectories

// transport is how a prepared message leaves the process.
type transport interface {
	kind() Transport
	reply(ctx context.Context, event *wire.MessageEvent, message wire.OutgoingMessage, target wire.Target) (*wire.SendResult, error)
	send(ctx context.Context, event *wire.MessageEvent, target wire.Target, message wire.OutgoingMessage) (*wire.SendResult, error)
	log(level LogLevel, message string, fields map[string]any)
}

// session is what a runtime knows about the running plugin, shared by all its contexts.
type session struct {
	plugin      *Plugin
	io          transport
	mu          sync.RWMutex
	settings    Settings
	directories *Directories
}

func (s *session) currentSettings() Settings {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.settings
}

// Lifecycle is what OnStart, OnStop and OnSettingsChanged receive. Its context.Context is cancelled
// when the plugin stops or loses its host.
type Lifecycle struct {
	context.Context
	s *session
	// logWrite is where the lines of Log() go; the Logger itself is made at the first Log() call, so a
	// handler that does not log costs no logger.
	logWrite func(level LogLevel, message string, fields map[string]any)
	logger   atomic.Pointer[Logger]
	// settings is set for OnSettingsChanged: the new values.
	settings Settings
}

func newLifecycle(ctx context.Context, s *session) *Lifecycle {
	return &Lifecycle{Context: ctx, s: s, logWrite: s.io.log}
}

// PluginID is the plugin's id.
func (c *Lifecycle) PluginID() string { return c.s.plugin.pluginID }

// Transport says which runtime runs the plugin.
func (c *Lifecycle) Transport() Transport { return c.s.io.kind() }

// Settings are the current settings values (for OnSettingsChanged: the new ones).
func (c *Lifecycle) Settings() Settings {
	if c.settings != nil {
		return c.settings
	}
	return c.s.currentSettings()
}

// Directories are the plugin's folders (nil over HTTP).
func (c *Lifecycle) Directories() *Directories { return c.s.directories }

// Log writes to the plugin log.
func (c *Lifecycle) Log() *Logger {
	if l := c.logger.Load(); l != nil {
		return l
	}
	c.logger.CompareAndSwap(nil, newLogger(c.logWrite))
	return c.logger.Load()
}

// Group is a sender to a group (text or Markdown); it needs the messages.send permission.
func (c *Lifecycle) Group(id string) *Sender { return c.To(wire.Target{Type: "group", ID: id}) }

// User is a sender to a one-to-one chat with a user.
func (c *Lifecycle) User(id string) *Sender { return c.To(wire.Target{Type: "user", ID: id}) }

// Channel is a sender to a channel.
func (c *Lifecycle) Channel(id string) *Sender { return c.To(wire.Target{Type: "channel", ID: id}) }

// Direct is a sender to a guild direct message.
func (c *Lifecycle) Direct(id string) *Sender { return c.To(wire.Target{Type: "direct", ID: id}) }

// To is a sender to any target. Outside a handler a host with several bots needs target.BotAccountID
// (message.target.bot_required otherwise).
func (c *Lifecycle) To(target wire.Target) *Sender {
	return &Sender{ctx: c.Context, s: c.s, target: target}
}

// Sender sends messages the plugin starts itself (not replies) to one target.
type Sender struct {
	ctx    context.Context
	s      *session
	event  *wire.MessageEvent
	target wire.Target
}

// Target is where the sender sends.
func (x *Sender) Target() wire.Target { return x.target }

// WithContext is a copy of the sender whose sends honour ctx instead of the context it came from (the
// handler's or the lifecycle's): a send gives up when ctx ends. Derive ctx from the handler's context
// (context.WithTimeout(ctx, ...)) to keep the event's cancellation as well.
func (x *Sender) WithContext(ctx context.Context) *Sender {
	c := *x
	c.ctx = ctx
	return &c
}

// Send sends a text message. It returns when the host accepted it, or when the sender's context (the
// handler's, the lifecycle's or the one of WithContext) ends first: then, and when that context has ended
// already (nothing is sent), the error is an *SDKError SDK_EVENT_CANCELLED wrapping ctx.Err().
func (x *Sender) Send(parts ...Part) (*wire.SendResult, error) { return x.sendAs("text", parts) }

// SendMarkdown sends a Markdown message (groups only: message.format.unsupported_target otherwise).
func (x *Sender) SendMarkdown(parts ...Part) (*wire.SendResult, error) {
	return x.sendAs("markdown", parts)
}

func (x *Sender) sendAs(format string, parts []Part) (*wire.SendResult, error) {
	target := x.target
	// Inside a handler a send speaks as the bot that received the event unless the target names one (v2.md 4.7).
	if x.event != nil && target.BotAccountID == "" {
		target.BotAccountID = x.event.Bot.BotAccountID
	}
	msg, err := prepare(x.s.plugin, format, parts, target, wire.PermissionMessagesSend)
	if err != nil {
		return nil, err
	}
	return x.s.io.send(x.ctx, x.event, target, msg)
}

// prepare checks a message the way the host will (target, permission, parts, format, mentions), so a
// mistake surfaces in the handler that made it.
func prepare(p *Plugin, format string, parts []Part, target wire.Target, need string) (wire.OutgoingMessage, error) {
	t := target
	switch target.Type {
	case "group", "channel", "user", "direct":
	default:
		return wire.OutgoingMessage{}, messageError(wire.CodeMessageTargetInvalid, &t, fmt.Sprintf("target type %q is not group, channel, user or direct", target.Type))
	}
	if target.ID == "" {
		return wire.OutgoingMessage{}, messageError(wire.CodeMessageTargetInvalid, &t, "the target id is empty; use a target taken from an event")
	}
	if utf8.RuneCountInString(target.BotAccountID) > 256 {
		return wire.OutgoingMessage{}, messageError(wire.CodeMessageTargetInvalid, &t, "the target's botAccountId is longer than 256 characters; use bot.botAccountId of an event")
	}
	if !p.hasPermission(need) {
		return wire.OutgoingMessage{}, messageError(wire.CodeMessagePermissionDenied, &t,
			fmt.Sprintf("this needs the %q permission, which manifest.json does not declare; add it to \"permissions\" and reinstall the plugin", need))
	}
	normalized, keyboard, err := normalize(format, parts, &t)
	if err != nil {
		return wire.OutgoingMessage{}, err
	}
	if format == "markdown" && target.Type != "group" {
		return wire.OutgoingMessage{}, messageError(wire.CodeMessageFormatUnsupportedTarget, &t,
			fmt.Sprintf("Markdown goes only to groups, not to a %s; use Reply/Send (text) here", target.Type))
	}
	for _, part := range normalized {
		_, user := part.(wire.MessagePartMentionUser)
		_, everyone := part.(wire.MessagePartMentionEveryone)
		if (user || everyone) && (target.Type == "user" || target.Type == "direct") {
			return wire.OutgoingMessage{}, messageError(wire.CodeMessageMentionUnsupportedTarget, &t, "")
		}
		if everyone && !p.hasPermission(wire.PermissionMessagesMentionEveryone) {
			return wire.OutgoingMessage{}, messageError(wire.CodeMessagePermissionDenied, &t,
				"AtEveryone needs the \"messages.mentionEveryone\" permission, which manifest.json does not declare; add it or remove the mention")
		}
		if everyone && format != "markdown" {
			return wire.OutgoingMessage{}, messageError(wire.CodeMessageMentionUnsupportedFormat, &t,
				"AtEveryone notifies members only in Markdown; in text QQ shows the plain words \"@everyone\". Use ReplyMarkdown or SendMarkdown to a group")
		}
	}
	for i, part := range normalized {
		if _, file := part.(wire.MessagePartFile); file {
			return wire.OutgoingMessage{}, messageError(wire.CodeMessagePartUnsupportedTarget, &t,
				fmt.Sprintf("parts[%d] is a file; QQ Bot's upload endpoint takes no files yet. Send a link to it in a text part", i))
		}
		if _, image := part.(wire.MessagePartImage); image && target.Type != "group" && target.Type != "user" {
			return wire.OutgoingMessage{}, messageError(wire.CodeMessagePartUnsupportedTarget, &t,
				fmt.Sprintf("parts[%d] is an image and the target is of type %q; images go to QQ groups and one-to-one chats only", i, target.Type))
		}
		if _, image := part.(wire.MessagePartImage); image && keyboard != nil {
			return wire.OutgoingMessage{}, messageError(wire.CodeMessageKeyboardUnsupportedFormat, &t,
				"the message has an image and a keyboard; QQ Bot shows buttons only under Markdown. Send the buttons in a Markdown message of their own")
		}
	}
	return wire.OutgoingMessage{Format: &format, Parts: normalized, Keyboard: keyboard}, nil
}

// Context is what a message or command handler receives. It is a context.Context: it is cancelled when
// the host cancels the event (events.cancel), when the handler deadline passes, or when the plugin stops
// or loses its host; context.Cause(ctx) is then an *SDKError SDK_EVENT_CANCELLED (or the stop reason).
// Pass it to slow work (http.NewRequestWithContext) and return soon after it is done.
type Context struct {
	Lifecycle
	event *wire.MessageEvent

	mu       sync.Mutex
	decided  bool
	decision bool
	onDecide func(intercepted bool)
}

// Event is the message event exactly as the host sent it.
func (c *Context) Event() *wire.MessageEvent { return c.event }

// Sender is the user who wrote the message.
func (c *Context) Sender() wire.UserRef { return c.event.Sender }

// Command is the command the host matched, or nil.
func (c *Context) Command() *wire.CommandMatch { return c.event.Command }

// Args is the text after the command word ("" without a command).
func (c *Context) Args() string {
	if c.event.Command == nil {
		return ""
	}
	return c.event.Command.Args
}

// Text is the message's text as the user wrote it (with the command word; Args is the text after it).
func (c *Context) Text() string { return c.event.Message.Content }

// Content is the message's text.
//
// Deprecated: use Text.
func (c *Context) Content() string { return c.Text() }

// Reply replies in the event's conversation in text format; it returns when the host accepted the
// message (stdio) or added it to the response (HTTP). A refused message is a *MessageError. Over stdio it
// honours the handler's context: when the context ends before the host answers (events.cancel, the
// handler deadline, plugin.stop), and when it has ended already (nothing is sent), the error is an
// *SDKError SDK_EVENT_CANCELLED that wraps ctx.Err() (errors.Is(err, context.Canceled); IsCancelled).
func (c *Context) Reply(parts ...Part) (*wire.SendResult, error) { return c.replyAs("text", parts) }

// ReplyMarkdown replies in Markdown (groups only): mentions become provider tags, Literal text is
// escaped.
func (c *Context) ReplyMarkdown(parts ...Part) (*wire.SendResult, error) {
	return c.replyAs("markdown", parts)
}

// ReplyText replies with one text part.
func (c *Context) ReplyText(format string, args ...any) (*wire.SendResult, error) {
	return c.Reply(Text(fmt.Sprintf(format, args...)))
}

func (c *Context) replyAs(format string, parts []Part) (*wire.SendResult, error) {
	ref := c.event.MessageReference
	target := wire.Target{Type: ref.TargetType, ID: ref.TargetID}
	if ref.ReplyUntil != "" {
		if until, err := time.Parse(time.RFC3339Nano, ref.ReplyUntil); err == nil && until.Before(time.Now()) {
			return nil, messageError(wire.CodeMessageReferenceExpired, &target,
				fmt.Sprintf("the reply window of this message closed at %s; reply sooner, or send a new message with ctx.To(target).Send(...) (needs messages.send)", ref.ReplyUntil))
		}
	}
	msg, err := prepare(c.s.plugin, format, parts, target, wire.PermissionMessagesReply)
	if err != nil {
		return nil, err
	}
	return c.s.io.reply(c.Context, c.event, msg, target)
}

// To is a sender to any target from this handler (needs messages.send). A target without BotAccountID is
// sent by the bot that received the event; set it to send as another bot.
func (c *Context) To(target wire.Target) *Sender {
	return &Sender{ctx: c.Context, s: c.s, event: c.event, target: target}
}

// Group is a sender to a group from this handler.
func (c *Context) Group(id string) *Sender { return c.To(wire.Target{Type: "group", ID: id}) }

// User is a sender to a one-to-one chat from this handler.
func (c *Context) User(id string) *Sender { return c.To(wire.Target{Type: "user", ID: id}) }

// Channel is a sender to a channel from this handler.
func (c *Context) Channel(id string) *Sender { return c.To(wire.Target{Type: "channel", ID: id}) }

// Direct is a sender to a guild direct message from this handler.
func (c *Context) Direct(id string) *Sender { return c.To(wire.Target{Type: "direct", ID: id}) }

// Intercept decides that the plugins after this one do not receive the event. It needs Intercepts() on
// the plugin; on stdio the decision goes to the host at once and the handler keeps running.
func (c *Context) Intercept() error {
	if !c.s.plugin.intercepts {
		return sdkError(wire.ErrSDKInterceptUndeclared, "ctx.Intercept() needs plugin.Intercepts()")
	}
	return c.decide(true)
}

// Pass decides, as early as the handler knows it, that the event goes on to the plugins after this one.
func (c *Context) Pass() error {
	if !c.s.plugin.intercepts {
		return nil // a plugin that cannot intercept passed on admission
	}
	return c.decide(false)
}

func (c *Context) decide(intercepted bool) error {
	c.mu.Lock()
	if c.decided {
		same := c.decision == intercepted
		c.mu.Unlock()
		if same {
			return nil
		}
		return sdkError(wire.ErrSDKDecisionConflict, "intercept and pass were both called for event %s", c.event.EventID)
	}
	c.decided = true
	c.decision = intercepted
	c.mu.Unlock()
	if c.onDecide != nil {
		c.onDecide(intercepted)
	}
	return nil
}

func (c *Context) decisionState() (bool, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.decided, c.decision
}

// errEventCancelled is the cancellation cause of an event the host cancelled or whose deadline passed.
func errEventCancelled(eventID, reason string) error {
	return &SDKError{Code: wire.ErrSDKEventCancelled, Detail: fmt.Sprintf("event %s was cancelled (%s)", eventID, reason)}
}

// IsCancelled reports whether err is (or wraps) an event cancellation.
func IsCancelled(err error) bool {
	var se *SDKError
	return errors.Is(err, context.Canceled) || (errors.As(err, &se) && se.Code == wire.ErrSDKEventCancelled)
}

// runHandler runs h with panic recovery; a panic is the handler's failure.
func runHandler(h Handler, ctx *Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return h(ctx)
}
