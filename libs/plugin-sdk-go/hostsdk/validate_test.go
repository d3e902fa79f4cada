package hostsdk_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"plugin-host.dev/sdk-go/v2/hostsdk"
	"plugin-host.dev/sdk-go/v2/hostsdk/hostsdktest"
	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// issuesOf reads details.issues (stdio error data) as code@path strings.
func issuesOf(t *testing.T, data json.RawMessage) []string {
	t.Helper()
	var d struct {
		Issues []hostsdk.Issue `json:"issues"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("error data %s: %v", data, err)
	}
	var out []string
	for _, is := range d.Issues {
		if is.Message == "" {
			t.Errorf("issue without message: %+v", is)
		}
		out = append(out, is.Code+"@"+is.Path)
	}
	return out
}

func TestEventsAreCheckedAgainstTheSchemaWithPaths(t *testing.T) {
	h := hostsdktest.Start(t, echoPlugin(t), hostsdktest.Options{})
	event := h.Event(hostsdktest.Message{Text: "/echo hi"})
	raw, _ := json.Marshal(event)
	var tree map[string]any
	_ = json.Unmarshal(raw, &tree)
	tree["timestamp"] = "2026-01-01T10:00:00" // no zone
	delete(tree["sender"].(map[string]any), "mentionId")
	_, rpcErr := h.Call(wire.MethodEventsMessage, tree)
	if rpcErr == nil || rpcErr.Code != wire.RPCInvalidParams {
		t.Fatalf("answer %v", rpcErr)
	}
	got := strings.Join(issuesOf(t, rpcErr.Data), ",")
	if !strings.Contains(got, "event.field.invalid@timestamp") || !strings.Contains(got, "event.field.required@sender.mentionId") {
		t.Fatalf("issues %s", got)
	}
	// Unknown fields in the host's envelope are fine (a newer host may add some).
	tree = map[string]any{}
	_ = json.Unmarshal(raw, &tree)
	tree["futureField"] = true
	tree["eventId"] = "evt-future"
	if _, rpcErr := h.Call(wire.MethodEventsMessage, tree); rpcErr != nil {
		t.Fatalf("an open envelope was refused: %v", rpcErr)
	}
}

func TestRequestParamsAreCheckedAgainstTheMethodTable(t *testing.T) {
	h := hostsdktest.Start(t, echoPlugin(t), hostsdktest.Options{})
	cases := []struct {
		method string
		params any
		want   string
	}{
		{wire.MethodEventsCancel, map[string]any{"eventId": "x", "reason": "bored"}, "params.field.invalid@reason"},
		{wire.MethodEventsCancel, map[string]any{"reason": "deadline"}, "params.field.required@eventId"},
		{wire.MethodPluginPing, map[string]any{"nonce": 5}, "params.field.invalid@nonce"},
		{wire.MethodPluginStop, map[string]any{"graceMilliseconds": -1}, "params.field.invalid@graceMilliseconds"},
		{wire.MethodSettingsChanged, map[string]any{}, "params.field.required@settings"},
	}
	for _, c := range cases {
		_, rpcErr := h.Call(c.method, c.params)
		if rpcErr == nil || rpcErr.Code != wire.RPCInvalidParams {
			t.Fatalf("%s %v: answer %v", c.method, c.params, rpcErr)
		}
		if got := issuesOf(t, rpcErr.Data); !slices.Contains(got, c.want) {
			t.Errorf("%s: issues %v, want %s", c.method, got, c.want)
		}
	}
	if r := h.Ping("still-alive"); r.Nonce != "still-alive" {
		t.Fatalf("ping after refusals: %+v", r)
	}
}

func TestManifestFaultsCarryTheHostsCodesAndPaths(t *testing.T) {
	base := `{"pluginId":"com.example.x","name":"X","version":"1.0.0","author":"A","protocolVersion":2,"sdkVersion":"2.0.0",
	"transport":{"type":"stdio-jsonrpc","stdio":{"command":"./x"}},"eventSubscriptions":[{"eventType":"message.created"}]%s}`
	cases := map[string]string{
		`,"permissions":["messages.reply","messages.reply"]`: "manifest.permissions.duplicate@permissions[1]",
		`,"permissions":["messages.fly"]`:                    "manifest.permissions.unknown@permissions[0]",
		`,"commands":[{"name":"echo"},{"name":"ECHO"}]`:      "manifest.commands.duplicate@commands[1].name",
		`,"cwd":"."`: "manifest.field.unknown@cwd",
		`,"settings":{"configSchema":{"k":{"type":"secret","label":"K","defaultValue":"x"}}}`: "manifest.settings.invalid@settings.configSchema.k.defaultValue",
	}
	for extra, want := range cases {
		_, err := hostsdk.ParseManifest([]byte(strings.Replace(base, "%s", extra, 1)))
		var se *hostsdk.SDKError
		if !errors.As(err, &se) || se.Code != wire.ErrSDKManifestInvalid {
			t.Fatalf("%s: %v", extra, err)
		}
		var got []string
		for _, is := range se.Issues {
			got = append(got, is.Code+"@"+is.Path)
		}
		if !slices.Contains(got, want) {
			t.Errorf("%s: issues %v, want %s", extra, got, want)
		}
	}
	if _, err := hostsdk.ParseManifest([]byte(strings.Replace(base, "%s", "", 1))); err != nil {
		t.Fatalf("a valid manifest: %v", err)
	}
	_, err := hostsdk.ParseManifest([]byte(`{"pluginId":`))
	var se *hostsdk.SDKError
	if !errors.As(err, &se) || len(se.Issues) != 1 || se.Issues[0].Code != wire.CodeManifestJSONInvalid {
		t.Fatalf("broken JSON: %v", err)
	}
}
