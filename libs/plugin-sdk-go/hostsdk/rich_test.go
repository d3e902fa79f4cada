package hostsdk_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"plugin-host.dev/sdk-go/v2/hostsdk"
	"plugin-host.dev/sdk-go/v2/hostsdk/hostsdktest"
	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// Image and file parts, keyboards and the event types other than messages (docs/protocol/v2.md 5.4, 5.5,
// 7.1): the builders and their refusals, the handlers through the test host (stdio) and over HTTP.

const richManifest = `{
  "pluginId": "com.example.gorich", "name": "Go rich", "version": "1.0.0", "author": "Example",
  "protocolVersion": 2, "sdkVersion": "2.0.0",
  "transport": { "type": "stdio-jsonrpc", "stdio": { "command": "./gorich", "args": ["--host-stdio"] } },
  "eventSubscriptions": [{ "eventType": "message.created" }, { "eventType": "interaction.created" },
    { "eventType": "bot.added" }, { "eventType": "bot.removed" }, { "eventType": "conversation.opened" }],
  "permissions": ["messages.reply"],
  "commands": [{ "name": "vote" }, { "name": "cat" }, { "name": "try" }]
}`

func richPlugin(t *testing.T, manifest string) *hostsdk.Plugin {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := hostsdk.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func messageCode(err error) string {
	var me *hostsdk.MessageError
	if errors.As(err, &me) {
		return me.Code
	}
	return ""
}

func buttons(n int, prefix string) []wire.Button {
	out := make([]wire.Button, n)
	for i := range out {
		out[i] = hostsdk.CallbackButton(prefix+strconv.Itoa(i), prefix+":"+strconv.Itoa(i))
	}
	return out
}

func TestKeyboardLimitsAreCheckedAgainstTheProtocol(t *testing.T) {
	largest := make([][]wire.Button, wire.LimitMaxKeyboardRows)
	for r := range largest {
		largest[r] = buttons(wire.LimitMaxKeyboardButtonsPerRow, "r"+strconv.Itoa(r))
	}
	if err := hostsdk.CheckKeyboard(hostsdk.Keyboard(largest...)); err != nil {
		t.Fatalf("the largest keyboard was refused: %v", err)
	}
	tooManyRows := make([][]wire.Button, wire.LimitMaxKeyboardRows+1)
	for r := range tooManyRows {
		tooManyRows[r] = buttons(1, "r"+strconv.Itoa(r))
	}
	long := hostsdk.CallbackButton(strings.Repeat("x", wire.LimitMaxButtonLabelChars+1), "d")
	dupA, dupB := hostsdk.CallbackButton("A", "a"), hostsdk.CallbackButton("B", "b")
	dupA.ID, dupB.ID = "same", "same"
	badID := hostsdk.CallbackButton("A", "a")
	badID.ID = "has space"
	cases := []struct {
		name string
		k    wire.Keyboard
		code string
	}{
		{"too many rows", hostsdk.Keyboard(tooManyRows...), wire.CodeMessageKeyboardTooLarge},
		{"too many buttons in a row", hostsdk.Keyboard(buttons(wire.LimitMaxKeyboardButtonsPerRow+1, "b")), wire.CodeMessageKeyboardTooLarge},
		{"no rows", hostsdk.Keyboard(), wire.CodeMessageKeyboardTooLarge},
		{"an empty row", hostsdk.Keyboard([]wire.Button{}), wire.CodeMessageKeyboardTooLarge},
		{"a label too long", hostsdk.Keyboard([]wire.Button{long}), wire.CodeMessageKeyboardInvalid},
		{"a blank label", hostsdk.Keyboard([]wire.Button{hostsdk.CallbackButton("  ", "d")}), wire.CodeMessageKeyboardInvalid},
		{"empty data", hostsdk.Keyboard([]wire.Button{hostsdk.CallbackButton("A", "")}), wire.CodeMessageKeyboardInvalid},
		{"two buttons with one id", hostsdk.Keyboard([]wire.Button{dupA, dupB}), wire.CodeMessageKeyboardInvalid},
		{"a bad id", hostsdk.Keyboard([]wire.Button{badID}), wire.CodeMessageKeyboardInvalid},
		{"a link to a relative url", hostsdk.Keyboard([]wire.Button{hostsdk.LinkButton("Docs", "/docs")}), wire.CodeMessageKeyboardInvalid},
		{"a link to another scheme", hostsdk.Keyboard([]wire.Button{hostsdk.LinkButton("Docs", "mailto:a@example.com")}), wire.CodeMessageKeyboardInvalid},
	}
	for _, c := range cases {
		if got := messageCode(hostsdk.CheckKeyboard(c.k)); got != c.code {
			t.Errorf("%s: got %q, want %s", c.name, got, c.code)
		}
	}
}

// The plugin's replies in every case the builders allow or refuse, as the handler sees them.
func TestRichRepliesAndTheirRefusals(t *testing.T) {
	p := richPlugin(t, richManifest)
	var mu sync.Mutex
	var errs []error
	record := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	p.Command("vote", func(ctx *hostsdk.Context) error {
		_, err := ctx.ReplyMarkdown(hostsdk.Text("**Vote**"), hostsdk.WithKeyboard(hostsdk.Keyboard(
			[]wire.Button{hostsdk.Primary(hostsdk.CallbackButton("Yes", "vote:yes")), hostsdk.CallbackButton("No", "vote:no")},
			[]wire.Button{hostsdk.LinkButton("Rules", "https://example.com/rules")},
		)))
		return err
	})
	p.Command("cat", func(ctx *hostsdk.Context) error {
		image := hostsdk.ImageFromURL("https://cdn.example.com/cat.png")
		image.Alt = "a cat"
		_, err := ctx.Reply(hostsdk.Text("a cat: "), image)
		return err
	})
	p.Command("try", func(ctx *hostsdk.Context) error {
		for _, url := range []string{"cat.png", "ftp://example.com/cat.png", "javascript:alert(1)", "https://", "https://cdn.example.com/" + strings.Repeat("a", wire.LimitMaxMediaURLChars)} {
			_, err := ctx.Reply(hostsdk.ImageFromURL(url))
			record(err)
		}
		_, err := ctx.Reply(hostsdk.ImageFromURL("https://a.example/1.png"), hostsdk.ImageFromURL("https://a.example/2.png"))
		record(err)
		_, err = ctx.Reply(hostsdk.FileFromURL("https://a.example/r.pdf"))
		record(err)
		_, err = ctx.Reply(hostsdk.Text("x"), hostsdk.WithKeyboard(hostsdk.Keyboard([]wire.Button{hostsdk.CallbackButton("A", "a")})))
		record(err)
		_, err = ctx.ReplyMarkdown(hostsdk.Text("x"), hostsdk.WithKeyboard(hostsdk.Keyboard(buttons(wire.LimitMaxKeyboardButtonsPerRow+1, "b"))))
		record(err)
		return nil
	})
	h := hostsdktest.Start(t, p, hostsdktest.Options{})

	voted := h.Send(hostsdktest.Message{Text: "/vote"})
	if voted.Completion == nil || voted.Completion.Error != nil {
		t.Fatalf("vote: %+v", voted.Completion)
	}
	reply := h.RepliesTo(voted.Event.EventID)[0]
	if reply.Format != "markdown" || reply.Keyboard == nil || len(reply.Keyboard.Rows) != 2 {
		t.Fatalf("vote reply %+v", reply)
	}
	yes, no := reply.Keyboard.Rows[0].Buttons[0], reply.Keyboard.Rows[0].Buttons[1]
	if yes.ID != "r0c0" || yes.GetStyle() != "primary" || no.ID != "r0c1" || no.GetStyle() != "secondary" || reply.Keyboard.Rows[1].Buttons[0].Action != "link" {
		t.Fatalf("normalised keyboard %+v", reply.Keyboard)
	}

	cat := h.Send(hostsdktest.Message{Text: "/cat"})
	parts := h.RepliesTo(cat.Event.EventID)[0].Parts
	if image, ok := parts[1].(wire.MessagePartImage); !ok || image.URL != "https://cdn.example.com/cat.png" || image.Alt != "a cat" {
		t.Fatalf("cat reply %#v", parts)
	}

	tried := h.Send(hostsdktest.Message{Text: "/try"})
	want := []string{
		wire.CodeMessagePartUnsupported, wire.CodeMessagePartUnsupported, wire.CodeMessagePartUnsupported, wire.CodeMessagePartUnsupported, wire.CodeMessagePartUnsupported,
		wire.CodeMessageMediaTooMany, wire.CodeMessagePartUnsupportedTarget, wire.CodeMessageKeyboardUnsupportedFormat, wire.CodeMessageKeyboardTooLarge,
	}
	if len(errs) != len(want) {
		t.Fatalf("got %d results: %v", len(errs), errs)
	}
	for i, code := range want {
		if got := messageCode(errs[i]); got != code {
			t.Errorf("check %d: want %s, got %v", i, code, errs[i])
		}
	}
	if n := len(h.RepliesTo(tried.Event.EventID)); n != 0 {
		t.Fatalf("%d refused messages reached the host", n)
	}
}

func eventsPlugin(t *testing.T) *hostsdk.Plugin {
	p := richPlugin(t, richManifest)
	p.OnMessage(func(ctx *hostsdk.Context) error { return nil })
	p.OnInteraction(func(ctx *hostsdk.EventContext) error {
		if ctx.Data() == "fail" {
			return errors.New("cannot count votes")
		}
		_, err := ctx.ReplyText("%s chose %s with %s", ctx.Sender().DisplayName, ctx.Data(), ctx.Interaction().ButtonID)
		return err
	})
	p.OnBotAdded(func(ctx *hostsdk.EventContext) error {
		if !ctx.CanReply() {
			return nil
		}
		_, err := ctx.ReplyMarkdown(hostsdk.Text("Hello! Pick one:"), hostsdk.WithKeyboard(hostsdk.Keyboard([]wire.Button{hostsdk.CallbackButton("Yes", "vote:yes")})))
		return err
	})
	p.OnBotRemoved(func(ctx *hostsdk.EventContext) error {
		ctx.Log().Info("removed", map[string]any{"conversation": ctx.Event().Conversation.ConversationID})
		_, err := ctx.Reply(hostsdk.Text("bye")) // refused: the event takes no reply
		return err
	})
	return p
}

func TestOtherEventTypesReachTheirHandlersOverStdio(t *testing.T) {
	h := hostsdktest.Start(t, eventsPlugin(t), hostsdktest.Options{})

	clicked := h.Click("vote:yes", "yes", hostsdktest.Message{})
	if clicked.Ack == nil || !clicked.Ack.Accepted || clicked.Completion == nil || clicked.Completion.Error != nil {
		t.Fatalf("click: ack %+v completion %+v err %+v", clicked.Ack, clicked.Completion, clicked.Err)
	}
	replies := h.RepliesTo(clicked.Event.EventID)
	if len(replies) != 1 || replies[0].Text() != "Test User chose vote:yes with yes" || replies[0].Target.Type != "group" {
		t.Fatalf("click replies %+v", replies)
	}
	if !strings.HasPrefix(clicked.Chat.MessageReference.MessageID, "event:") {
		t.Fatalf("reference %+v", clicked.Chat.MessageReference)
	}

	failed := h.Click("fail", "", hostsdktest.Message{})
	if failed.Completion == nil || failed.Completion.Error == nil || failed.Completion.Error.Code != wire.CodePluginHandlerFailed {
		t.Fatalf("failed click %+v", failed.Completion)
	}

	added := h.BotAdded(hostsdktest.Message{})
	if r := h.RepliesTo(added.Event.EventID); len(r) != 1 || r[0].Keyboard == nil || r[0].Keyboard.Rows[0].Buttons[0].ID != "r0c0" {
		t.Fatalf("bot.added replies %+v", r)
	}

	removed := h.BotRemoved(hostsdktest.Message{})
	if removed.Chat.MessageReference != nil || removed.Completion == nil || removed.Completion.Error == nil ||
		removed.Completion.Error.Code != wire.CodeMessageReferenceUnavailable {
		t.Fatalf("bot.removed %+v", removed.Completion)
	}

	// Subscribed to, but no handler: declined at once, nothing follows.
	opened := h.ConversationOpened(hostsdktest.Message{Conversation: "c2c"})
	if opened.Ack == nil || opened.Ack.Accepted || opened.Completion != nil {
		t.Fatalf("conversation.opened %+v %+v", opened.Ack, opened.Completion)
	}

	// An event type protocol v2 does not define is refused with InvalidParams.
	unknown := h.ChatEvent("bot.added", hostsdktest.Message{})
	unknown.EventType = "guild.member_added"
	raw, rpcErr := h.Call(wire.MethodEventsDeliver, unknown)
	if rpcErr == nil || rpcErr.Code != wire.RPCInvalidParams {
		t.Fatalf("unknown type answered %s %+v", raw, rpcErr)
	}
}

func TestEventHandlersNeedTheSubscription(t *testing.T) {
	p := richPlugin(t, strings.Replace(richManifest, `{ "eventType": "interaction.created" },`, "", 1))
	defer func() {
		r := recover()
		err, _ := r.(error)
		var se *hostsdk.SDKError
		if !errors.As(err, &se) || se.Code != wire.ErrSDKDefinitionInvalid || !strings.Contains(se.Detail, `{"eventType": "interaction.created"}`) {
			t.Fatalf("recovered %v", r)
		}
	}()
	p.OnInteraction(func(ctx *hostsdk.EventContext) error { return nil })
}

func postSigned(t *testing.T, h http.Handler, path string, body []byte, n int) (*httptest.ResponseRecorder, wire.MessageResponse) {
	t.Helper()
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	id := "rich-delivery-" + strconv.Itoa(n)
	req := httptest.NewRequest(http.MethodPost, "/bots/go"+path, bytes.NewReader(body))
	req.Header.Set(wire.HTTPHeaderTimestamp, ts)
	req.Header.Set(wire.HTTPHeaderDeliveryID, id)
	req.Header.Set(wire.HTTPHeaderSignature, hostsdk.Sign(secret, ts, id, body))
	req.Header.Set(wire.HTTPHeaderPluginID, "com.example.gorich")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var resp wire.MessageResponse
	_ = json.Unmarshal(rec.Body.Bytes(), &resp)
	return rec, resp
}

func TestOtherEventTypesOverHTTP(t *testing.T) {
	h, err := eventsPlugin(t).HTTPHandler(hostsdk.HTTPOptions{Secret: hostsdk.StaticSecret(secret), Log: func(hostsdk.LogLevel, string, map[string]any) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	click := func(eventType string) []byte {
		b, _ := json.Marshal(wire.ChatEvent{
			EventID: "h1", EventType: eventType, Timestamp: "2026-01-01T00:00:00Z", Source: "console",
			Bot: wire.BotRef{BotAccountID: "bot", Platform: "console"}, Conversation: wire.Conversation{Type: "group", ConversationID: "g"},
			Sender:           &wire.UserRef{Provider: "console", MentionID: "u1", DisplayName: "Ann"},
			Interaction:      &wire.Interaction{ID: "click-1", Data: "vote:no", ButtonID: "no"},
			MessageReference: &wire.MessageReference{MessageID: "event:click-1", TargetType: "group", TargetID: "g"},
		})
		return b
	}
	rec, resp := postSigned(t, h, wire.HTTPPathOtherEvents, click("interaction.created"), 1)
	if rec.Code != 200 || !resp.Accepted || len(resp.OutboundMessages) != 1 {
		t.Fatalf("click: %d %s", rec.Code, rec.Body.String())
	}
	if text, ok := resp.OutboundMessages[0].Parts[0].(wire.MessagePartText); !ok || text.Text != "Ann chose vote:no with no" {
		t.Fatalf("click reply %s", rec.Body.String())
	}
	rec, resp = postSigned(t, h, wire.HTTPPathOtherEvents, click("bot.added"), 2)
	if rec.Code != 200 || !resp.Accepted || resp.OutboundMessages[0].Keyboard == nil {
		t.Fatalf("bot.added: %d %s", rec.Code, rec.Body.String())
	}
	rec, _ = postSigned(t, h, wire.HTTPPathOtherEvents, click("message.created"), 3)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), wire.CodeEventInvalid) {
		t.Fatalf("a message on the deliver endpoint: %d %s", rec.Code, rec.Body.String())
	}
	rec, _ = postSigned(t, h, wire.HTTPPathMessageEvents, click("interaction.created"), 4)
	if rec.Code != 400 {
		t.Fatalf("a click on the message endpoint: %d %s", rec.Code, rec.Body.String())
	}
}
