package hostsdk

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// The hot path's JSON writing: the frames every event sends (its ACK, a reply or send, events.completed)
// are appended to a buffer field by field instead of going through encoding/json's reflection and its
// re-validation of each part's MarshalJSON output. The bytes are exactly what json.Marshal writes for the
// same value (a test compares them on tricky strings and numbers); anything else, and these frames when
// they carry an error with free-form details, go through encoding/json.

// appendMessage appends the JSON of one outgoing message; false when it is not one of the hot frames
// (the caller then uses json.Marshal).
func appendMessage(b []byte, message any) ([]byte, bool) {
	switch m := message.(type) {
	case rpcResponseOut:
		ack, ok := m.Result.(wire.EventAck)
		if !ok || ack.Error != nil || !plainID(m.ID) {
			return b, false
		}
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = append(b, m.ID...)
		b = append(b, `,"result":{"eventId":`...)
		b = appendString(b, ack.EventID)
		b = append(b, `,"accepted":`...)
		b = strconv.AppendBool(b, ack.Accepted)
		if ack.Intercepted {
			b = append(b, `,"intercepted":true`...)
		}
		return append(b, "}}"...), true
	case rpcRequestOut:
		start := len(b)
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = strconv.AppendInt(b, m.ID, 10)
		b = append(b, `,"method":`...)
		b = appendString(b, m.Method)
		b = append(b, `,"params":`...)
		ok := false
		switch p := m.Params.(type) {
		case wire.EventsCompletedParams:
			b, ok = appendCompleted(b, p)
		case wire.MessagesReplyParams:
			b = append(b, `{"token":`...)
			b = appendString(b, p.Token)
			b = append(b, `,"eventId":`...)
			b = appendString(b, p.EventID)
			b = append(b, `,"message":`...)
			if b, ok = appendOutgoing(b, p.Message); ok {
				b = append(b, '}')
			}
		case wire.MessagesSendParams:
			b = append(b, `{"token":`...)
			b = appendString(b, p.Token)
			b = append(b, `,"target":`...)
			b = appendTarget(b, p.Target)
			b = append(b, `,"message":`...)
			if b, ok = appendOutgoing(b, p.Message); ok {
				if p.EventID != "" {
					b = append(b, `,"eventId":`...)
					b = appendString(b, p.EventID)
				}
				b = append(b, '}')
			}
		}
		if !ok {
			return b[:start], false
		}
		return append(b, '}'), true
	}
	return b, false
}

func appendCompleted(b []byte, p wire.EventsCompletedParams) ([]byte, bool) {
	if p.Error != nil {
		return b, false
	}
	b = append(b, `{"token":`...)
	b = appendString(b, p.Token)
	b = append(b, `,"eventId":`...)
	b = appendString(b, p.EventID)
	if p.DurationMs != nil {
		var ok bool
		b = append(b, `,"durationMs":`...)
		if b, ok = appendFloat(b, *p.DurationMs); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

func appendTarget(b []byte, t wire.Target) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, t.Type)
	b = append(b, `,"id":`...)
	b = appendString(b, t.ID)
	if t.BotAccountID != "" {
		b = append(b, `,"botAccountId":`...)
		b = appendString(b, t.BotAccountID)
	}
	return append(b, '}')
}

// appendOutgoing appends {format?, parts}; false for parts it does not know and for a message with a
// keyboard, which encoding/json writes (composites are flattened before sending, so they do not occur here).
func appendOutgoing(b []byte, m wire.OutgoingMessage) ([]byte, bool) {
	if m.Keyboard != nil {
		return b, false
	}
	b = append(b, '{')
	if m.Format != nil {
		b = append(b, `"format":`...)
		b = appendString(b, *m.Format)
		b = append(b, ',')
	}
	b = append(b, `"parts":`...)
	if m.Parts == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, part := range m.Parts {
			if i > 0 {
				b = append(b, ',')
			}
			switch v := part.(type) {
			case wire.MessagePartText:
				b = append(b, `{"type":"text","text":`...)
				b = appendString(b, v.Text)
				if v.Literal {
					b = append(b, `,"literal":true`...)
				}
				b = append(b, '}')
			case wire.MessagePartMentionUser:
				b = append(b, `{"type":"mention","target":"user","id":`...)
				b = appendString(b, v.ID)
				if v.DisplayName != "" {
					b = append(b, `,"displayName":`...)
					b = appendString(b, v.DisplayName)
				}
				b = append(b, '}')
			case wire.MessagePartMentionEveryone:
				b = append(b, `{"type":"mention","target":"everyone"}`...)
			default:
				return b, false
			}
		}
		b = append(b, ']')
	}
	return append(b, '}'), true
}

// plainID: an id from the host that encoding/json would copy as it is (it escapes <, > and & and
// U+2028/U+2029, whose first byte is 0xE2, even in raw JSON).
func plainID(id json.RawMessage) bool {
	for _, c := range id {
		if c == '<' || c == '>' || c == '&' || c == 0xE2 {
			return false
		}
	}
	return len(id) > 0
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way encoding/json writes it: <, > and & escaped for HTML,
// U+2028 and U+2029 escaped, invalid UTF-8 replaced by U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendFloat appends f as encoding/json writes a float64 (ES6 number form); false for NaN and
// infinities, which JSON cannot carry.
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 becomes 1e-7, as in JavaScript.
		if n := len(b) - start; n >= 4 && b[len(b)-4] == 'e' && b[len(b)-3] == '-' && b[len(b)-2] == '0' {
			b[len(b)-2] = b[len(b)-1]
			b = b[:len(b)-1]
		}
	}
	return b, true
}

// marshalMessage is the JSON of one outgoing message, appended to b: the hot frames by hand, the rest
// with encoding/json.
func marshalMessage(b []byte, message any) ([]byte, error) {
	if out, ok := appendMessage(b, message); ok {
		return out, nil
	}
	body, err := json.Marshal(message)
	if err != nil {
		return b, err
	}
	return append(b, body...), nil
}
