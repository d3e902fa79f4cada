package hostsdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"plugin-host.dev/sdk-go/v2/hostsdk"
	"plugin-host.dev/sdk-go/v2/hostsdk/hostsdktest"
	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

func echoPlugin(t *testing.T) *hostsdk.Plugin {
	t.Helper()
	p := hostsdk.MustLoad("testdata/manifest.json")
	p.Command("echo", func(ctx *hostsdk.Context) error {
		_, err := ctx.ReplyMarkdown(hostsdk.AtUser(ctx.Sender()), hostsdk.Text(" said "), hostsdk.Literal(ctx.Args()))
		return err
	})
	p.Command("fail", func(ctx *hostsdk.Context) error {
		if ctx.Args() == "panic" {
			panic("boom")
		}
		if ctx.Args() == "plain" {
			return errors.New("plain failure")
		}
		return hostsdk.NewHandlerError("echo.failed", "it failed on purpose", map[string]any{"n": 1})
	})
	return p
}

func TestEchoRepliesInMarkdownWithTheSenderMentioned(t *testing.T) {
	h := hostsdktest.Start(t, echoPlugin(t), hostsdktest.Options{})
	if h.Init.SDKName != hostsdk.SDKName || h.Init.PluginID != "com.example.goecho" || h.Init.ProtocolVersion != 2 {
		t.Fatalf("handshake answer %+v", h.Init)
	}
	d := h.Send(hostsdktest.Message{Text: "/echo  **hi**"})
	if d.Ack == nil || !d.Ack.Accepted || d.Ack.Intercepted || d.Ack.EventID != d.Event.EventID {
		t.Fatalf("ack %+v err %v", d.Ack, d.Err)
	}
	if d.Completion == nil || d.Completion.Error != nil || d.Completion.DurationMs == nil {
		t.Fatalf("completion %+v", d.Completion)
	}
	replies := h.RepliesTo(d.Event.EventID)
	if len(replies) != 1 || replies[0].Format != "markdown" || replies[0].Target.Type != "group" {
		t.Fatalf("replies %+v", replies)
	}
	parts := replies[0].Parts
	mention, ok := parts[0].(wire.MessagePartMentionUser)
	if !ok || mention.ID != "test-user" || mention.DisplayName != "Test User" {
		t.Fatalf("first part %#v", parts[0])
	}
	text, ok := parts[2].(wire.MessagePartText)
	if !ok || !text.Literal || text.Text != "**hi**" {
		t.Fatalf("literal part %#v", parts[2])
	}
	if got := replies[0].Text(); got != "@test-user said **hi**" {
		t.Fatalf("text %q", got)
	}
}

func TestAliasAndUnmatchedMessages(t *testing.T) {
	h := hostsdktest.Start(t, echoPlugin(t), hostsdktest.Options{})
	if d := h.Send(hostsdktest.Message{Text: "/e x"}); d.Ack == nil || !d.Ack.Accepted {
		t.Fatalf("alias: %+v", d)
	}
	// No command matched and no OnMessage: declined at once, nothing follows.
	d := h.Send(hostsdktest.Message{Text: "hello"})
	if d.Ack == nil || d.Ack.Accepted || d.Completion != nil {
		t.Fatalf("unmatched: %+v", d)
	}
}

// ctx.Text() is the message as written, command word included; ctx.Content() is its deprecated old name.
func TestTextIsTheMessagesText(t *testing.T) {
	p := hostsdk.MustLoad("testdata/manifest.json")
	seen := make(chan [3]string, 1)
	p.Command("echo", func(ctx *hostsdk.Context) error {
		seen <- [3]string{ctx.Text(), ctx.Content(), ctx.Args()}
		return nil
	})
	h := hostsdktest.Start(t, p, hostsdktest.Options{})
	h.Send(hostsdktest.Message{Text: "/echo  two words"})
	if got := <-seen; got != [3]string{"/echo  two words", "/echo  two words", "two words"} {
		t.Fatalf("text, content, args: %q", got)
	}
}

func TestHandlerFailuresAreReportedInTheCompletion(t *testing.T) {
	h := hostsdktest.Start(t, echoPlugin(t), hostsdktest.Options{})
	cases := map[string]string{"": "echo.failed", "plain": wire.CodePluginHandlerFailed, "panic": wire.CodePluginHandlerFailed}
	for args, code := range cases {
		d := h.Send(hostsdktest.Message{Text: "/fail " + args})
		if d.Ack == nil || !d.Ack.Accepted || d.Completion == nil || d.Completion.Error == nil || d.Completion.Error.Code != code {
			t.Fatalf("%q: %+v / %+v", args, d.Ack, d.Completion)
		}
	}
	// log.write calls are answered asynchronously; the line arrives soon after the completion.
	found := false
	for end := time.Now().Add(2 * time.Second); !found && time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		for _, l := range h.Logs() {
			found = found || (l.Level == "error" && strings.Contains(l.Message, "panic: boom"))
		}
	}
	if !found {
		t.Fatalf("the panic is not in the log: %+v", h.Logs())
	}
}

func TestLocalChecksRefuseWhatTheHostWould(t *testing.T) {
	p := hostsdk.MustLoad("testdata/manifest.json")
	var errs []error
	p.Command("echo", func(ctx *hostsdk.Context) error {
		_, err := ctx.ReplyMarkdown(hostsdk.Text("**x**"))
		errs = append(errs, err)
		_, err = ctx.Group("g1").Send(hostsdk.Text("x"))
		errs = append(errs, err)
		_, err = ctx.Reply(hostsdk.Text("  "))
		errs = append(errs, err)
		_, err = ctx.Reply(hostsdk.AtUsers())
		errs = append(errs, err)
		return nil
	})
	h := hostsdktest.Start(t, p, hostsdktest.Options{})
	h.Send(hostsdktest.Message{Text: "/echo", Conversation: "c2c"})
	want := []string{wire.CodeMessageFormatUnsupportedTarget, wire.CodeMessagePermissionDenied, wire.CodeMessageEmpty, wire.CodeMessageMentionTooMany}
	for i, code := range want {
		var me *hostsdk.MessageError
		if !errors.As(errs[i], &me) || me.Code != code || me.FromHost {
			t.Fatalf("check %d: want %s, got %v", i, code, errs[i])
		}
	}
	if len(h.Replies()) != 0 {
		t.Fatalf("refused messages reached the host: %+v", h.Replies())
	}
}

func TestEveryoneMentionNeedsMarkdown(t *testing.T) {
	raw, err := os.ReadFile("testdata/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "manifest.json")
	granted := strings.Replace(string(raw), `["messages.reply"]`, `["messages.reply", "messages.mentionEveryone"]`, 1)
	if err := os.WriteFile(path, []byte(granted), 0o600); err != nil {
		t.Fatal(err)
	}
	p := hostsdk.MustLoad(path)
	var text, markdown error
	p.Command("echo", func(ctx *hostsdk.Context) error {
		_, text = ctx.Reply(hostsdk.AtEveryone(), hostsdk.Text(" news"))
		_, markdown = ctx.ReplyMarkdown(hostsdk.AtEveryone(), hostsdk.Text(" news"))
		return nil
	})
	h := hostsdktest.Start(t, p, hostsdktest.Options{})
	h.Send(hostsdktest.Message{Text: "/echo"})
	var me *hostsdk.MessageError
	if !errors.As(text, &me) || me.Code != wire.CodeMessageMentionUnsupportedFormat || me.FromHost {
		t.Fatalf("text: want %s, got %v", wire.CodeMessageMentionUnsupportedFormat, text)
	}
	if markdown != nil {
		t.Fatalf("markdown: %v", markdown)
	}
	if len(h.Replies()) != 1 {
		t.Fatalf("want the Markdown reply only, got %+v", h.Replies())
	}
}

func TestExpiredReplyWindow(t *testing.T) {
	p := hostsdk.MustLoad("testdata/manifest.json")
	var got error
	p.Command("echo", func(ctx *hostsdk.Context) error {
		_, got = ctx.Reply(hostsdk.Text("late"))
		return nil
	})
	h := hostsdktest.Start(t, p, hostsdktest.Options{})
	h.Send(hostsdktest.Message{Text: "/echo", ReplyWindow: -time.Second})
	var me *hostsdk.MessageError
	if !errors.As(got, &me) || me.Code != wire.CodeMessageReferenceExpired {
		t.Fatalf("got %v", got)
	}
}

// blocking is a plugin whose "slow" handler waits until released or cancelled.
func blocking(t *testing.T, started chan<- string, release <-chan struct{}, causes chan<- error) *hostsdk.Plugin {
	p := hostsdk.MustLoad("testdata/manifest.json")
	p.Command("slow", func(ctx *hostsdk.Context) error {
		started <- ctx.Event().EventID
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			causes <- context.Cause(ctx)
			return context.Cause(ctx)
		}
	})
	return p
}

func TestOverloadedBeyondMaxConcurrentEventsAndPingWhileBusy(t *testing.T) {
	started, release, causes := make(chan string, 4), make(chan struct{}), make(chan error, 4)
	h := hostsdktest.Start(t, blocking(t, started, release, causes), hostsdktest.Options{MaxConcurrentEvents: 1})
	first := h.Deliver(h.Event(hostsdktest.Message{Text: "/slow"}))
	<-started
	// The ACK goes out before the handler ends.
	if h.WaitAck(first); first.Ack == nil || !first.Ack.Accepted {
		t.Fatalf("first ack %+v", first)
	}
	if ping := h.Ping("n1"); ping.Nonce != "n1" || ping.InFlightEvents != 1 {
		t.Fatalf("ping %+v", ping)
	}
	second := h.WaitAck(h.Deliver(h.Event(hostsdktest.Message{Text: "/slow"})))
	if second.Err == nil || second.Err.Code != wire.RPCOverloaded {
		t.Fatalf("second %+v", second)
	}
	close(release)
	if h.WaitCompleted(first); first.Completion == nil || first.Completion.Error != nil {
		t.Fatalf("completion %+v", first.Completion)
	}
}

func TestCancelAndDeadlineCancelTheHandlersContext(t *testing.T) {
	started, release, causes := make(chan string, 4), make(chan struct{}), make(chan error, 4)
	h := hostsdktest.Start(t, blocking(t, started, release, causes), hostsdktest.Options{MaxConcurrentEvents: 2, HandlerDeadline: 200 * time.Millisecond})
	d := h.Deliver(h.Event(hostsdktest.Message{Text: "/slow"}))
	<-started
	if !h.Cancel(d.Event.EventID, "ackTimeout") {
		t.Fatal("cancel of a running event answered false")
	}
	var se *hostsdk.SDKError
	if cause := <-causes; !errors.As(cause, &se) || se.Code != wire.ErrSDKEventCancelled || !hostsdk.IsCancelled(cause) {
		t.Fatalf("cause %v", cause)
	}
	if h.WaitCompleted(d); d.Completion == nil || d.Completion.Error == nil || d.Completion.Error.Code != wire.ErrSDKEventCancelled {
		t.Fatalf("completion %+v", d.Completion)
	}
	if h.Cancel("no-such-event", "deadline") {
		t.Fatal("cancel of an unknown event answered true")
	}
	// The deadline (200 ms here) cancels without any events.cancel.
	d2 := h.Deliver(h.Event(hostsdktest.Message{Text: "/slow"}))
	<-started
	if cause := <-causes; !errors.As(cause, &se) || !strings.Contains(cause.Error(), "deadline") {
		t.Fatalf("deadline cause %v", cause)
	}
	h.WaitCompleted(d2)
}

func TestStopWaitsForRunningHandlersThenExits(t *testing.T) {
	started, release, causes := make(chan string, 4), make(chan struct{}), make(chan error, 4)
	p := blocking(t, started, release, causes)
	var stopped atomic.Bool
	p.OnStop(func(*hostsdk.Lifecycle) error { stopped.Store(true); return nil })
	h := hostsdktest.Start(t, p, hostsdktest.Options{MaxConcurrentEvents: 2})
	d := h.Deliver(h.Event(hostsdktest.Message{Text: "/slow"}))
	<-started
	if code := h.Stop("operator"); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	// plugin.stop cancels the handler's context; its completion still went out before the exit.
	if cause := <-causes; cause == nil || !strings.Contains(cause.Error(), "plugin.stop (operator)") {
		t.Fatalf("cause %v", cause)
	}
	if h.WaitCompleted(d); d.Completion == nil {
		t.Fatal("no completion")
	}
	if !stopped.Load() {
		t.Fatal("OnStop did not run")
	}
}

func TestAHandlerFinishingAfterStopStillReplies(t *testing.T) {
	started := make(chan string, 1)
	p := hostsdk.MustLoad("testdata/manifest.json")
	// The handler wraps up when plugin.stop ends its context, and answers then (spec 3.7: it finishes the event).
	p.Command("slow", func(ctx *hostsdk.Context) error {
		started <- ctx.Event().EventID
		<-ctx.Done()
		_, err := ctx.Reply(hostsdk.Text("finished after the stop"))
		return err
	})
	h := hostsdktest.Start(t, p, hostsdktest.Options{MaxConcurrentEvents: 2})
	d := h.Deliver(h.Event(hostsdktest.Message{Text: "/slow"}))
	<-started
	if code := h.Stop("operator"); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if h.WaitCompleted(d); d.Completion == nil || d.Completion.Error != nil {
		t.Fatalf("completion %+v", d.Completion)
	}
	replies := h.Replies()
	if len(replies) != 1 || replies[0].Text() != "finished after the stop" {
		t.Fatalf("replies %+v", replies)
	}
}

func TestEventsAfterStopAreRefusedWithStopping(t *testing.T) {
	started, release := make(chan string, 4), make(chan struct{})
	p := hostsdk.MustLoad("testdata/manifest.json")
	// A handler that ignores its cancellation keeps the process stopping for a while.
	p.Command("slow", func(ctx *hostsdk.Context) error {
		started <- ctx.Event().EventID
		<-release
		return nil
	})
	p.Command("echo", func(*hostsdk.Context) error { return nil })
	h := hostsdktest.Start(t, p, hostsdktest.Options{MaxConcurrentEvents: 2})
	h.Deliver(h.Event(hostsdktest.Message{Text: "/slow"}))
	<-started
	h.Call(wire.MethodPluginStop, map[string]any{})
	d := h.WaitAck(h.Deliver(h.Event(hostsdktest.Message{Text: "/echo"})))
	if d.Err == nil || d.Err.Code != wire.RPCStopping {
		t.Fatalf("got %+v", d)
	}
	close(release)
	h.WaitExit()
}

func TestExitOnStdinEOF(t *testing.T) {
	h := hostsdktest.Start(t, echoPlugin(t), hostsdktest.Options{})
	if code := h.Close(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

func TestSettingsFromTheHandshakeAndSettingsChanged(t *testing.T) {
	p := hostsdk.MustLoad("testdata/manifest.json")
	seen := make(chan string, 4)
	p.Command("echo", func(ctx *hostsdk.Context) error {
		seen <- ctx.Settings().String("greeting") + "|" + ctx.Directories().PluginDataDirectory
		return nil
	})
	p.OnSettingsChanged(func(ctx *hostsdk.Lifecycle, previous hostsdk.Settings) error {
		if ctx.Settings().String("greeting") == "" {
			return errors.New("greeting must not be empty")
		}
		return nil
	})
	dirs := &hostsdk.Directories{PluginDirectory: "/p", PluginDataDirectory: "/d", PluginConfigDirectory: "/c", PluginCacheDirectory: "/k"}
	h := hostsdktest.Start(t, p, hostsdktest.Options{Settings: map[string]any{"greeting": "hello"}, Directories: dirs})
	if !contains(h.Init.Capabilities, wire.MethodSettingsChanged) {
		t.Fatalf("capabilities %v", h.Init.Capabilities)
	}
	h.Send(hostsdktest.Message{Text: "/echo"})
	if got := <-seen; got != "hello|/d" {
		t.Fatalf("got %q", got)
	}
	if err := h.ChangeSettings(map[string]any{"greeting": ""}); err == nil || err.Code != wire.RPCPluginError {
		t.Fatalf("refusal %v", err)
	}
	if err := h.ChangeSettings(map[string]any{"greeting": "hey"}); err != nil {
		t.Fatal(err)
	}
	h.Send(hostsdktest.Message{Text: "/echo"})
	if got := <-seen; got != "hey|/d" {
		t.Fatalf("got %q", got)
	}
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func TestWithoutHostStdioItPrintsHelpAndExits2(t *testing.T) {
	var out, errOut bytes.Buffer
	code := echoPlugin(t).RunStdio(nil, strings.NewReader(""), &out, &errOut)
	if code != hostsdk.UsageExitCode || out.Len() != 0 || !strings.Contains(errOut.String(), "--host-stdio") {
		t.Fatalf("code %d stdout %q stderr %q", code, out.String(), errOut.String())
	}
}

func TestInterceptWithoutThePermissionRefusesTheHandshake(t *testing.T) {
	p := echoPlugin(t).Intercepts()
	var out, errOut bytes.Buffer
	init := `{"jsonrpc":"2.0","id":1,"method":"host.initialize","params":{"supportedProtocolVersions":[2],"instanceId":"i","pluginId":"com.example.goecho","hostVersion":"t","directories":{"pluginDirectory":"/p","pluginDataDirectory":"/d","pluginConfigDirectory":"/c","pluginCacheDirectory":"/k"},"token":"0123456789abcdef0123456789abcdef","encoding":"json"}}`
	in := strings.NewReader(frameOf(init))
	code := p.RunStdio([]string{"--host-stdio"}, in, &out, &errOut)
	if code != 1 || !strings.Contains(out.String(), `"code":-32000`) || !strings.Contains(out.String(), wire.ErrSDKInterceptPermissionMissing) {
		t.Fatalf("code %d out %q", code, out.String())
	}
}

func TestRequestsBeforeTheHandshakeAreNotInitialized(t *testing.T) {
	var out, errOut bytes.Buffer
	in := strings.NewReader(frameOf(`{"jsonrpc":"2.0","id":7,"method":"plugin.ping","params":{}}`))
	if code := echoPlugin(t).RunStdio([]string{"--host-stdio"}, in, &out, &errOut); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out.String(), `"id":7,"error":{"code":-32003`) {
		t.Fatalf("out %q", out.String())
	}
}

func TestABrokenFrameFromTheHostEndsTheProcess(t *testing.T) {
	var out, errOut bytes.Buffer
	code := echoPlugin(t).RunStdio([]string{"--host-stdio"}, strings.NewReader("hello\n"), &out, &errOut)
	if code != 1 || out.Len() != 0 || !strings.Contains(errOut.String(), wire.CodeFramingHeaderMalformed) {
		t.Fatalf("code %d out %q err %q", code, out.String(), errOut.String())
	}
}

func frameOf(payload string) string {
	return "Content-Length: " + itoa(len(payload)) + "\r\n\r\n" + payload
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

// The host sends the next event as soon as it has events.completed; with one slot, that event must
// find the slot free already.
func TestTheSlotIsFreeWhenTheCompletionArrives(t *testing.T) {
	h := hostsdktest.Start(t, echoPlugin(t), hostsdktest.Options{MaxConcurrentEvents: 1, QueueCapacity: 1})
	for i := 0; i < 200; i++ {
		d := h.Send(hostsdktest.Message{Text: "/echo x"})
		if d.Err != nil || d.Ack == nil || !d.Ack.Accepted {
			t.Fatalf("event %d: %+v %v", i, d.Ack, d.Err)
		}
	}
}

func TestHostRefusalsBecomeTypedErrors(t *testing.T) {
	p := hostsdk.MustLoad("testdata/manifest.json")
	got := make(chan error, 2)
	p.Command("echo", func(ctx *hostsdk.Context) error {
		_, err := ctx.Reply(hostsdk.Text("hi"))
		got <- err
		_, err = ctx.Reply(hostsdk.Text("again"))
		got <- err
		return err
	})
	calls := 0
	h := hostsdktest.Start(t, p, hostsdktest.Options{Refuse: func(method string, _ json.RawMessage) *hostsdktest.RPCError {
		if method != wire.MethodMessagesReply {
			return nil
		}
		calls++
		if calls == 1 {
			return &hostsdktest.RPCError{Code: wire.RPCMessageRejected, Message: "too late", Data: json.RawMessage(`{"code":"message.reference.expired"}`)}
		}
		return &hostsdktest.RPCError{Code: wire.RPCInternalError, Message: "the provider failed"}
	}})
	d := h.Send(hostsdktest.Message{Text: "/echo"})
	var me *hostsdk.MessageError
	if err := <-got; !errors.As(err, &me) || me.Code != wire.CodeMessageReferenceExpired || !me.FromHost {
		t.Fatalf("first reply: %v", err)
	}
	var hc *hostsdk.HostCallError
	if err := <-got; !errors.As(err, &hc) || hc.Code != wire.RPCInternalError || hc.Method != wire.MethodMessagesReply {
		t.Fatalf("second reply: %v", err)
	}
	if d.Completion == nil || d.Completion.Error == nil || d.Completion.Error.Code != wire.CodePluginHandlerFailed {
		t.Fatalf("completion %+v", d.Completion)
	}
}

func TestSendsInAHandlerSpeakAsTheEventsBot(t *testing.T) {
	raw, err := os.ReadFile("testdata/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "manifest.json")
	granted := strings.Replace(string(raw), `["messages.reply"]`, `["messages.reply", "messages.send"]`, 1)
	if err := os.WriteFile(path, []byte(granted), 0o600); err != nil {
		t.Fatal(err)
	}
	p := hostsdk.MustLoad(path)
	var results []*wire.SendResult
	// A send outside any handler names no event.
	p.OnStart(func(ctx *hostsdk.Lifecycle) error {
		_, err := ctx.Group("g-start").Send(hostsdk.Text("from OnStart"))
		return err
	})
	p.Command("echo", func(ctx *hostsdk.Context) error {
		for _, s := range []*hostsdk.Sender{ctx.Group("g2"), ctx.To(wire.Target{Type: "group", ID: "g3", BotAccountID: "other-bot"})} {
			r, err := s.Send(hostsdk.Text("x"))
			if err != nil {
				return err
			}
			results = append(results, r)
		}
		return nil
	})
	h := hostsdktest.Start(t, p, hostsdktest.Options{})
	d := h.Send(hostsdktest.Message{Text: "/echo"})
	if d.Completion == nil || d.Completion.Error != nil {
		t.Fatalf("completion: %+v", d.Completion)
	}
	want := []wire.Target{{Type: "group", ID: "g-start"}, {Type: "group", ID: "g2", BotAccountID: "bot-1"}, {Type: "group", ID: "g3", BotAccountID: "other-bot"}}
	got := h.Replies()
	if len(got) != 3 || got[0].Target != want[0] || got[1].Target != want[1] || got[2].Target != want[2] {
		t.Fatalf("want sends to %+v, got %+v", want, got)
	}
	// Sends inside the handler name its event (messages.send eventId); the one from OnStart names none.
	if got[0].EventID != "" || got[1].EventID != d.Event.EventID || got[2].EventID != d.Event.EventID || d.Event.EventID == "" {
		t.Fatalf("event ids of the sends: %q, %q, %q; the event is %q", got[0].EventID, got[1].EventID, got[2].EventID, d.Event.EventID)
	}
	if results[0].Target != want[1] {
		t.Fatalf("the result does not echo the bot: %+v", results[0])
	}
}

// On one processor (the default of a stdio plugin) a handler that computes without pausing does not hold
// up the runtime: the ping is answered while it runs, and events.cancel reaches its context.
func TestOneProcessorAnswersPingAndCancelWhileAHandlerComputes(t *testing.T) {
	before := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })
	started := make(chan struct{}, 1)
	p := hostsdk.MustLoad("testdata/manifest.json")
	p.Command("slow", func(ctx *hostsdk.Context) error {
		started <- struct{}{}
		n := 0
		for ctx.Err() == nil {
			n++ // no call that parks the goroutine: only preemption lets others run
		}
		return context.Cause(ctx)
	})
	h := hostsdktest.Start(t, p, hostsdktest.Options{MaxConcurrentEvents: 2})
	d := h.Deliver(h.Event(hostsdktest.Message{Text: "/slow"}))
	<-started
	if ping := h.Ping("busy"); ping.Nonce != "busy" || ping.InFlightEvents != 1 {
		t.Fatalf("ping %+v", ping)
	}
	if !h.Cancel(d.Event.EventID, "ackTimeout") {
		t.Fatal("cancel of the computing handler answered false")
	}
	if h.WaitCompleted(d); d.Completion == nil || d.Completion.Error == nil || d.Completion.Error.Code != wire.ErrSDKEventCancelled {
		t.Fatalf("completion %+v", d.Completion)
	}
}

func TestAHandlersLoggerNamesItsEventAndThePluginsOwnLoggerNone(t *testing.T) {
	p := hostsdk.MustLoad("testdata/manifest.json")
	p.OnStart(func(ctx *hostsdk.Lifecycle) error {
		ctx.Log().Info("ready", nil)
		return nil
	})
	p.Command("echo", func(ctx *hostsdk.Context) error {
		ctx.Log().Info("answered", map[string]any{"args": ctx.Args()})
		ctx.Log().With("step", 2).Warn("warned", "args", ctx.Args())
		return nil
	})
	h := hostsdktest.Start(t, p, hostsdktest.Options{})
	d := h.Send(hostsdktest.Message{Text: "/echo hi"})
	if d.Ack == nil || !d.Ack.Accepted {
		t.Fatalf("ack %+v", d.Ack)
	}
	// log.write calls are answered asynchronously; wait for both lines.
	var ready, answered, warned *hostsdktest.LogEntry
	for end := time.Now().Add(2 * time.Second); (ready == nil || answered == nil || warned == nil) && time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		for _, l := range h.Logs() {
			l := l
			switch l.Message {
			case "ready":
				ready = &l
			case "answered":
				answered = &l
			case "warned":
				warned = &l
			}
		}
	}
	if ready == nil || answered == nil || warned == nil {
		t.Fatalf("lines missing: %+v", h.Logs())
	}
	if answered.EventID != d.Event.EventID || answered.Fields["args"] != "hi" {
		t.Fatalf("the handler's line names event %q, want %q: %+v", answered.EventID, d.Event.EventID, answered)
	}
	// The slog way: attributes of With and of the call, the level named as log.write names it.
	if warned.Level != "warn" || warned.EventID != d.Event.EventID || warned.Fields["args"] != "hi" || warned.Fields["step"] != float64(2) {
		t.Fatalf("the slog line arrived as %+v", warned)
	}
	if ready.EventID != "" {
		t.Fatalf("OnStart's line names event %q", ready.EventID)
	}
}
