// Package hostsdktest is a test host for Go plugins: it runs a plugin's real stdio runtime (in this
// process, over pipes) or a built plugin executable, and speaks protocol v2 to it the way the host does:
// handshake, events routed by the manifest's commands, ACKs and completions, replies and sends recorded,
// uploads checked and kept (Uploads), cancel, ping, settings and stop.
package hostsdktest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"plugin-host.dev/sdk-go/v2/hostsdk"
	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// Options configure a test host.
type Options struct {
	// Settings are sent in host.initialize.
	Settings map[string]any
	// Runtime limits sent in host.initialize (defaults of the protocol where zero).
	MaxConcurrentEvents int64
	QueueCapacity       int64
	HandlerDeadline     time.Duration
	RequestTimeout      time.Duration
	// Directories sent in host.initialize (default: folders under t.TempDir()).
	Directories *hostsdk.Directories
	// Wait bounds every wait of the host (default 5 s).
	Wait time.Duration
	// Refuse, when set, is asked about every plugin-to-host call after the token check; a non-nil answer
	// is sent instead of the host's own (to test how a plugin handles refusals and failures).
	Refuse func(method string, params json.RawMessage) *RPCError
	// MaxChunkBytes is the maxChunkBytes media.upload answers (default wire.LimitMaxMediaChunkBytes).
	MaxChunkBytes int64
}

// Reply is a message the plugin sent: a reply (messages.reply) or a send (messages.send).
type Reply struct {
	Kind    string // "reply" or "send"
	EventID string
	Target  wire.Target
	Format  string
	Parts   wire.MessagePartList
	// Keyboard is the keyboard under the message (normalised by the SDK), or nil.
	Keyboard *wire.Keyboard
}

// Text joins the text parts and writes mentions as @id (for assertions).
func (r Reply) Text() string {
	var b strings.Builder
	for _, p := range r.Parts {
		switch v := p.(type) {
		case wire.MessagePartText:
			b.WriteString(v.Text)
		case wire.MessagePartMentionUser:
			b.WriteString("@" + v.ID)
		case wire.MessagePartMentionEveryone:
			b.WriteString("@everyone")
		}
	}
	return b.String()
}

// LogEntry is a log.write call.
type LogEntry struct {
	Level   string
	Message string
	Fields  map[string]any
	// EventID is the event whose handler wrote the line; empty for the plugin's own lines.
	EventID string
}

// RPCError is an error answer of the plugin.
type RPCError struct {
	Code    int
	Message string
	Data    json.RawMessage
}

func (e *RPCError) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

// Delivery is one events.message: its ACK (or error) and, when accepted, its completion.
type Delivery struct {
	// Event is the message event; for another event type (DeliverEvent) its id, bot, conversation and
	// reference, with the event itself in Chat.
	Event     wire.MessageEvent
	Chat      *wire.ChatEvent
	ack       chan struct{}
	completed chan struct{}
	Ack       *wire.EventAck
	Err       *RPCError
	// Completion is the events.completed params, once they arrived.
	Completion *wire.EventsCompletedParams
}

// Host is a running test host with one plugin process.
type Host struct {
	t        testing.TB
	opts     Options
	manifest *wire.StdioManifest
	token    string
	in       io.WriteCloser // the plugin's stdin
	writeMu  sync.Mutex
	exited   chan int
	exitCode int

	mu         sync.Mutex
	nextID     int64
	pending    map[string]chan *rpcAnswer
	deliveries map[string]*Delivery
	replies    []Reply
	logs       []LogEntry
	media      mediaStore
	seq        int
	// Init is the handshake answer.
	Init wire.HostInitializeResult
}

type rpcAnswer struct {
	result json.RawMessage
	err    *RPCError
}

// Start runs plugin's stdio runtime in this process, performs the handshake and returns the host. The
// plugin is stopped (stdin closed) when the test ends.
func Start(t testing.TB, plugin *hostsdk.Plugin, opts Options) *Host {
	t.Helper()
	toPlugin, pluginIn := io.Pipe()
	fromPlugin, pluginOut := io.Pipe()
	exited := make(chan int, 1)
	go func() {
		code := plugin.RunStdio([]string{wire.StdioFlag}, toPlugin, pluginOut, testWriter{t})
		pluginOut.Close()
		exited <- code
	}()
	return start(t, plugin.Manifest(), plugin.PluginID(), pluginIn, fromPlugin, exited, opts)
}

// StartProcess runs a built plugin executable (with --host-stdio) and performs the handshake.
func StartProcess(t testing.TB, manifest *wire.StdioManifest, path string, args []string, opts Options) *Host {
	t.Helper()
	cmd := exec.Command(path, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = testWriter{t}
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot start %s: %v", path, err)
	}
	exited := make(chan int, 1)
	go func() {
		_ = cmd.Wait()
		exited <- cmd.ProcessState.ExitCode()
	}()
	return start(t, manifest, manifest.PluginID, stdin, stdout, exited, opts)
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("plugin stderr: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func start(t testing.TB, manifest *wire.StdioManifest, pluginID string, in io.WriteCloser, out io.Reader, exited chan int, opts Options) *Host {
	if opts.Wait == 0 {
		opts.Wait = 5 * time.Second
	}
	buf := make([]byte, 24)
	_, _ = rand.Read(buf)
	h := &Host{
		t: t, opts: opts, manifest: manifest, token: hex.EncodeToString(buf), in: in, exited: make(chan int, 1), exitCode: -1,
		pending: map[string]chan *rpcAnswer{}, deliveries: map[string]*Delivery{},
	}
	go func() { h.exited <- <-exited }()
	go h.read(out)
	t.Cleanup(func() { h.Close() })
	dirs := opts.Directories
	if dirs == nil {
		base := t.TempDir()
		dirs = &hostsdk.Directories{PluginDirectory: base + "/package", PluginDataDirectory: base + "/data", PluginConfigDirectory: base + "/config", PluginCacheDirectory: base + "/cache"}
	}
	runtime := wire.RuntimeLimits{}
	set := func(v int64) *int64 {
		if v == 0 {
			return nil
		}
		return &v
	}
	runtime.MaxConcurrentEvents = set(opts.MaxConcurrentEvents)
	runtime.QueueCapacity = set(opts.QueueCapacity)
	runtime.HandlerDeadlineMilliseconds = set(opts.HandlerDeadline.Milliseconds())
	runtime.RequestTimeoutMilliseconds = set(opts.RequestTimeout.Milliseconds())
	settings := opts.Settings
	if settings == nil {
		settings = map[string]any{}
	}
	raw, rpcErr := h.Call(wire.MethodHostInitialize, wire.HostInitializeParams{
		SupportedProtocolVersions: []int64{wire.ProtocolVersion}, InstanceID: "test-instance", PluginID: pluginID, HostVersion: "test",
		Directories: *dirs, Token: h.token, Encoding: "json", Runtime: &runtime, Settings: settings,
	})
	if rpcErr != nil {
		t.Fatalf("host.initialize failed: %v", rpcErr)
	}
	if err := json.Unmarshal(raw, &h.Init); err != nil {
		t.Fatalf("host.initialize answer: %v", err)
	}
	return h
}

// Token is the runtime token the plugin was given.
func (h *Host) Token() string { return h.token }

func (h *Host) write(message any) {
	body, _ := json.Marshal(message)
	h.writeMu.Lock()
	defer h.writeMu.Unlock()
	_, _ = h.in.Write([]byte("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + string(body)))
}

// WriteRaw writes bytes to the plugin's stdin as they are (for framing tests).
func (h *Host) WriteRaw(b []byte) {
	h.writeMu.Lock()
	defer h.writeMu.Unlock()
	_, _ = h.in.Write(b)
}

// CallAsync sends a request; the channel receives the answer.
func (h *Host) CallAsync(method string, params any) <-chan *rpcAnswer {
	h.mu.Lock()
	h.nextID++
	id := h.nextID
	ch := make(chan *rpcAnswer, 1)
	h.pending[strconv.FormatInt(id, 10)] = ch
	h.mu.Unlock()
	h.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return ch
}

// Call sends a request and waits for the answer.
func (h *Host) Call(method string, params any) (json.RawMessage, *RPCError) {
	h.t.Helper()
	select {
	case a := <-h.CallAsync(method, params):
		return a.result, a.err
	case <-time.After(h.opts.Wait):
		h.t.Fatalf("%s: no answer within %s", method, h.opts.Wait)
		return nil, nil
	}
}

func (h *Host) read(out io.Reader) {
	r := newReader(out)
	for {
		msg, err := r.next()
		if err != nil {
			if err != io.EOF {
				h.t.Errorf("the plugin wrote a bad frame: %v", err)
			}
			return
		}
		if msg.Method != "" {
			h.answer(msg)
			continue
		}
		var id int64
		_ = json.Unmarshal(msg.ID, &id)
		h.mu.Lock()
		ch := h.pending[strconv.FormatInt(id, 10)]
		delete(h.pending, strconv.FormatInt(id, 10))
		h.mu.Unlock()
		if ch != nil {
			var e *RPCError
			if msg.Error != nil {
				e = &RPCError{Code: msg.Error.Code, Message: msg.Error.Message, Data: msg.Error.Data}
			}
			ch <- &rpcAnswer{result: msg.Result, err: e}
		}
	}
}

func (h *Host) respond(id json.RawMessage, result any) {
	h.write(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (h *Host) respondError(id json.RawMessage, code int, message string, data any) {
	e := map[string]any{"code": code, "message": message}
	if data != nil {
		e["data"] = data
	}
	h.write(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
}

func (h *Host) permitted(p string) bool {
	if h.manifest == nil {
		return true
	}
	return contains(h.manifest.Permissions, p)
}

// answer handles a plugin-to-host request as the host does: token, params, permission.
func (h *Host) answer(m *frame) {
	var token struct {
		Token string `json:"token"`
	}
	_ = json.Unmarshal(m.Params, &token)
	if token.Token != h.token {
		h.respondError(m.ID, wire.RPCUnauthorized, "wrong or missing token", nil)
		return
	}
	if h.opts.Refuse != nil {
		if refusal := h.opts.Refuse(m.Method, m.Params); refusal != nil {
			var data any
			if refusal.Data != nil {
				data = refusal.Data
			}
			h.respondError(m.ID, refusal.Code, refusal.Message, data)
			return
		}
	}
	switch m.Method {
	case wire.MethodLogWrite:
		var p wire.LogWriteParams
		_ = json.Unmarshal(m.Params, &p)
		h.mu.Lock()
		h.logs = append(h.logs, LogEntry{Level: p.Level, Message: p.Message, Fields: p.Fields, EventID: p.EventID})
		h.mu.Unlock()
		h.respond(m.ID, wire.LogWriteResult{Accepted: true})
	case wire.MethodEventsCompleted:
		var p wire.EventsCompletedParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			h.respondError(m.ID, wire.RPCInvalidParams, err.Error(), nil)
			return
		}
		h.mu.Lock()
		d := h.deliveries[p.EventID]
		h.mu.Unlock()
		if d != nil {
			// The ACK's answer may still be on its way to the delivery (it is read just before this).
			select {
			case <-d.ack:
			case <-time.After(h.opts.Wait):
			}
		}
		h.mu.Lock()
		recorded := d != nil && d.Completion == nil && d.Ack != nil && d.Ack.Accepted
		if recorded {
			d.Completion = &p
			close(d.completed)
		}
		h.mu.Unlock()
		h.respond(m.ID, wire.EventsCompletedResult{Recorded: recorded})
	case wire.MethodMessagesReply, wire.MethodMessagesSend:
		kind, need := "reply", wire.PermissionMessagesReply
		if m.Method == wire.MethodMessagesSend {
			kind, need = "send", wire.PermissionMessagesSend
		}
		if !h.permitted(need) {
			h.respondError(m.ID, wire.RPCPermissionDenied, need+" is not declared", map[string]any{"code": wire.CodeMessagePermissionDenied, "permission": need})
			return
		}
		var p struct {
			EventID string                `json:"eventId"`
			Target  *wire.Target          `json:"target"`
			Message *wire.OutgoingMessage `json:"message"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil || p.Message == nil {
			h.respondError(m.ID, wire.RPCInvalidParams, fmt.Sprintf("invalid params: %v", err), nil)
			return
		}
		reply := Reply{Kind: kind, EventID: p.EventID, Format: p.Message.GetFormat(), Parts: p.Message.Parts, Keyboard: p.Message.Keyboard}
		h.mu.Lock()
		if code, problem := h.mediaProblem(p.Message.Parts); code != "" {
			h.mu.Unlock()
			h.respondError(m.ID, wire.RPCMessageRejected, problem, map[string]any{"code": code})
			return
		}
		if kind == "reply" {
			d := h.deliveries[p.EventID]
			if d == nil {
				h.mu.Unlock()
				h.respondError(m.ID, wire.RPCMessageRejected, "the event was not delivered to this plugin", map[string]any{"code": wire.CodeMessageReferenceUnknown})
				return
			}
			if d.Chat != nil && d.Chat.MessageReference == nil {
				h.mu.Unlock()
				h.respondError(m.ID, wire.RPCMessageRejected, "the event takes no reply", map[string]any{"code": wire.CodeMessageReferenceUnavailable})
				return
			}
			reply.Target = wire.Target{Type: d.Event.MessageReference.TargetType, ID: d.Event.MessageReference.TargetID}
		} else if p.Target != nil {
			reply.Target = *p.Target
		}
		h.replies = append(h.replies, reply)
		h.seq++
		id := fmt.Sprintf("msg-%d", h.seq)
		h.mu.Unlock()
		h.respond(m.ID, wire.SendResult{Accepted: true, MessageID: id, Target: reply.Target})
	case wire.MethodMediaUpload, wire.MethodMediaChunk, wire.MethodMediaFinish:
		h.answerMedia(m)
	default:
		h.respondError(m.ID, wire.RPCMethodNotFound, "method "+m.Method+" is not a plugin-to-host method", nil)
	}
}

// Message is a message a user writes, for Send. Everything but Text has a realistic default.
type Message struct {
	Text string
	// Conversation is "group" (default), "c2c", "channel" or "direct".
	Conversation string
	Sender       *wire.UserRef
	// ReplyWindow is how long the reply window stays open (default 5 minutes; negative: already closed).
	ReplyWindow time.Duration
}

// Event builds the message event the host would deliver for m, with the command the manifest matches.
func (h *Host) Event(m Message) wire.MessageEvent {
	h.mu.Lock()
	h.seq++
	n := h.seq
	h.mu.Unlock()
	conv := m.Conversation
	if conv == "" {
		conv = "group"
	}
	sender := wire.UserRef{Provider: "qqbot", MentionID: "test-user", DisplayName: "Test User"}
	if m.Sender != nil {
		sender = *m.Sender
	}
	targetType := map[string]string{"group": "group", "c2c": "user", "channel": "channel", "direct": "direct"}[conv]
	window := m.ReplyWindow
	if window == 0 {
		window = 5 * time.Minute
	}
	event := wire.MessageEvent{
		EventID: fmt.Sprintf("evt-%d", n), EventType: "message.created", Timestamp: time.Now().UTC().Format(time.RFC3339Nano), Source: "qqbot",
		Bot:          wire.BotRef{BotAccountID: "bot-1", Platform: "qqbot"},
		Conversation: wire.Conversation{Type: conv, ConversationID: "conv-" + conv},
		Sender:       sender,
		Message:      wire.MessageEventMessage{ID: fmt.Sprintf("m-%d", n), Content: m.Text},
		MessageReference: wire.MessageReference{
			MessageID: fmt.Sprintf("m-%d", n), TargetType: targetType, TargetID: "target-" + conv,
			ReplyUntil: time.Now().Add(window).UTC().Format(time.RFC3339Nano),
		},
	}
	if h.manifest != nil {
		event.Command, _ = MatchCommand(m.Text, h.manifest.Commands, conv)
	}
	return event
}

// Deliver sends an event and returns its delivery at once; WaitAck and WaitCompleted wait for it.
func (h *Host) Deliver(event wire.MessageEvent) *Delivery {
	return h.deliver(&Delivery{Event: event}, wire.MethodEventsMessage, event)
}

// DeliverEvent sends an event of another type (events.deliver) and returns its delivery at once; the
// delivery's Event holds its id, bot, conversation and reference, and Chat the event itself. As the host,
// it sends only a type the manifest subscribes to (the test fails otherwise).
func (h *Host) DeliverEvent(event wire.ChatEvent) *Delivery {
	h.t.Helper()
	if h.manifest != nil {
		subscribed := false
		for _, s := range h.manifest.EventSubscriptions {
			subscribed = subscribed || s.EventType == event.EventType
		}
		if !subscribed {
			h.t.Fatalf("manifest.json does not subscribe to %q, so the host would never deliver it; add {\"eventType\": %q} to \"eventSubscriptions\"", event.EventType, event.EventType)
		}
	}
	envelope := wire.MessageEvent{EventID: event.EventID, EventType: event.EventType, Timestamp: event.Timestamp, Source: event.Source, Bot: event.Bot, Conversation: event.Conversation}
	if event.MessageReference != nil {
		envelope.MessageReference = *event.MessageReference
	}
	if event.Sender != nil {
		envelope.Sender = *event.Sender
	}
	return h.deliver(&Delivery{Event: envelope, Chat: &event}, wire.MethodEventsDeliver, event)
}

// ChatEvent builds an event of eventType ("interaction.created", "bot.added", "bot.removed" or
// "conversation.opened") as the host delivers it: m.Conversation and m.Sender as for Event (Text is
// unused); bot.removed has no messageReference, the others one answered by the platform's event id
// ("event:..."). Set or clear fields of the result before DeliverEvent to vary it.
func (h *Host) ChatEvent(eventType string, m Message) wire.ChatEvent {
	base := h.Event(m)
	event := wire.ChatEvent{
		EventID: base.EventID, EventType: eventType, Timestamp: base.Timestamp, Source: base.Source,
		Bot: base.Bot, Conversation: base.Conversation, Sender: &base.Sender,
	}
	if eventType == "interaction.created" {
		event.Interaction = &wire.Interaction{ID: "interaction-" + base.EventID}
	}
	if eventType != "bot.removed" {
		ref := base.MessageReference
		ref.MessageID = "event:" + eventType + ":" + base.EventID
		if event.Interaction != nil {
			ref.MessageID = "event:" + event.Interaction.ID
		}
		event.MessageReference = &ref
	}
	return event
}

// Click delivers interaction.created for a click on a callback button with data (and buttonID, when not
// empty) and waits until its handler completed.
func (h *Host) Click(data, buttonID string, m Message) *Delivery {
	h.t.Helper()
	event := h.ChatEvent("interaction.created", m)
	event.Interaction.Data = data
	event.Interaction.ButtonID = buttonID
	return h.WaitCompleted(h.DeliverEvent(event))
}

// BotAdded delivers bot.added and waits until its handler completed.
func (h *Host) BotAdded(m Message) *Delivery {
	h.t.Helper()
	return h.WaitCompleted(h.DeliverEvent(h.ChatEvent("bot.added", m)))
}

// BotRemoved delivers bot.removed (which takes no reply) and waits until its handler completed.
func (h *Host) BotRemoved(m Message) *Delivery {
	h.t.Helper()
	return h.WaitCompleted(h.DeliverEvent(h.ChatEvent("bot.removed", m)))
}

// ConversationOpened delivers conversation.opened and waits until its handler completed.
func (h *Host) ConversationOpened(m Message) *Delivery {
	h.t.Helper()
	return h.WaitCompleted(h.DeliverEvent(h.ChatEvent("conversation.opened", m)))
}

func (h *Host) deliver(d *Delivery, method string, params any) *Delivery {
	d.ack = make(chan struct{})
	d.completed = make(chan struct{})
	event := d.Event
	h.mu.Lock()
	h.deliveries[event.EventID] = d
	h.mu.Unlock()
	answer := h.CallAsync(method, params)
	go func() {
		a := <-answer
		h.mu.Lock()
		if a.err != nil {
			d.Err = a.err
		} else {
			var ack wire.EventAck
			_ = json.Unmarshal(a.result, &ack)
			d.Ack = &ack
		}
		h.mu.Unlock()
		close(d.ack)
	}()
	return d
}

// WaitAck waits for the ACK (or the error answer).
func (h *Host) WaitAck(d *Delivery) *Delivery {
	h.t.Helper()
	select {
	case <-d.ack:
	case <-time.After(h.opts.Wait):
		h.t.Fatalf("event %s: no ACK within %s", d.Event.EventID, h.opts.Wait)
	}
	return d
}

// WaitCompleted waits for the ACK and, when it accepted the event, for events.completed.
func (h *Host) WaitCompleted(d *Delivery) *Delivery {
	h.t.Helper()
	h.WaitAck(d)
	if d.Ack == nil || !d.Ack.Accepted {
		return d
	}
	select {
	case <-d.completed:
	case <-time.After(h.opts.Wait):
		h.t.Fatalf("event %s: no events.completed within %s", d.Event.EventID, h.opts.Wait)
	}
	return d
}

// Send delivers a user message and waits until its handler completed.
func (h *Host) Send(m Message) *Delivery {
	h.t.Helper()
	return h.WaitCompleted(h.Deliver(h.Event(m)))
}

// Replies are the messages the plugin sent so far, in order.
func (h *Host) Replies() []Reply {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Reply(nil), h.replies...)
}

// RepliesTo are the replies to one event.
func (h *Host) RepliesTo(eventID string) []Reply {
	var out []Reply
	for _, r := range h.Replies() {
		if r.EventID == eventID {
			out = append(out, r)
		}
	}
	return out
}

// Logs are the log.write calls so far.
func (h *Host) Logs() []LogEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]LogEntry(nil), h.logs...)
}

// Cancel sends events.cancel and returns whether the plugin cancelled something.
func (h *Host) Cancel(eventID, reason string) bool {
	h.t.Helper()
	raw, err := h.Call(wire.MethodEventsCancel, wire.EventsCancelParams{EventID: eventID, Reason: reason})
	if err != nil {
		h.t.Fatalf("events.cancel: %v", err)
	}
	var r wire.EventsCancelResult
	_ = json.Unmarshal(raw, &r)
	return r.Cancelled
}

// Ping sends plugin.ping and returns the answer.
func (h *Host) Ping(nonce string) wire.PluginPingResult {
	h.t.Helper()
	raw, err := h.Call(wire.MethodPluginPing, wire.PluginPingParams{Nonce: nonce})
	if err != nil {
		h.t.Fatalf("plugin.ping: %v", err)
	}
	var r wire.PluginPingResult
	_ = json.Unmarshal(raw, &r)
	return r
}

// ChangeSettings sends settings.changed; the error is the plugin's refusal.
func (h *Host) ChangeSettings(settings map[string]any) *RPCError {
	h.t.Helper()
	_, err := h.Call(wire.MethodSettingsChanged, wire.SettingsChangedParams{Settings: settings})
	return err
}

// Stop sends plugin.stop and waits for the process to exit; it returns the exit code.
func (h *Host) Stop(reason string) int {
	h.t.Helper()
	if _, err := h.Call(wire.MethodPluginStop, wire.PluginStopParams{Reason: &reason}); err != nil {
		h.t.Fatalf("plugin.stop: %v", err)
	}
	return h.WaitExit()
}

// WaitExit waits for the plugin to exit and returns its exit code.
func (h *Host) WaitExit() int {
	h.t.Helper()
	if h.exitCode >= 0 {
		return h.exitCode
	}
	select {
	case code := <-h.exited:
		h.exitCode = code
		return code
	case <-time.After(h.opts.Wait):
		h.t.Fatalf("the plugin did not exit within %s", h.opts.Wait)
		return -1
	}
}

// Close closes the plugin's stdin (the host is gone) and waits for it to exit.
func (h *Host) Close() int {
	_ = h.in.Close()
	if h.exitCode >= 0 {
		return h.exitCode
	}
	select {
	case code := <-h.exited:
		h.exitCode = code
	case <-time.After(h.opts.Wait):
	}
	return h.exitCode
}

// frame is a decoded JSON-RPC message the plugin wrote.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *RPCError       `json:"error"`
}

type reader struct {
	r   io.Reader
	buf []byte
}

func newReader(r io.Reader) *reader { return &reader{r: r} }

// next reads one frame strictly: the header the SDK writes, then exactly Content-Length bytes.
func (r *reader) next() (*frame, error) {
	for {
		if i := bytes.Index(r.buf, []byte("\r\n\r\n")); i >= 0 {
			header := string(r.buf[:i])
			if !strings.HasPrefix(header, "Content-Length: ") || strings.Contains(header, "\r\n") {
				return nil, fmt.Errorf("unexpected header %q (stdout pollution?)", header)
			}
			n, err := strconv.Atoi(strings.TrimPrefix(header, "Content-Length: "))
			if err != nil {
				return nil, fmt.Errorf("bad Content-Length %q", header)
			}
			if len(r.buf) >= i+4+n {
				payload := r.buf[i+4 : i+4+n]
				r.buf = r.buf[i+4+n:]
				var f frame
				var e struct {
					Error *struct {
						Code    int             `json:"code"`
						Message string          `json:"message"`
						Data    json.RawMessage `json:"data"`
					} `json:"error"`
				}
				if err := json.Unmarshal(payload, &f); err != nil {
					return nil, err
				}
				_ = json.Unmarshal(payload, &e)
				f.Error = nil
				if e.Error != nil {
					f.Error = &RPCError{Code: e.Error.Code, Message: e.Error.Message, Data: e.Error.Data}
				}
				return &f, nil
			}
		} else if len(r.buf) > 0 && !bytes.HasPrefix([]byte("Content-Length: "), r.buf[:min(len(r.buf), 16)]) && !bytes.HasPrefix(r.buf, []byte("Content-Length: ")) {
			return nil, fmt.Errorf("unexpected bytes on stdout %q (stdout pollution?)", string(r.buf[:min(len(r.buf), 80)]))
		}
		chunk := make([]byte, 64*1024)
		n, err := r.r.Read(chunk)
		r.buf = append(r.buf, chunk[:n]...)
		if err != nil && n == 0 {
			if len(r.buf) > 0 {
				return nil, fmt.Errorf("stream ended inside a frame")
			}
			return nil, io.EOF
		}
	}
}
