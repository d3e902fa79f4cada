package hostsdk

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

var treeSamples = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `12`, `-12.5e3`, `1E+2`, `0.000001`, `123456789012345678901234567890`,
	`9007199254740993`, `1e308`, `"plain"`, `"esc \" \\ \/ \b \f \n \r \t"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00 pair"`,
	`"\ud83d lone high"`, `"\ude00 lone low"`, `"\ud83d\u0041 high then letter"`, `"é 中 😀 raw"`,
	` { "a" : [ 1 , 2 , { "b" : null } ] , "c" : "d" } `, `{"a":1,"a":2}`, `{"eventId":"e1","eventType":"message.created"}`,
	`{"k\u0065y":"escaped key"}`, `[[[[[[]]]]]]`,
	// invalid
	``, ` `, `{`, `}`, `[`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `NaN`,
	`Infinity`, `tru`, `nul`, `"unterminated`, "\"tab\tinside\"", "\"nl\ninside\"", `"\x"`, `"\u12"`, `"\u12G4"`,
	`{"a":1} x`, `[1 2]`, `{"a":1 "b":2}`, `1e999`, `-1e999`, `"\`, `[1,2`, `{"a":`,
}

func TestParseTreeAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range treeSamples {
		checkTreeAgainstJSON(t, []byte(s))
	}
	checkTreeAgainstJSON(t, []byte(strings.Repeat("[", 10001)+strings.Repeat("]", 10001)))
	checkTreeAgainstJSON(t, wire.SchemasJSON)
}

func checkTreeAgainstJSON(t *testing.T, data []byte) {
	t.Helper()
	if !utf8.Valid(data) {
		return // refused before parsing (framing.utf8_invalid)
	}
	var want any
	wantErr := json.Unmarshal(data, &want)
	got, gotErr := parseTree(data)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%.80q: encoding/json error %v, parseTree error %v", data, wantErr, gotErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%.80q: parseTree %#v, encoding/json %#v", data, got, want)
	}
}

func FuzzParseTree(f *testing.F) {
	for _, s := range treeSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkTreeAgainstJSON(t, data) })
}

func TestTreeIntoFillsLikeUnmarshal(t *testing.T) {
	raw := []byte(`{"eventId":"e1","eventType":"message.created","timestamp":"2026-01-01T00:00:00Z","source":"qqbot",
	"bot":{"botAccountId":"b","platform":"qqbot"},"conversation":{"type":"group","conversationId":"g"},
	"sender":{"provider":"qqbot","mentionId":"u","displayName":"U"},
	"message":{"id":"m","content":"/x","attachments":[{"kind":"image","url":"https://x/y.png"}],"mentions":[{"provider":"qqbot","mentionId":"v"}]},
	"messageReference":{"messageId":"m","targetType":"group","targetId":"g","restrictions":["a"]},
	"command":{"name":"x","word":"x","prefix":"/","args":""},"rawPayload":{"n":[1,2.5,"s",null,true]},"future":1}`)
	var want, got wire.MessageEvent
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	tree, err := parseTree(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := treeInto(tree, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("treeInto %+v\nUnmarshal %+v", got, want)
	}
	var msg wire.OutgoingMessage
	parts := []byte(`{"format":"markdown","parts":[{"type":"mention","target":"user","id":"u"},{"type":"text","text":"hi","literal":true}]}`)
	tree, _ = parseTree(parts)
	if err := treeInto(tree, &msg); err != nil || len(msg.Parts) != 2 {
		t.Fatalf("union parts: %v %+v", err, msg)
	}
	var n struct{ N int }
	if err := treeInto(map[string]any{"N": 1.5}, &n); err == nil {
		t.Fatal("1.5 went into an int")
	}
}
