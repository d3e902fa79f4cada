package hostsdk_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"plugin-host.dev/sdk-go/v2/hostsdk"
	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// The worked example of docs/protocol/v2.md 8.3 and http-signing.md.
func TestSignatureWorkedExample(t *testing.T) {
	secret := "kR3d9Zq0bV7xN2mW5tY8uA1sD4fG6hJ9kL0pO3iU7yE"
	body := []byte(`{"eventId":"evt-1","eventType":"message.created","message":{"content":"hello <world>"}}`)
	if got := hostsdk.Sign(secret, "1767225600", "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b", body); got != "v1=dd1b9ca9c1bdd4655b3e41ffb1ed167b219333ebf748e8336e0e60093f2dc179" {
		t.Fatalf("body signature %s", got)
	}
	if got := hostsdk.Sign(secret, "1767225600", "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b", nil); got != "v1=5dc4b4eb93176a156c0f900bd8ea479480b6acd1a8b596abf9c2abc563949274" {
		t.Fatalf("empty body signature %s", got)
	}
}

const secret = "test-secret-0123456789"

type signedClient struct {
	t      *testing.T
	h      http.Handler
	now    time.Time
	nextID int
}

func (c *signedClient) post(body []byte, mutate func(http.Header)) (*httptest.ResponseRecorder, map[string]any) {
	c.nextID++
	ts := strconv.FormatInt(c.now.Unix(), 10)
	id := "delivery-" + strconv.Itoa(c.nextID)
	req := httptest.NewRequest(http.MethodPost, "/bots/go"+wire.HTTPPathMessageEvents, bytes.NewReader(body))
	req.Header.Set(wire.HTTPHeaderTimestamp, ts)
	req.Header.Set(wire.HTTPHeaderDeliveryID, id)
	req.Header.Set(wire.HTTPHeaderSignature, hostsdk.Sign(secret, ts, id, body))
	req.Header.Set(wire.HTTPHeaderPluginID, "com.example.goecho")
	if mutate != nil {
		mutate(req.Header)
	}
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, req)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec, out
}

func eventBody(t *testing.T, text string, command *wire.CommandMatch) []byte {
	e := wire.MessageEvent{
		EventID: "evt-http-1", EventType: "message.created", Timestamp: "2026-01-01T00:00:00Z", Source: "console",
		Bot:              wire.BotRef{BotAccountID: "bot", Platform: "console"},
		Conversation:     wire.Conversation{Type: "group", ConversationID: "g"},
		Sender:           wire.UserRef{Provider: "console", MentionID: "u1", DisplayName: "Ann"},
		Message:          wire.MessageEventMessage{ID: "m1", Content: text},
		MessageReference: wire.MessageReference{MessageID: "m1", TargetType: "group", TargetID: "g"},
		Command:          command,
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func httpPlugin(t *testing.T, source hostsdk.SecretSource) (*hostsdk.HTTPServer, *signedClient) {
	h, err := echoPlugin(t).HTTPHandler(hostsdk.HTTPOptions{Secret: source, Log: func(hostsdk.LogLevel, string, map[string]any) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h, &signedClient{t: t, h: h, now: time.Now()}
}

func TestHTTPEventAnsweredWithTheReplyInTheResponse(t *testing.T) {
	_, c := httpPlugin(t, hostsdk.StaticSecret(secret))
	rec, out := c.post(eventBody(t, "/echo hi", &wire.CommandMatch{Name: "echo", Word: "echo", Prefix: "/", Args: "hi"}), nil)
	if rec.Code != 200 {
		t.Fatalf("status %d %s", rec.Code, rec.Body.String())
	}
	var resp wire.MessageResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	if !resp.Accepted || resp.Intercepted || resp.Error != nil || len(resp.OutboundMessages) != 1 {
		t.Fatalf("response %s", rec.Body.String())
	}
	m := resp.OutboundMessages[0]
	if m.Target != nil || m.GetFormat() != "markdown" || len(m.Parts) != 3 {
		t.Fatalf("outbound %s", rec.Body.String())
	}
	if _, ok := m.Parts[0].(wire.MessagePartMentionUser); !ok {
		t.Fatalf("first part %#v", m.Parts[0])
	}
	_ = out
}

func TestHTTPRefusals(t *testing.T) {
	_, c := httpPlugin(t, hostsdk.StaticSecret(secret))
	body := eventBody(t, "/echo hi", nil)
	cases := []struct {
		name   string
		mutate func(http.Header)
		status int
		code   string
	}{
		{"missing headers", func(h http.Header) { h.Del(wire.HTTPHeaderSignature) }, 401, wire.CodeSignatureMissing},
		{"malformed", func(h http.Header) { h.Set(wire.HTTPHeaderSignature, "v1=xyz") }, 401, wire.CodeSignatureMalformed},
		{"wrong signature", func(h http.Header) { h.Set(wire.HTTPHeaderSignature, hostsdk.Sign("other", "1", "x", body)) }, 401, wire.CodeSignatureInvalid},
		{"other plugin", func(h http.Header) { h.Set(wire.HTTPHeaderPluginID, "com.example.other") }, 400, wire.CodePluginIDMismatch},
	}
	for _, tc := range cases {
		rec, out := c.post(body, tc.mutate)
		errBody, _ := out["error"].(map[string]any)
		if rec.Code != tc.status || errBody["code"] != tc.code {
			t.Errorf("%s: %d %s", tc.name, rec.Code, rec.Body.String())
		}
	}
	// Expired: signed correctly, ten minutes ago.
	c.now = time.Now().Add(-10 * time.Minute)
	if rec, out := c.post(body, nil); rec.Code != 401 || out["error"].(map[string]any)["code"] != wire.CodeSignatureExpired {
		t.Errorf("expired: %d %s", rec.Code, rec.Body.String())
	}
	c.now = time.Now()
	// Replay: the same delivery id twice.
	c.nextID = 100
	if rec, _ := c.post(body, nil); rec.Code != 200 {
		t.Fatalf("first delivery %d", rec.Code)
	}
	c.nextID = 100
	if rec, out := c.post(body, nil); rec.Code != 401 || out["error"].(map[string]any)["code"] != wire.CodeSignatureReplayed {
		t.Errorf("replay: %d %s", rec.Code, rec.Body.String())
	}
	// Not an event.
	if rec, out := c.post([]byte(`{"eventId":""}`), nil); rec.Code != 400 || out["error"].(map[string]any)["code"] != wire.CodeEventInvalid {
		t.Errorf("invalid event: %d %s", rec.Code, rec.Body.String())
	}
}

func TestHTTPWithoutSecretServesTheManifestAndRefusesEvents(t *testing.T) {
	h, c := httpPlugin(t, hostsdk.SecretFromFile(t.TempDir()+"/no-such-file"))
	rec, out := c.post(eventBody(t, "/echo hi", nil), nil)
	if rec.Code != 401 || out["error"].(map[string]any)["code"] != wire.CodeSignatureSecretUnset {
		t.Fatalf("event: %d %s", rec.Code, rec.Body.String())
	}
	get := httptest.NewRecorder()
	h.ServeHTTP(get, httptest.NewRequest(http.MethodGet, "/bots/go"+wire.HTTPPathManifest, nil))
	var m wire.HTTPManifest
	if err := json.Unmarshal(get.Body.Bytes(), &m); err != nil || get.Code != 200 {
		t.Fatalf("manifest %d %s", get.Code, get.Body.String())
	}
	if m.PluginID != "com.example.goecho" || m.Capabilities != wire.CapabilityReceiveMessages|wire.CapabilityHTTPTransport || len(m.Commands) != 3 {
		t.Fatalf("manifest %+v", m)
	}
	wrong := httptest.NewRecorder()
	h.ServeHTTP(wrong, httptest.NewRequest(http.MethodPost, "/bots/go"+wire.HTTPPathManifest, nil))
	if wrong.Code != 405 || wrong.Header().Get("Allow") != "GET, HEAD" {
		t.Fatalf("POST manifest %d", wrong.Code)
	}
	missing := httptest.NewRecorder()
	h.ServeHTTP(missing, httptest.NewRequest(http.MethodGet, "/elsewhere", nil))
	if missing.Code != 404 {
		t.Fatalf("unknown path %d", missing.Code)
	}
}

func TestHTTPBodyLimit(t *testing.T) {
	h, err := echoPlugin(t).HTTPHandler(hostsdk.HTTPOptions{Secret: hostsdk.StaticSecret(secret), MaxBodyBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	c := &signedClient{t: t, h: h, now: time.Now()}
	rec, _ := c.post(bytes.Repeat([]byte("x"), 65), nil)
	if rec.Code != 413 {
		t.Fatalf("status %d", rec.Code)
	}
	body, _ := io.ReadAll(rec.Body)
	if !bytes.Contains(body, []byte(wire.CodeHTTPBodyTooLarge)) {
		t.Fatalf("body %s", body)
	}
}

func TestHTTPOverloadedAndFailedStart(t *testing.T) {
	p := echoPlugin(t)
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	p.Command("slow", func(ctx *hostsdk.Context) error {
		entered <- struct{}{}
		<-release
		return nil
	})
	h, err := p.HTTPHandler(hostsdk.HTTPOptions{Secret: hostsdk.StaticSecret(secret), MaxConcurrentEvents: 1, Log: func(hostsdk.LogLevel, string, map[string]any) {}})
	if err != nil {
		t.Fatal(err)
	}
	c := &signedClient{t: t, h: h, now: time.Now()}
	done := make(chan int, 1)
	go func() {
		rec, _ := c.post(eventBody(t, "/slow", &wire.CommandMatch{Name: "slow", Word: "slow", Prefix: "/"}), nil)
		done <- rec.Code
	}()
	<-entered
	c2 := &signedClient{t: t, h: h, now: time.Now(), nextID: 1000}
	rec, out := c2.post(eventBody(t, "/echo x", nil), nil)
	if rec.Code != 503 || rec.Header().Get("Retry-After") != "1" || out["error"].(map[string]any)["code"] != wire.CodeHTTPOverloaded {
		t.Fatalf("overloaded: %d %s", rec.Code, rec.Body.String())
	}
	close(release)
	if code := <-done; code != 200 {
		t.Fatalf("slow event %d", code)
	}
	h.Close()

	failing := echoPlugin(t).OnStart(func(*hostsdk.Lifecycle) error { return errors.New("no database") })
	h2, err := failing.HTTPHandler(hostsdk.HTTPOptions{Secret: hostsdk.StaticSecret(secret), Log: func(hostsdk.LogLevel, string, map[string]any) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	rec, out = (&signedClient{t: t, h: h2, now: time.Now()}).post(eventBody(t, "/echo x", nil), nil)
	if rec.Code != 503 || out["error"].(map[string]any)["code"] != wire.CodePluginStartFailed {
		t.Fatalf("start failed: %d %s", rec.Code, rec.Body.String())
	}
}
