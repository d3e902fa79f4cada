// The stdio runtime: the process entry points, the reader of the host's frames and the requests that
// are not events (handshake, ping, stop, settings). The event runner is in stdio_events.go, the calls to
// the host in stdio_host.go; the connection under them (frames, writer, request ids) in framing.go and
// conn.go.

package hostsdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// UsageExitCode is the exit status when the plugin is started without --host-stdio (it prints help).
const UsageExitCode = 2

// orphanStop bounds OnStop when stdin closed (the host is gone) before the process exits anyway.
const orphanStop = time.Second

// maxPendingLogs bounds log.write calls waiting for the host; beyond it lines go to stderr.
const maxPendingLogs = 64

// frameOut is the process's real stdout. In protocol mode (--host-stdio among the arguments) the package
// points os.Stdout at stderr when it is initialised, before the plugin's own main and init functions
// run, so fmt.Print anywhere in the plugin goes to the plugin log instead of breaking the frames.
var frameOut = os.Stdout

func init() {
	if slices.Contains(os.Args[1:], wire.StdioFlag) {
		os.Stdout = os.Stderr
		oneProcessor(os.Getenv)
	}
}

// oneProcessor sets GOMAXPROCS to 1 for a stdio plugin unless the GOMAXPROCS environment variable says
// otherwise. The stdio runtime is a message pump: every event hands work between the reader and a
// handler goroutine, and with a second processor idle each hand-off wakes another OS thread, which spins,
// steals the goroutine or goes back to sleep (futex and context switches cost more per event than the
// handler itself). On one processor the hand-offs stay on one thread. Handlers still run concurrently
// (goroutines, preempted every 10 ms at most), and pings, cancels and deadlines are answered while one
// computes; a plugin that computes in parallel sets GOMAXPROCS in its environment (manifest) or calls
// runtime.GOMAXPROCS in main, which runs after this. Run with --http keeps the Go default.
func oneProcessor(getenv func(string) string) bool {
	if getenv("GOMAXPROCS") != "" {
		return false
	}
	runtime.GOMAXPROCS(1)
	return true
}

// Run serves the plugin over stdio and exits the process: with --host-stdio among the arguments it
// speaks the protocol on stdin/stdout; without it, it prints a short help to stderr and exits with 2.
// In protocol mode os.Stdout points at stderr (see frameOut), so fmt.Print cannot break the frames.
//
// With --http <addr> instead, it serves the same plugin over the HTTP transport (see ServeHTTP), taking
// the signing secret from the file named by --secret-file (read again when it changes) or from the
// HOST_PLUGIN_SECRET environment variable.
func (p *Plugin) Run() {
	args := os.Args[1:]
	if i := slices.Index(args, "--http"); i >= 0 && i+1 < len(args) {
		secret := StaticSecret()
		if env := os.Getenv("HOST_PLUGIN_SECRET"); env != "" {
			secret = StaticSecret(env)
		}
		if j := slices.Index(args, "--secret-file"); j >= 0 && j+1 < len(args) {
			secret = SecretFromFile(args[j+1])
		}
		if err := p.ServeHTTP(args[i+1], HTTPOptions{Secret: secret}, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "[error]", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if !slices.Contains(args, wire.StdioFlag) {
		os.Exit(p.RunStdio(args, os.Stdin, frameOut, os.Stderr))
	}
	os.Exit(p.RunStdio(args, stdioPipe(os.Stdin), stdioPipe(frameOut), os.Stderr))
}

// RunStdio runs the stdio runtime over the given streams and returns the exit code when it ends:
// after plugin.stop (0), when stdin ends (0), on a broken frame or a refused handshake (1), or at once
// without --host-stdio in args (2, after the help on stderr).
func (p *Plugin) RunStdio(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if !slices.Contains(args, wire.StdioFlag) {
		p.usage(stderr)
		return UsageExitCode
	}
	rt := newStdioRuntime(p, stdin, stdout, stderr)
	return rt.run()
}

// stdioRuntime is one plugin process speaking protocol v2 over stdio. Its fields belong to three parts:
// the connection (frames read by one goroutine, conn for everything written and the answers to the
// plugin's requests), the calls to the host (stdio_host.go: token, timeout, logSlots) and the event runner
// (stdio_events.go: limits, queue, live events, handler goroutines, deadlines). mu guards the fields
// below it.
type stdioRuntime struct {
	p        *Plugin
	frames   *frameReader // read by the reader goroutine only
	conn     *conn
	stderr   io.Writer
	stderrMu sync.Mutex
	s        *session

	root       context.Context // cancelled at plugin.stop or when the host is gone: every handler's parent
	rootCancel context.CancelCauseFunc
	exit       chan int
	exitOnce   sync.Once
	logSlots   chan struct{} // the log.write calls waiting for the host
	deadlines  *deadlines    // the handler deadlines

	mu sync.Mutex
	// the handshake and the calls to the host
	init    *wire.HostInitializeParams
	timeout time.Duration
	// the event runner
	deadline      time.Duration
	maxConcurrent int
	queueCapacity int
	started       bool // OnStart returned: events run
	stopping      bool // plugin.stop arrived: events are refused
	exiting       bool
	running       int
	queue         []*eventTask
	live          map[string]*eventTask
	idle          chan struct{} // closed when running reaches 0, for a waiting shutdown

	// work hands an admitted event to a handler goroutine that waits for one: a goroutine stays for the
	// next event instead of ending (its stack has grown already), and a new one starts only when none
	// waits, so there are about as many as events ever ran at once (maxConcurrentEvents).
	work chan *eventTask
}

func newStdioRuntime(p *Plugin, stdin io.Reader, stdout, stderr io.Writer) *stdioRuntime {
	root, cancel := context.WithCancelCause(context.Background())
	rt := &stdioRuntime{
		p:             p,
		frames:        newFrameReader(stdin),
		conn:          newConn(stdout),
		stderr:        stderr,
		root:          root,
		rootCancel:    cancel,
		exit:          make(chan int, 1),
		logSlots:      make(chan struct{}, maxPendingLogs),
		deadlines:     newDeadlines(),
		timeout:       wire.RuntimeDefaultRequestTimeoutMilliseconds * time.Millisecond,
		deadline:      wire.RuntimeDefaultHandlerDeadlineMilliseconds * time.Millisecond,
		maxConcurrent: wire.RuntimeDefaultMaxConcurrentEvents,
		queueCapacity: wire.RuntimeDefaultQueueCapacity,
		live:          map[string]*eventTask{},
		work:          make(chan *eventTask),
	}
	rt.s = &session{plugin: p, io: rt, settings: Settings{}}
	return rt
}

func (rt *stdioRuntime) run() int {
	go rt.read()
	return <-rt.exit
}

func (rt *stdioRuntime) errorf(format string, args ...any) {
	rt.stderrMu.Lock()
	defer rt.stderrMu.Unlock()
	fmt.Fprintf(rt.stderr, format+"\n", args...)
}

// read is the only reader of stdin: it answers pings and cancels at once and never waits for a handler.
func (rt *stdioRuntime) read() {
	for {
		msg, err := rt.frames.next()
		if err != nil {
			var fe *FramingError
			if errors.As(err, &fe) {
				rt.errorf("[error] the host stream broke (%s): %s", fe.Code, fe.Message)
				rt.rootCancel(errors.New("host connection broke"))
				go rt.shutdown(1, true)
			} else {
				rt.rootCancel(errors.New("host connection closed"))
				go rt.shutdown(0, true)
			}
			return
		}
		if msg.Method == "" {
			rt.conn.deliver(msg)
			continue
		}
		if msg.ID == nil {
			continue // notifications are not part of v2; unknown ones are ignored
		}
		if !rt.onRequest(msg) {
			return // a refused handshake: the process exits without reading further
		}
		// Let the handler of what was just admitted run now (on one processor it would wait until the
		// reader found the pipe empty): its ACK and first request reach the host while the host is still
		// busy with the rest of its batch, not all of them after it.
		runtime.Gosched()
		// Let the handler of what was just admitted run now (with one processor it would wait until the
		// reader found the pipe empty): its ACK and first request go out while the host is still busy
		// with the rest of the batch, instead of all of them after it.
		runtime.Gosched()
	}
}

// onRequest handles one request; false when the runtime stops reading.
func (rt *stdioRuntime) onRequest(m *rpcMessage) bool {
	if m.Method == wire.MethodHostInitialize {
		return rt.initialize(m)
	}
	rt.mu.Lock()
	initialized := rt.init != nil
	rt.mu.Unlock()
	if !initialized {
		rt.conn.respondError(m.ID, wire.RPCNotInitialized, m.Method+" arrived before host.initialize; the plugin answers nothing else until the handshake", nil)
		return true
	}
	switch m.Method {
	case wire.MethodEventsMessage, wire.MethodEventsDeliver:
		rt.onEvent(m)
	case wire.MethodEventsCancel:
		rt.onCancel(m)
	case wire.MethodPluginPing:
		rt.onPing(m)
	case wire.MethodPluginStop:
		rt.onStop(m)
	case wire.MethodSettingsChanged:
		rt.onSettingsChanged(m)
	default:
		rt.conn.respondError(m.ID, wire.RPCMethodNotFound, fmt.Sprintf("method %q is not part of protocol v2 for plugins", m.Method), nil)
	}
	return true
}

func (rt *stdioRuntime) invalidParams(m *rpcMessage, issues []Issue) {
	msgs := make([]string, len(issues))
	for i, is := range issues {
		msgs[i] = is.Message
	}
	rt.conn.respondError(m.ID, wire.RPCInvalidParams, fmt.Sprintf("%s params are invalid: %s", m.Method, strings.Join(msgs, "; ")), map[string]any{"issues": issues})
}

func (rt *stdioRuntime) initialize(m *rpcMessage) bool {
	rt.mu.Lock()
	already := rt.init != nil
	rt.mu.Unlock()
	if already {
		rt.conn.respondError(m.ID, wire.RPCAlreadyInitialized, "host.initialize was already answered; it is sent once per process", nil)
		return true
	}
	var init wire.HostInitializeParams
	issues := decodeParams(m, &init)
	if issues == nil {
		req := func(path, v string) {
			if v == "" {
				issues = append(issues, Issue{"params.field.required", path, path + " is required"})
			}
		}
		req("pluginId", init.PluginID)
		req("instanceId", init.InstanceID)
		req("directories.pluginDirectory", init.Directories.PluginDirectory)
		if len(init.Token) < 32 {
			issues = append(issues, Issue{"params.field.invalid", "token", "token must have at least 32 characters"})
		}
		if len(init.SupportedProtocolVersions) == 0 {
			issues = append(issues, Issue{"params.field.required", "supportedProtocolVersions", "supportedProtocolVersions needs at least one version"})
		}
		if init.Encoding != "json" {
			issues = append(issues, Issue{"params.field.invalid", "encoding", `encoding must be "json"`})
		}
	}
	if issues != nil {
		rt.invalidParams(m, issues)
		return true
	}
	refusal := ""
	switch {
	case !slices.Contains(init.SupportedProtocolVersions, wire.ProtocolVersion):
		refusal = fmt.Sprintf("the host supports protocol versions %v but this plugin speaks %d; update the host or rebuild the plugin with a matching SDK", init.SupportedProtocolVersions, wire.ProtocolVersion)
	case init.PluginID != rt.p.pluginID:
		refusal = fmt.Sprintf("host.initialize is for plugin %q but this process is plugin %q; make manifest.json and the plugin use the same pluginId, rebuild and reinstall", init.PluginID, rt.p.pluginID)
	case rt.p.intercepts && rt.p.manifest != nil && !rt.p.hasPermission(wire.PermissionMessagesIntercept):
		refusal = sdkError(wire.ErrSDKInterceptPermissionMissing, "plugin %q calls Intercepts() but manifest.json does not declare the \"messages.intercept\" permission, so the host would ignore every intercept", rt.p.pluginID).Error()
	}
	if refusal != "" {
		rt.conn.respondError(m.ID, wire.RPCPluginError, refusal, nil)
		rt.errorf("[error] %s", refusal)
		go rt.shutdown(1, false)
		return false
	}
	limits := init.Runtime
	rt.mu.Lock()
	rt.init = &init
	rt.timeout = time.Duration(limits.GetRequestTimeoutMilliseconds()) * time.Millisecond
	rt.deadline = time.Duration(limits.GetHandlerDeadlineMilliseconds()) * time.Millisecond
	rt.maxConcurrent = int(max(1, limits.GetMaxConcurrentEvents()))
	rt.queueCapacity = int(max(0, limits.GetQueueCapacity()))
	rt.mu.Unlock()
	// The reader goroutine runs this, so changing the frame limits here is race-free.
	rt.frames.maxHeader = int(limits.GetMaxHeaderLength())
	rt.frames.maxPayload = int(limits.GetMaxPayloadLength())
	settings := Settings{}
	for k, v := range init.Settings {
		settings[k] = v
	}
	dirs := init.Directories
	rt.s.mu.Lock()
	rt.s.settings = settings
	rt.s.directories = &dirs
	rt.s.mu.Unlock()
	var capabilities []string
	for _, method := range wire.Methods {
		if method.Direction == "hostToPlugin" && method.Method != wire.MethodHostInitialize {
			capabilities = append(capabilities, method.Method)
		}
	}
	rt.conn.respond(m.ID, wire.HostInitializeResult{
		ProtocolVersion: wire.ProtocolVersion,
		PluginID:        rt.p.pluginID,
		SDKName:         SDKName,
		SDKVersion:      SDKVersion,
		Capabilities:    capabilities,
		Encoding:        "json",
	})
	go rt.start()
	return true
}

// start runs OnStart after the handshake answer (it may already send); events wait for it.
func (rt *stdioRuntime) start() {
	if rt.p.onStart != nil {
		if err := safeLifecycle(rt.p.onStart, newLifecycle(rt.root, rt.s)); err != nil {
			rt.log(LevelError, "OnStart failed, stopping: "+err.Error(), nil)
			rt.shutdown(1, false)
			return
		}
	}
	rt.mu.Lock()
	rt.started = true
	rt.mu.Unlock()
	rt.pump()
}

func safeLifecycle(h LifecycleHandler, ctx *Lifecycle) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return h(ctx)
}

func (rt *stdioRuntime) onPing(m *rpcMessage) {
	var params wire.PluginPingParams
	if issues := decodeParams(m, &params); issues != nil {
		rt.invalidParams(m, issues)
		return
	}
	rt.mu.Lock()
	inFlight, queued := int64(rt.running), int64(len(rt.queue))
	rt.mu.Unlock()
	rt.conn.respond(m.ID, wire.PluginPingResult{Nonce: params.Nonce, InFlightEvents: inFlight, QueuedEvents: queued})
}

// onStop answers at once; then waiting events are refused, every handler's context is cancelled (a
// reply or send that waits for the host gives up, and later ones are not sent), running handlers finish
// (their completions still go out), OnStop runs, and the exit is 0.
func (rt *stdioRuntime) onStop(m *rpcMessage) {
	var params wire.PluginStopParams
	if issues := decodeParams(m, &params); issues != nil {
		rt.invalidParams(m, issues)
		return
	}
	rt.conn.respond(m.ID, wire.PluginStopResult{Accepted: true})
	rt.mu.Lock()
	if rt.stopping {
		rt.mu.Unlock()
		return
	}
	rt.stopping = true // from now on events.message is answered Stopping
	rt.mu.Unlock()
	reason := params.GetReason()
	rt.rootCancel(&stopCause{reason: string(reason)})
	go rt.shutdown(0, false)
}

func (rt *stdioRuntime) onSettingsChanged(m *rpcMessage) {
	var params wire.SettingsChangedParams
	if issues := decodeParams(m, &params); issues != nil {
		rt.invalidParams(m, issues)
		return
	}
	next := Settings(params.Settings)
	go func() {
		previous := rt.s.currentSettings()
		if h := rt.p.onSettingsChanged; h != nil {
			lc := newLifecycle(rt.root, rt.s)
			lc.settings = next
			if err := safeLifecycle(func(c *Lifecycle) error { return h(c, previous) }, lc); err != nil {
				rt.log(LevelError, "OnSettingsChanged failed; keeping the previous settings: "+err.Error(), nil)
				rt.conn.respondError(m.ID, wire.RPCPluginError, "OnSettingsChanged failed: "+err.Error(), nil)
				return
			}
		}
		rt.s.mu.Lock()
		rt.s.settings = next
		rt.s.mu.Unlock()
		rt.conn.respond(m.ID, wire.SettingsChangedResult{Applied: true})
	}()
}

// shutdown ends the runtime once: refuses waiting events, waits for running handlers (after plugin.stop;
// the host bounds that with its grace period), runs OnStop, flushes the frames and exits.
func (rt *stdioRuntime) shutdown(code int, orphan bool) {
	rt.mu.Lock()
	if rt.exiting {
		rt.mu.Unlock()
		return
	}
	rt.exiting = true
	rt.stopping = true
	waiting := rt.queue
	rt.queue = nil
	for _, t := range waiting {
		delete(rt.live, t.event.EventID)
	}
	var idle chan struct{}
	if rt.running > 0 {
		rt.idle = make(chan struct{})
		idle = rt.idle
	}
	started := rt.started
	rt.mu.Unlock()
	for _, t := range waiting {
		rt.deadlines.stop(&t.due)
		t.cancel(nil)
		rt.conn.respondError(t.reqID, wire.RPCStopping, "the plugin stopped before this queued event started", nil)
	}
	if idle != nil && !orphan {
		<-idle
	}
	if rt.p.onStop != nil && started {
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := safeLifecycle(rt.p.onStop, newLifecycle(rt.root, rt.s)); err != nil {
				rt.log(LevelError, "OnStop failed: "+err.Error(), nil)
			}
		}()
		if orphan {
			select {
			case <-done:
			case <-time.After(orphanStop):
			}
		} else {
			<-done
		}
	}
	rt.rootCancel(errors.New("the plugin stopped"))
	rt.conn.flush(2 * time.Second)
	rt.exitOnce.Do(func() { rt.exit <- code })
}
