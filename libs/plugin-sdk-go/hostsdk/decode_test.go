package hostsdk

import (
	"encoding/json"
	"reflect"
	"sort"
	"testing"

	"plugin-host.dev/sdk-go/hostsdk/wire"
)

// The one-pass decoder (decode.go) must say exactly what the tree walk says, and fill exactly what
// treeInto fills, for every envelope and method vector.
func TestOnePassDecodingAgreesWithTheTreeWalk(t *testing.T) {
	types := map[string]any{
		"host.initialize/params": wire.HostInitializeParams{}, "host.initialize/result": wire.HostInitializeResult{},
		"events.message/params": wire.MessageEvent{}, "events.message/result": wire.EventAck{},
		"events.cancel/params": wire.EventsCancelParams{}, "events.cancel/result": wire.EventsCancelResult{},
		"plugin.stop/params": wire.PluginStopParams{}, "plugin.stop/result": wire.PluginStopResult{},
		"plugin.ping/params": wire.PluginPingParams{}, "plugin.ping/result": wire.PluginPingResult{},
		"settings.changed/params": wire.SettingsChangedParams{}, "settings.changed/result": wire.SettingsChangedResult{},
		"log.write/params": wire.LogWriteParams{}, "log.write/result": wire.LogWriteResult{},
		"events.completed/params": wire.EventsCompletedParams{}, "events.completed/result": wire.EventsCompletedResult{},
		"messages.reply/params": wire.MessagesReplyParams{}, "messages.reply/result": wire.SendResult{},
		"messages.send/params": wire.MessagesSendParams{}, "messages.send/result": wire.SendResult{},
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
