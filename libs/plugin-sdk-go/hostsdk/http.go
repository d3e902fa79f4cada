package hostsdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// SecretSource gives the signing secrets to accept (several during a rotation); it is asked on every
// request, so a secret configured after the service started needs no restart. nil or empty means no
// secret yet: events are refused with 401 signature.secret_unset.
type SecretSource func() []string

// StaticSecret is a SecretSource with fixed secrets.
func StaticSecret(secrets ...string) SecretSource {
	return func() []string { return secrets }
}

// SecretFromFile reads the secret(s) from a file, one per line, again whenever it changes; a missing
// file means no secret yet.
func SecretFromFile(path string) SecretSource {
	var mu sync.Mutex
	var modTime time.Time
	var size int64 = -1
	var cached []string
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		info, err := os.Stat(path)
		if err != nil {
			return nil
		}
		if info.ModTime().Equal(modTime) && info.Size() == size {
			return cached
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		cached = nil
		for _, line := range strings.Split(string(data), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				cached = append(cached, line)
			}
		}
		modTime, size = info.ModTime(), info.Size()
		return cached
	}
}

// HTTPOptions configure HTTPHandler.
type HTTPOptions struct {
	// Secret gives the signing secret shown at registration (required).
	Secret SecretSource
	// DataDirectory, when set, is ctx.Directories().PluginDataDirectory, with config/ and cache/ inside.
	DataDirectory string
	// Settings are the values handlers see (the manifest's defaults fill the gaps).
	Settings Settings
	// Tolerance is the allowed clock difference of signed requests (default 300 s).
	Tolerance time.Duration
	// MaxBodyBytes is the largest request body accepted (default 4 MiB); larger ones get 413.
	MaxBodyBytes int64
	// MaxConcurrentEvents bounds events handled at once; beyond it the answer is 503 with Retry-After
	// (default 0: no limit).
	MaxConcurrentEvents int
	// VerifyManifestRequests also requires a valid signature on the manifest GET (default false).
	VerifyManifestRequests bool
	// Log receives ctx.Log() lines (default: one line per entry on stderr).
	Log func(level LogLevel, message string, fields map[string]any)
	// Now is the clock (default time.Now); tests set it.
	Now func() time.Time
}

// HTTPServer serves the plugin over the HTTP transport (docs/protocol/v2.md section 8). It is an
// http.Handler for the two endpoints under its base path; mount it at the base URL's path.
type HTTPServer struct {
	p        *Plugin
	opts     HTTPOptions
	s        *session
	manifest []byte
	replay   *ReplayGuard
	root     context.Context
	stop     context.CancelCauseFunc
	ready    chan struct{}
	startErr error

	mu       sync.Mutex
	inFlight int
	closed   bool
	idle     *sync.Cond
}

// HTTPHandler builds the HTTP transport of a plugin loaded from its stdio manifest: it serves the HTTP
// manifest derived from it (capabilities from its permissions and Intercepts) and message events
// signed by the host. OnStart runs now, in the background; events wait for it.
func (p *Plugin) HTTPHandler(opts HTTPOptions) (*HTTPServer, error) {
	if p.manifest == nil {
		return nil, sdkError(wire.ErrSDKHTTPConfigInvalid, "an HTTP plugin serves a manifest with name, version and author: define it with Load(\"manifest.json\")")
	}
	if opts.Secret == nil {
		return nil, sdkError(wire.ErrSDKHTTPConfigInvalid, "HTTPOptions.Secret is required (for example hostsdk.SecretFromFile(\"signing-secret\"))")
	}
	if opts.Tolerance == 0 {
		opts.Tolerance = wire.HTTPDefaultSignatureToleranceSeconds * time.Second
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = wire.LimitMaxPayloadBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		var mu sync.Mutex
		opts.Log = func(level LogLevel, message string, fields map[string]any) {
			line := fmt.Sprintf("[%s] %s", level, message)
			if len(fields) > 0 {
				if b, err := json.Marshal(fields); err == nil {
					line += " " + string(b)
				}
			}
			mu.Lock()
			fmt.Fprintln(os.Stderr, line)
			mu.Unlock()
		}
	}
	manifest, err := json.Marshal(p.HTTPManifest())
	if err != nil {
		return nil, err
	}
	// The served manifest is checked as the host will check it at registration.
	var served any
	_ = json.Unmarshal(manifest, &served)
	if _, issues := validateManifest(served, true); issues != nil {
		return nil, &SDKError{Code: wire.ErrSDKHTTPConfigInvalid, Detail: "the HTTP manifest derived from manifest.json is invalid: " + describeIssues(issues), Issues: issues}
	}
	settings := Settings{}
	if p.manifest.Settings != nil {
		for k, f := range p.manifest.Settings.ConfigSchema {
			if f.DefaultValue != nil {
				settings[k] = f.DefaultValue
			}
		}
	}
	for k, v := range opts.Settings {
		settings[k] = v
	}
	var dirs *Directories
	if opts.DataDirectory != "" {
		data, err := filepath.Abs(opts.DataDirectory)
		if err != nil {
			return nil, err
		}
		cwd, _ := os.Getwd()
		dirs = &Directories{PluginDirectory: cwd, PluginDataDirectory: data, PluginConfigDirectory: filepath.Join(data, "config"), PluginCacheDirectory: filepath.Join(data, "cache")}
		for _, d := range []string{dirs.PluginConfigDirectory, dirs.PluginCacheDirectory} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, sdkError(wire.ErrSDKHTTPConfigInvalid, "DataDirectory: %v", err)
			}
		}
	}
	root, stop := context.WithCancelCause(context.Background())
	h := &HTTPServer{p: p, opts: opts, manifest: manifest, replay: NewReplayGuard(100_000), root: root, stop: stop, ready: make(chan struct{})}
	h.idle = sync.NewCond(&h.mu)
	h.s = &session{plugin: p, io: lifecycleHTTP{h}, settings: settings, directories: dirs}
	go func() {
		defer close(h.ready)
		if p.onStart != nil {
			if err := safeLifecycle(p.onStart, newLifecycle(root, h.s)); err != nil {
				h.startErr = err
				opts.Log(LevelError, "OnStart failed: "+err.Error(), nil)
			}
		}
	}()
	return h, nil
}

// HTTPManifest is the manifest the HTTP transport serves, derived from the stdio manifest.
func (p *Plugin) HTTPManifest() wire.HTTPManifest {
	m := p.manifest
	capabilities := int64(wire.CapabilityReceiveMessages | wire.CapabilityHTTPTransport)
	if p.hasPermission(wire.PermissionMessagesSend) {
		capabilities |= wire.CapabilitySendMessages
	}
	if p.intercepts {
		capabilities |= wire.CapabilityInterceptMessages
	}
	permissions := []string{}
	for _, q := range m.Permissions {
		if q != wire.PermissionMessagesIntercept {
			permissions = append(permissions, q)
		}
	}
	commands := m.Commands
	if commands == nil {
		commands = []wire.Command{}
	}
	out := wire.HTTPManifest{
		PluginID: m.PluginID, Name: m.Name, Version: m.Version, Author: m.Author, Description: m.Description,
		ProtocolVersion: wire.ProtocolVersion, SDKVersion: SDKVersion, Capabilities: capabilities,
		EventSubscriptions: m.EventSubscriptions, Permissions: permissions, Commands: commands,
	}
	if m.Settings != nil {
		out.Settings = &wire.HTTPManifestSettings{ConfigSchema: m.Settings.ConfigSchema}
	}
	return out
}

// Close refuses new events, cancels the contexts of running handlers, waits for them and runs OnStop.
func (h *HTTPServer) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	h.stop(errors.New("HTTP plugin closing"))
	for h.inFlight > 0 {
		h.idle.Wait()
	}
	h.mu.Unlock()
	<-h.ready
	if h.p.onStop != nil && h.startErr == nil {
		if err := safeLifecycle(h.p.onStop, newLifecycle(context.Background(), h.s)); err != nil {
			h.opts.Log(LevelError, "OnStop failed: "+err.Error(), nil)
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, body any, headers map[string]string) {
	data, err := json.Marshal(body)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"error":{"code":"plugin.internal_error","message":"the answer could not be encoded"}}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

func writeError(w http.ResponseWriter, code, message string, details any, headers map[string]string) {
	entry, _ := wire.LookupError(code)
	status := entry.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	body := map[string]any{"code": code, "message": message}
	if details != nil {
		body["details"] = details
	}
	writeJSON(w, status, map[string]any{"error": body}, headers)
}

// ServeHTTP answers GET {base}/host/plugin/manifest, POST {base}/host/plugin/events/message and POST
// {base}/host/plugin/events/deliver (the other event types the manifest subscribes to).
func (h *HTTPServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimRight(r.URL.Path, "/")
	switch {
	case strings.HasSuffix(path, wire.HTTPPathManifest):
		h.serveManifest(w, r)
	case strings.HasSuffix(path, wire.HTTPPathMessageEvents):
		h.serveEvent(w, r, wire.HTTPPathMessageEvents)
	case strings.HasSuffix(path, wire.HTTPPathOtherEvents):
		h.serveEvent(w, r, wire.HTTPPathOtherEvents)
	default:
		writeError(w, wire.CodeHTTPNotFound, fmt.Sprintf("%s is neither %s, %s nor %s", r.URL.Path, wire.HTTPPathManifest, wire.HTTPPathMessageEvents, wire.HTTPPathOtherEvents), nil, nil)
	}
}

func (h *HTTPServer) serveManifest(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, wire.CodeHTTPMethodNotAllowed, "use GET for "+wire.HTTPPathManifest, nil, map[string]string{"Allow": "GET, HEAD"})
		return
	}
	if h.opts.VerifyManifestRequests {
		secrets := h.opts.Secret()
		if len(secrets) == 0 {
			writeError(w, wire.CodeSignatureSecretUnset, "no signing secret is configured yet", nil, nil)
			return
		}
		if _, _, err := VerifySignature(r.Header, nil, secrets, h.opts.Tolerance, h.opts.Now()); err != nil {
			se := err.(*SignatureError)
			writeError(w, se.Code, se.Message, nil, nil)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(h.manifest)
	}
}

func (h *HTTPServer) serveEvent(w http.ResponseWriter, r *http.Request, endpoint string) {
	if r.Method != http.MethodPost {
		writeError(w, wire.CodeHTTPMethodNotAllowed, "use POST for "+endpoint, nil, map[string]string{"Allow": "POST"})
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, h.opts.MaxBodyBytes+1))
	if err != nil {
		writeError(w, wire.CodePluginInternalError, "the request body could not be read", nil, nil)
		return
	}
	if int64(len(raw)) > h.opts.MaxBodyBytes {
		writeError(w, wire.CodeHTTPBodyTooLarge, fmt.Sprintf("the request body is larger than %d bytes", h.opts.MaxBodyBytes), nil, nil)
		return
	}
	secrets := h.opts.Secret()
	if len(secrets) == 0 {
		writeError(w, wire.CodeSignatureSecretUnset, "no signing secret is configured yet", nil, nil)
		return
	}
	now := h.opts.Now()
	deliveryID, ts, err := VerifySignature(r.Header, raw, secrets, h.opts.Tolerance, now)
	if err != nil {
		se := err.(*SignatureError)
		writeError(w, se.Code, se.Message, nil, nil)
		return
	}
	if claimed := r.Header.Get(wire.HTTPHeaderPluginID); claimed != "" && claimed != h.p.pluginID {
		writeError(w, wire.CodePluginIDMismatch, fmt.Sprintf("this service is plugin %q but the host sent an event for %q; register the right base URL", h.p.pluginID, claimed), nil, nil)
		return
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		writeError(w, wire.CodeHTTPOverloaded, "the plugin is shutting down", nil, map[string]string{"Retry-After": "1"})
		return
	}
	// Answered before the delivery id is recorded, so the host's retry is not a replay.
	if h.opts.MaxConcurrentEvents > 0 && h.inFlight >= h.opts.MaxConcurrentEvents {
		n := h.inFlight
		h.mu.Unlock()
		writeError(w, wire.CodeHTTPOverloaded, fmt.Sprintf("the plugin is handling %d events (its limit); retry later", n), nil, map[string]string{"Retry-After": "1"})
		return
	}
	h.inFlight++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.inFlight--
		if h.inFlight == 0 {
			h.idle.Broadcast()
		}
		h.mu.Unlock()
	}()
	expires := time.Unix(ts, 0).Add(h.opts.Tolerance + time.Second)
	if !h.replay.Remember(deliveryID, expires, now) {
		writeError(w, wire.CodeSignatureReplayed, fmt.Sprintf("delivery %s was already received; a replayed request is refused", deliveryID), nil, nil)
		return
	}
	var event wire.MessageEvent
	var handler Handler
	if endpoint == wire.HTTPPathOtherEvents {
		var chat wire.ChatEvent
		if issues := decodeChatEvent(raw, &chat); issues != nil {
			writeError(w, wire.CodeEventInvalid, "the body is not an event of interaction.created, bot.added, bot.removed or conversation.opened: "+describeIssues(issues), map[string]any{"issues": issues}, nil)
			return
		}
		var envelope *wire.MessageEvent
		if handler, envelope = h.p.chatHandler(&chat); envelope != nil {
			event = *envelope
		}
	} else {
		if issues := decodeEvent(raw, &event); issues != nil {
			writeError(w, wire.CodeEventInvalid, "the body is not a message event: "+describeIssues(issues), map[string]any{"issues": issues}, nil)
			return
		}
		handler = h.p.handlerFor(&event)
	}
	<-h.ready
	if h.startErr != nil {
		writeError(w, wire.CodePluginStartFailed, "the plugin failed to start (OnStart returned an error); see its log", nil, nil)
		return
	}
	writeJSON(w, http.StatusOK, h.process(r.Context(), &event, handler), nil)
}

// process runs the handler; the response is decision and completion at once.
func (h *HTTPServer) process(reqCtx context.Context, event *wire.MessageEvent, handler Handler) wire.MessageResponse {
	resp := wire.MessageResponse{OutboundMessages: []wire.OutboundMessage{}}
	if handler == nil {
		return resp
	}
	ctx, cancel := context.WithCancelCause(h.root)
	defer cancel(nil)
	stopOnDisconnect := context.AfterFunc(reqCtx, func() { cancel(errors.New("the host closed the request")) })
	defer stopOnDisconnect()
	collector := &outbound{}
	s := &session{plugin: h.p, io: collector, directories: h.s.directories, settings: h.s.settings}
	collector.logf = h.opts.Log
	c := &Context{Lifecycle: Lifecycle{Context: ctx, s: s, logWrite: h.opts.Log}, event: event}
	err := runHandler(handler, c)
	collector.close()
	var perr *wire.PluginError
	if err != nil {
		perr = toPluginError(err)
		h.opts.Log(LevelError, fmt.Sprintf("handler for %s %s failed: %s", describeEvent(event), event.EventID, perr.Message), map[string]any{"code": perr.Code})
	}
	_, intercepted := c.decisionState()
	resp.Accepted = perr == nil
	resp.Intercepted = intercepted && h.p.intercepts
	resp.OutboundMessages = collector.items
	resp.Error = perr
	return resp
}

// outbound collects the messages of one HTTP event for its response.
type outbound struct {
	mu     sync.Mutex
	items  []wire.OutboundMessage
	closed bool
	logf   func(LogLevel, string, map[string]any)
}

func (o *outbound) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
}

func (o *outbound) push(item wire.OutboundMessage) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return sdkError(wire.ErrSDKSendUnavailable, "the event was already answered; over HTTP every message must be made before the handler returns")
	}
	if len(o.items) >= wire.LimitMaxOutboundMessages {
		return sdkError(wire.ErrSDKOutboundLimit, "this event already has %d outbound messages", wire.LimitMaxOutboundMessages)
	}
	o.items = append(o.items, item)
	return nil
}

func (o *outbound) kind() Transport { return TransportHTTP }

func (o *outbound) reply(_ context.Context, _ *wire.MessageEvent, message wire.OutgoingMessage, target wire.Target) (*wire.SendResult, error) {
	if err := o.push(wire.OutboundMessage{Format: message.Format, Parts: message.Parts, Keyboard: message.Keyboard}); err != nil {
		return nil, err
	}
	return &wire.SendResult{Accepted: true, Target: target}, nil
}

func (o *outbound) send(_ context.Context, _ *wire.MessageEvent, target wire.Target, message wire.OutgoingMessage) (*wire.SendResult, error) {
	t := target
	if err := o.push(wire.OutboundMessage{Target: &t, Format: message.Format, Parts: message.Parts, Keyboard: message.Keyboard}); err != nil {
		return nil, err
	}
	return &wire.SendResult{Accepted: true, Target: target}, nil
}

func (o *outbound) log(level LogLevel, message string, fields map[string]any) {
	o.logf(level, message, fields)
}

// lifecycleHTTP is the transport of OnStart/OnStop over HTTP: nothing can be sent outside an event.
type lifecycleHTTP struct{ h *HTTPServer }

func (lifecycleHTTP) kind() Transport { return TransportHTTP }

func (lifecycleHTTP) reply(context.Context, *wire.MessageEvent, wire.OutgoingMessage, wire.Target) (*wire.SendResult, error) {
	return nil, sdkError(wire.ErrSDKSendUnavailable, "an HTTP plugin cannot send outside an event: the host takes messages only in event responses")
}

func (lifecycleHTTP) send(context.Context, *wire.MessageEvent, wire.Target, wire.OutgoingMessage) (*wire.SendResult, error) {
	return nil, sdkError(wire.ErrSDKSendUnavailable, "an HTTP plugin cannot send outside an event: the host takes messages only in event responses")
}

func (l lifecycleHTTP) log(level LogLevel, message string, fields map[string]any) {
	l.h.opts.Log(level, message, fields)
}

// ServeHTTP listens on addr (host:port; port 0 picks a free one), writes "listening http://<address>" to
// announce (when not nil) and serves the plugin's HTTP transport at the root path until the server fails.
func (p *Plugin) ServeHTTP(addr string, opts HTTPOptions, announce io.Writer) error {
	h, err := p.HTTPHandler(opts)
	if err != nil {
		return err
	}
	defer h.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if announce != nil {
		fmt.Fprintf(announce, "listening http://%s\n", ln.Addr())
	}
	server := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	return server.Serve(ln)
}
