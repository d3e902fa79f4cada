package hostsdk

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// treeInto fills v (a pointer) from a parsed tree the way json.Unmarshal fills it from the bytes: the
// reference decide's values are compared with.
func treeInto(tree any, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errors.New("treeInto needs a non-nil pointer")
	}
	return fill(rv.Elem(), tree)
}

// agreeWithTheTreeWalk: decide (the one path that decides and builds) refuses exactly what the tree walk,
// which describes a refusal, finds faults in, and fills exactly what treeInto fills from the tree.
func agreeWithTheTreeWalk(t *testing.T, n *node, raw []byte, typ reflect.Type) {
	t.Helper()
	tree, err := parseTree(raw)
	if err != nil {
		t.Fatal(err)
	}
	var found []fault
	n.check(tree, &found)
	gotValue := reflect.New(typ)
	verdict := decide(raw, n, gotValue.Interface())
	if verdict != nil && verdict != errRefused {
		t.Fatalf("decide: %v", verdict)
	}
	if (verdict == errRefused) != (len(found) > 0) {
		t.Fatalf("decide says %v; the tree walk finds %+v\ninput %s", verdict, fieldIssues("x", found), raw)
	}
	if len(found) > 0 {
		return
	}
	wantValue := reflect.New(typ)
	if err := treeInto(tree, wantValue.Interface()); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotValue.Interface(), wantValue.Interface()) {
		t.Fatalf("decide %+v\ntreeInto %+v", gotValue.Elem(), wantValue.Elem())
	}
}

// wireTypes is the generated type each envelope document and method part decodes into.
var wireTypes = func() map[string]reflect.Type {
	types := map[string]any{
		"host.initialize/params": wire.HostInitializeParams{}, "host.initialize/result": wire.HostInitializeResult{},
		"events.message/params": wire.MessageEvent{}, "events.message/result": wire.EventAck{},
		"events.deliver/params": wire.ChatEvent{}, "events.deliver/result": wire.EventAck{},
		"events.cancel/params": wire.EventsCancelParams{}, "events.cancel/result": wire.EventsCancelResult{},
		"plugin.stop/params": wire.PluginStopParams{}, "plugin.stop/result": wire.PluginStopResult{},
		"plugin.ping/params": wire.PluginPingParams{}, "plugin.ping/result": wire.PluginPingResult{},
		"settings.changed/params": wire.SettingsChangedParams{}, "settings.changed/result": wire.SettingsChangedResult{},
		"log.write/params": wire.LogWriteParams{}, "log.write/result": wire.LogWriteResult{},
		"events.completed/params": wire.EventsCompletedParams{}, "events.completed/result": wire.EventsCompletedResult{},
		"messages.reply/params": wire.MessagesReplyParams{}, "messages.reply/result": wire.SendResult{},
		"messages.send/params": wire.MessagesSendParams{}, "messages.send/result": wire.SendResult{},
		"media.upload/params": wire.MediaUploadParams{}, "media.upload/result": wire.MediaUploadResult{},
		"media.chunk/params": wire.MediaChunkParams{}, "media.chunk/result": wire.MediaChunkResult{},
		"media.finish/params": wire.MediaFinishParams{}, "media.finish/result": wire.MediaFinishResult{},
		"message-event.schema.json": wire.MessageEvent{}, "event-ack.schema.json": wire.EventAck{},
		"message-response.schema.json": wire.MessageResponse{},
	}
	out := map[string]reflect.Type{}
	for k, v := range types {
		out[k] = reflect.TypeOf(v)
	}
	return out
}()

// The one-pass decoder (decode.go) refuses what the tree walk finds faults in and fills what treeInto
// fills, for every envelope and method vector, and for each with every top-level member dropped, nulled or
// of another type, and an unknown one added.
func TestOnePassDecodingAgreesWithTheTreeWalk(t *testing.T) {
	ran := 0
	run := func(name string, n *node, input any, typ reflect.Type) {
		for label, variant := range memberVariants(input) {
			raw, _ := json.Marshal(variant)
			t.Run(name+label, func(t *testing.T) { agreeWithTheTreeWalk(t, n, raw, typ) })
			ran++
		}
	}
	for _, kind := range []string{"message-event", "event-ack", "message-response"} {
		file := kind + ".schema.json"
		for _, c := range casesOf(t, kind) {
			run(kind+"/"+c["name"].(string), documentSchema(file), c["input"], wireTypes[file])
		}
	}
	for _, c := range casesOf(t, "rpc-method") {
		key := c["method"].(string) + "/" + c["part"].(string)
		typ, ok := wireTypes[key]
		if !ok {
			t.Fatalf("no wire type for %s", key)
		}
		run(c["name"].(string), methodSchema(c["method"].(string), c["part"].(string)), c["input"], typ)
	}
	if ran < 1000 {
		t.Fatalf("only %d inputs", ran)
	}
}

// memberVariants is the input ("") and, for an object, the object with each member dropped or replaced by a
// value of each other JSON type, and with an unknown member added.
func memberVariants(input any) map[string]any {
	out := map[string]any{"": input}
	obj, ok := input.(map[string]any)
	if !ok {
		return out
	}
	with := func(key string, value any, drop bool) map[string]any {
		c := make(map[string]any, len(obj)+1)
		for k, v := range obj {
			c[k] = v
		}
		if drop {
			delete(c, key)
		} else {
			c[key] = value
		}
		return c
	}
	for k := range obj {
		out[" without "+k] = with(k, nil, true)
		for label, v := range map[string]any{"null": nil, "7": 7.0, "1.5": 1.5, "-1": -1.0, `""`: "", `"  "`: "  ", "true": true, "{}": map[string]any{}, "[]": []any{}} {
			out[" "+k+"="+label] = with(k, v, false)
		}
	}
	out[" with zzUnknown"] = with("zzUnknown", 1.0, false)
	return out
}

// The struct plans (keys compared in place, the next expected name first) and the string fast path
// agree with the tree walk on what they take and on what they hand back to the general path (the verdict
// and the value): members
// in another order, escaped keys and strings, repeated keys, unknown keys, strings that break a rule.
func TestStructPlansAndPlainStringsAgreeWithTheTreeWalk(t *testing.T) {
	base := `{"eventId":"e1","eventType":"message.created","timestamp":"2026-01-01T00:00:00.000Z","source":"console",` +
		`"bot":{"botAccountId":"b","platform":"console"},"conversation":{"type":"group","conversationId":"g1"},` +
		`"sender":{"provider":"console","mentionId":"u1","displayName":"u1"},` +
		`"message":{"id":"m1","content":"/echo hi","attachments":[],"mentions":[]},` +
		`"messageReference":{"messageId":"m1","targetType":"group","targetId":"g1","restrictions":[]},` +
		`"command":{"name":"echo","word":"echo","prefix":"/","args":"hi"}}`
	variants := map[string]string{
		"as sent":              base,
		"members reversed":     `{"command":{"args":"hi","prefix":"/","word":"echo","name":"echo"},"messageReference":{"targetId":"g1","targetType":"group","messageId":"m1"},"message":{"content":"x","id":"m1"},"sender":{"mentionId":"u1","provider":"p"},"conversation":{"conversationId":"g1","type":"group"},"bot":{"platform":"p","botAccountId":"b"},"source":"s","timestamp":"2026-01-01T00:00:00Z","eventType":"message.created","eventId":"e1"}`,
		"escaped key":          strings.Replace(base, `"eventId"`, `"\u0065ventId"`, 1),
		"escaped string":       strings.Replace(base, `"content":"/echo hi"`, `"content":"/echo \"hi\"\n"`, 1),
		"escaped enum value":   strings.Replace(base, `"type":"group"`, `"type":"gr\u006fup"`, 1),
		"repeated key":         strings.Replace(base, `"source":"console"`, `"source":"console","source":"qq"`, 1),
		"unknown keys":         strings.Replace(base, `"source":"console"`, `"source":"console","extra":{"a":[1,"x"]},"more":"y"`, 1),
		"blank id":             strings.Replace(base, `"eventId":"e1"`, `"eventId":"  "`, 1),
		"empty id":             strings.Replace(base, `"eventId":"e1"`, `"eventId":""`, 1),
		"control character":    strings.Replace(base, `"mentionId":"u1"`, `"mentionId":"u\u00011"`, 1),
		"wrong const":          strings.Replace(base, `"message.created"`, `"message.deleted"`, 1),
		"wrong enum":           strings.Replace(base, `"targetType":"group"`, `"targetType":"room"`, 1),
		"bad timestamp":        strings.Replace(base, `"2026-01-01T00:00:00.000Z"`, `"2026-02-30T00:00:00Z"`, 1),
		"number for a string":  strings.Replace(base, `"source":"console"`, `"source":7`, 1),
		"object for a string":  strings.Replace(base, `"platform":"console"`, `"platform":{"x":1}`, 1),
		"string for an object": strings.Replace(base, `"bot":{"botAccountId":"b","platform":"console"}`, `"bot":"b"`, 1),
		"missing members":      `{"eventId":"e1","bot":{},"message":{"id":"m"}}`,
		"null command":         strings.Replace(base, `"command":{"name":"echo","word":"echo","prefix":"/","args":"hi"}`, `"command":null`, 1),
		"non-ASCII text":       strings.Replace(base, `"content":"/echo hi"`, `"content":"/echo 你好 😀"`, 1),
	}
	n := documentSchema("message-event.schema.json")
	for name, raw := range variants {
		t.Run(name, func(t *testing.T) { agreeWithTheTreeWalk(t, n, []byte(raw), reflect.TypeFor[wire.MessageEvent]()) })
	}
}

// decodeInto (the host's answers: send results) fills what parseTree and treeInto fill, and fails where
// they fail.
func TestDecodeIntoAgreesWithTreeInto(t *testing.T) {
	inputs := []string{
		`{"accepted":true,"messageId":"out-1","target":{"type":"group","id":"g1"}}`,
		` { "target" : { "id" : "g\u00311", "botAccountId": "b" } , "accepted" : false } `,
		`{"accepted":true,"extra":{"deep":[1,{"x":null}],"s":"\"q\""},"messageId":"m"}`,
		`{"target":{"type":"group","id":"g1"},"target":{"id":"g2"}}`,
		`{"messageId":"a","messageId":"b"}`,
		`{}`,
		`{"accepted":"yes"}`,
		`{"target":"g1"}`,
		`{"messageId":7}`,
		`{"target":null,"messageId":null}`,
		`[1,2]`,
		`"text"`,
		`null`,
		`{"accepted":true}x`,
	}
	for _, raw := range inputs {
		var want, got wire.SendResult
		tree, err := parseTree([]byte(raw))
		if err == nil {
			err = treeInto(tree, &want)
		}
		gotErr := decodeInto([]byte(raw), &got)
		if (err == nil) != (gotErr == nil) {
			t.Fatalf("%s: treeInto says %v, decodeInto %v", raw, err, gotErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: decodeInto %+v, treeInto %+v", raw, got, want)
		}
	}
}
