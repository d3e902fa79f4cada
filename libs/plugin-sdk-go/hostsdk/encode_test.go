package hostsdk

import (
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// The hand-written encoder of the hot frames writes exactly what encoding/json writes.
func TestHotFramesEncodeLikeEncodingJSON(t *testing.T) {
	texts := []string{"", "plain", `quo"te back\slash`, "<b>&amp;</b>", "\x00\x01\b\f\n\r\t\x1f\x7f", "é ✓ 😀 \u2028 \u2029 \u202e",
		"bad \xff utf8 \xe2\x80", "mixed <\u2028>\xc3"}
	numbers := []float64{0, 1, 0.5, 12.345, 1e-7, 1.5e-7, 123456789, 1e21, 1e20, 2.5e-6, 1e-6, 0.000001234, 3.0000000000000004}
	format := "markdown"
	var messages []any
	for i, s := range texts {
		ms := numbers[i%len(numbers)]
		messages = append(messages,
			rpcResponseOut{JSONRPC: "2.0", ID: json.RawMessage(`"` + "id-1" + `"`), Result: wire.EventAck{EventID: s, Accepted: i%2 == 0, Intercepted: i%3 == 0}},
			rpcResponseOut{JSONRPC: "2.0", ID: json.RawMessage(`42`), Result: wire.EventAck{EventID: s}},
			rpcRequestOut{JSONRPC: "2.0", ID: int64(i), Method: wire.MethodEventsCompleted, Params: wire.EventsCompletedParams{Token: s, EventID: s, DurationMs: &ms}},
			rpcRequestOut{JSONRPC: "2.0", ID: 7, Method: wire.MethodEventsCompleted, Params: wire.EventsCompletedParams{Token: "t", EventID: s}},
			rpcRequestOut{JSONRPC: "2.0", ID: 1 << 40, Method: wire.MethodMessagesReply, Params: wire.MessagesReplyParams{Token: "t", EventID: s, Message: wire.OutgoingMessage{
				Format: &format,
				Parts: wire.MessagePartList{
					wire.MessagePartMentionUser{ID: s, DisplayName: s},
					wire.MessagePartMentionUser{ID: "u1"},
					wire.MessagePartText{Text: s, Literal: i%2 == 1},
					wire.MessagePartMentionEveryone{},
				},
			}}},
			rpcRequestOut{JSONRPC: "2.0", ID: 3, Method: wire.MethodMessagesSend, Params: wire.MessagesSendParams{Token: "t", Target: wire.Target{Type: "group", ID: s, BotAccountID: s},
				Message: wire.OutgoingMessage{Parts: wire.MessagePartList{wire.MessagePartText{Text: s}}}}},
			rpcRequestOut{JSONRPC: "2.0", ID: 4, Method: wire.MethodMessagesSend, Params: wire.MessagesSendParams{Target: wire.Target{Type: "user", ID: "x"}}},
			rpcRequestOut{JSONRPC: "2.0", ID: 5, Method: wire.MethodMessagesSend, Params: wire.MessagesSendParams{Token: "t", Target: wire.Target{Type: "group", ID: "g"},
				Message: wire.OutgoingMessage{Parts: wire.MessagePartList{wire.MessagePartText{Text: "x"}}}, EventID: s}},
		)
	}
	for _, ms := range numbers {
		neg := -ms
		messages = append(messages, rpcRequestOut{JSONRPC: "2.0", ID: 1, Method: wire.MethodEventsCompleted, Params: wire.EventsCompletedParams{Token: "t", EventID: "e", DurationMs: &neg}})
	}
	for i, m := range messages {
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendMessage([]byte("prefix"), m)
		if !ok {
			t.Fatalf("message %d (%T) was not encoded by hand", i, m)
		}
		if string(got) != "prefix"+string(want) {
			t.Fatalf("message %d:\n got %s\nwant prefix%s", i, got, want)
		}
	}
}

// Frames the hand-written encoder does not take go through encoding/json, whole.
func TestOtherFramesFallBackToEncodingJSON(t *testing.T) {
	nan := math.NaN()
	fallback := []any{
		rpcResponseOut{JSONRPC: "2.0", ID: json.RawMessage(`"a<b"`), Result: wire.EventAck{EventID: "e"}},
		rpcResponseOut{JSONRPC: "2.0", ID: json.RawMessage(`1`), Result: wire.EventAck{EventID: "e", Error: &wire.PluginError{Code: "x.y", Message: "m", Details: map[string]any{"n": 1}}}},
		rpcResponseOut{JSONRPC: "2.0", ID: json.RawMessage(`1`), Result: wire.PluginPingResult{Nonce: "n"}},
		rpcRequestOut{JSONRPC: "2.0", ID: 2, Method: wire.MethodEventsCompleted, Params: wire.EventsCompletedParams{Token: "t", EventID: "e", Error: &wire.PluginError{Code: "a.b", Message: "m"}}},
		rpcRequestOut{JSONRPC: "2.0", ID: 2, Method: wire.MethodEventsCompleted, Params: wire.EventsCompletedParams{Token: "t", EventID: "e", DurationMs: &nan}},
		rpcRequestOut{JSONRPC: "2.0", ID: 2, Method: wire.MethodMessagesReply, Params: wire.MessagesReplyParams{Message: wire.OutgoingMessage{Parts: wire.MessagePartList{wire.MessagePartComposite{}}}}},
		rpcRequestOut{JSONRPC: "2.0", ID: 2, Method: wire.MethodLogWrite, Params: wire.LogWriteParams{Token: "t", Level: "info", Message: "m"}},
	}
	for i, m := range fallback {
		if got, ok := appendMessage([]byte("prefix"), m); ok || string(got) != "prefix" {
			t.Fatalf("message %d was encoded by hand (%v) or left bytes behind: %s", i, ok, got)
		}
		want, wantErr := json.Marshal(m)
		got, err := marshalMessage(nil, m)
		if (err != nil) != (wantErr != nil) || string(got) != string(want) {
			t.Fatalf("message %d: got %s (%v), want %s (%v)", i, got, err, want, wantErr)
		}
	}
}

// The checks that replaced regular expressions on the reply path agree with them.
func TestMentionIDAndBlankChecksAgreeWithTheirPatterns(t *testing.T) {
	mentionID := regexp.MustCompile(`^[A-Za-z0-9_.:@-]{1,128}$`)
	invisible := regexp.MustCompile("[\u200b-\u200d\u2060\ufeff]")
	samples := []string{"", "u1", "a.b:c@d-e_f", "with space", "é", "a/b", strings.Repeat("x", 128), strings.Repeat("x", 129), "\xff",
		" \t\u00a0", "\u200b\ufeff \u3000", "\u200b", "x\u200b", "\u2060 .", "\xff ", "\u2028\u2029\u202f"}
	for _, s := range samples {
		if got, want := validMentionID(s), mentionID.MatchString(s); got != want {
			t.Errorf("validMentionID(%q) = %v, the pattern says %v", s, got, want)
		}
		if got, want := blankText(s), strings.TrimFunc(invisible.ReplaceAllString(s, ""), jsWhitespace) == ""; got != want {
			t.Errorf("blankText(%q) = %v, want %v", s, got, want)
		}
		if got, want := strings.ContainsFunc(s+"\u202a\u2069", isBidiControl), bidiControls.MatchString(s+"\u202a\u2069"); got != want {
			t.Errorf("isBidiControl on %q", s)
		}
	}
}

// The envelope scan reads members as encoding/json does: escaped names, the last of a repeated member,
// other members skipped; the result stays JSON text.
func TestEnvelopeScanReadsMembersLikeEncodingJSON(t *testing.T) {
	cases := []struct {
		payload string
		method  string
		id      string
		params  string
		result  string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"plugin.ping","params":{"nonce":"a"}}`, "plugin.ping", "1", `{"nonce":"a"}`, ""},
		{`{"jsonrpc":"2\u002e0","\u0069d":"x","meth\u006fd":"plugin.p\u0069ng","x":[1,{"y":2}]}`, "plugin.ping", `"x"`, "", ""},
		{`{"id":1,"id":2,"jsonrpc":"1.0","jsonrpc":"2.0","result":{"a":[true]}}`, "", "2", "", `{"a":[true]}`},
		{` { "result" : null , "id" : -3 , "jsonrpc" : "2.0" } `, "", "-3", "", "null"},
		{`{"jsonrpc":"2.0","id":1.0,"result":1}`, "", "1.0", "", "1"},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m","data":{"k":1}}}`, "", "null", "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"some.other"}`, "some.other", "1", "", ""},
	}
	for _, c := range cases {
		m, err := decodePayload([]byte(c.payload))
		if err != nil {
			t.Fatalf("%s: %v", c.payload, err)
		}
		if m.Method != c.method || string(m.ID) != c.id || string(m.Params) != c.params || string(m.Result) != c.result {
			t.Fatalf("%s: method %q id %s params %s result %s", c.payload, m.Method, m.ID, m.Params, m.Result)
		}
	}
	refused := map[string]string{
		`{"jsonrpc":"2.0","id":1.5,"result":1}`:          wire.CodeFramingMessageInvalid,
		`{"jsonrpc":"2.0","id":1,"result":1,"error":{}}`: wire.CodeFramingMessageInvalid,
		`{"jsonrpc":"2.0","id":1,"method":""}`:           wire.CodeFramingMessageInvalid,
		`{"jsonrpc":"2.0","id":1,"method":"a","x":[1,}`:  wire.CodeFramingJSONInvalid,
		`{"jsonrpc":"2.0","id":1,"method":"a"} {}`:       wire.CodeFramingJSONInvalid,
		`["jsonrpc"]`: wire.CodeFramingMessageInvalid,
		`[1,]`:        wire.CodeFramingJSONInvalid,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"a"}`:        wire.CodeFramingMessageInvalid,
		`{"jsonrpc":"2.0","id":null,"method":"plugin.ping"}`: wire.CodeFramingMessageInvalid,
	}
	for payload, code := range refused {
		var fe *FramingError
		if _, err := decodePayload([]byte(payload)); !errors.As(err, &fe) || fe.Code != code {
			t.Fatalf("%s: %v, want %s", payload, err, code)
		}
	}
}
