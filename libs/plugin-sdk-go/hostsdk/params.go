// Checking and decoding the params of a host request or an HTTP event in one pass (decode.go).

package hostsdk

import (
	"strings"
	"sync"
	"unicode/utf8"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// decodeParams checks the params of a host request against its method's schema (the message event
// against message-event.schema.json, with event.* codes) while it fills v from them, in one pass
// (decode.go), and lists the issues of refused params. Omitted or null params are {}.
func decodeParams(m *rpcMessage, v any) []Issue {
	raw := m.Params
	if !m.HasParams || string(raw) == "null" {
		raw = []byte("{}")
	}
	if m.Method == wire.MethodEventsMessage {
		return decodeChecked(raw, messageEventSchema(), v, "event")
	}
	n := methodSchema(m.Method, "params")
	if n == nil {
		return []Issue{{"params.field.invalid", "", m.Method + " has no params in protocol v2"}}
	}
	return decodeChecked(raw, n, v, "params")
}

// decodeEvent checks a message event (an HTTP body) against its schema and decodes it.
func decodeEvent(raw []byte, v any) []Issue {
	if !utf8.Valid(raw) {
		return []Issue{{"event.field.invalid", "", "the event is not valid UTF-8"}}
	}
	if err := checkSyntax(raw); err != nil {
		return []Issue{{"event.field.invalid", "", "the event is not JSON: " + err.Error()}}
	}
	return decodeChecked(raw, messageEventSchema(), v, "event")
}

// messageEventSchema is the compiled message-event.schema.json, looked up once.
var messageEventSchema = sync.OnceValue(func() *node { return documentSchema("message-event.schema.json") })

// describeIssues is the issues on one line, for error messages and logs.
func describeIssues(issues []Issue) string {
	lines := make([]string, len(issues))
	for i, is := range issues {
		lines[i] = is.Message
	}
	return strings.Join(lines, "; ")
}
