package hostsdk

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// The one-pass decoder (decode.go) must say exactly what the tree walk says, and fill exactly what
// treeInto fills, for every envelope and method vector.
func TestOnePassDecodingAgreesWithTheTreeWalk(t *testing.T) {
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
	compare := func(t *testing.T, n *node, input any, typ any) {
		t.Helper()
		raw, _ := json.Marshal(input)
		var found []fault
		n.check(input, &found)
		want := issueSet(fieldIssues("x", found))
		wantValue := reflect.New(reflect.TypeOf(typ))
		if len(found) == 0 {
			if err := treeInto(input, wantValue.Interface()); err != nil {
				t.Fatal(err)
			}
		}
		gotValue := reflect.New(reflect.TypeOf(typ))
		got := issueSet(decodeChecked(raw, n, gotValue.Interface(), "x"))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("one pass %v\ntree walk %v\ninput %s", got, want, raw)
		}
		if len(found) == 0 && !reflect.DeepEqual(gotValue.Interface(), wantValue.Interface()) {
			t.Fatalf("one pass %+v\ntreeInto %+v", gotValue.Elem(), wantValue.Elem())
		}
	}
	ran := 0
	for _, kind := range []string{"message-event", "event-ack", "message-response"} {
		file := kind + ".schema.json"
		for _, c := range casesOf(t, kind) {
			t.Run(kind+"/"+c["name"].(string), func(t *testing.T) { compare(t, documentSchema(file), c["input"], types[file]) })
			ran++
		}
	}
	for _, c := range casesOf(t, "rpc-method") {
		key := c["method"].(string) + "/" + c["part"].(string)
		t.Run(c["name"].(string), func(t *testing.T) {
			typ, ok := types[key]
			if !ok {
				t.Fatalf("no wire type for %s", key)
			}
			compare(t, methodSchema(c["method"].(string), c["part"].(string)), c["input"], typ)
		})
		ran++
	}
	if ran < 50 {
		t.Fatalf("only %d vectors", ran)
	}
}

func issueSet(issues []Issue) []string {
	var out []string
	for _, is := range issues {
		out = append(out, is.Code+"@"+is.Path+": "+is.Message)
	}
	sort.Strings(out)
	return out
}

// The struct plans (keys compared in place, the next expected name first) and the string fast path
// agree with the tree walk on what they take and on what they hand back to the general path: members
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
		t.Run(name, func(t *testing.T) {
			tree, err := parseTree([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			var found []fault
			n.check(tree, &found)
			want := issueSet(fieldIssues("event", found))
			var wantEvent, gotEvent wire.MessageEvent
			if len(found) == 0 {
				if err := treeInto(tree, &wantEvent); err != nil {
					t.Fatal(err)
				}
			}
			got := issueSet(decodeChecked([]byte(raw), n, &gotEvent, "event"))
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("one pass %v\ntree walk %v", got, want)
			}
			if len(found) == 0 && !reflect.DeepEqual(gotEvent, wantEvent) {
				t.Fatalf("one pass %+v\ntreeInto %+v", gotEvent, wantEvent)
			}
		})
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
