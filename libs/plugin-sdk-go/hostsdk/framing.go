package hostsdk

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// FramingError is a broken stdio stream (docs/protocol/v2.md 3.2): Code is a framing.* code of the error
// catalogue. Frames cannot be resynchronised, so the connection ends.
type FramingError struct {
	Code    string
	Message string
}

func (e *FramingError) Error() string { return e.Code + ": " + e.Message }

var (
	headerLine  = regexp.MustCompile("^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \\t]*(.*?)[ \\t]*$")
	contentType = regexp.MustCompile(`(?i)^application/vscode-jsonrpc\s*;\s*charset\s*=\s*"?utf-?8"?$`)
)

// rpcMessage is one decoded JSON-RPC 2.0 object: a request (Method set), or a response.
type rpcMessage struct {
	ID        json.RawMessage // nil for a notification; the id's JSON text, echoed in the answer as it came
	Method    string
	Params    []byte // the JSON text of "params", nil when absent; decodeParams reads it with the method's schema
	HasParams bool
	Result    []byte // the JSON text of "result" (responses)
	Error     *rpcError
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// frameReader decodes Content-Length framed JSON-RPC messages with bounded header and payload sizes.
type frameReader struct {
	r          *bufio.Reader
	maxHeader  int
	maxPayload int
	line       []byte
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64*1024), maxHeader: wire.LimitMaxHeaderBytes, maxPayload: wire.LimitMaxPayloadBytes}
}

func fail(code, format string, args ...any) error {
	return &FramingError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// next returns the next message, io.EOF at a clean end of stream, or a *FramingError.
func (f *frameReader) next() (*rpcMessage, error) {
	if length, ok := f.canonicalHeader(); ok {
		return f.payload(length)
	}
	total := 0
	length := -1
	sawType := false
	f.line = f.line[:0]
	for {
		b, err := f.r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) {
				if total == 0 {
					return nil, io.EOF
				}
				return nil, fail(wire.CodeFramingEOFInFrame, "the stream ended inside a frame header")
			}
			return nil, err
		}
		total++
		if b != '\n' {
			if total > f.maxHeader {
				return nil, fail(wire.CodeFramingHeaderTooLong, "header block exceeds %d bytes", f.maxHeader)
			}
			f.line = append(f.line, b)
			continue
		}
		if len(f.line) == 0 || f.line[len(f.line)-1] != '\r' {
			return nil, fail(wire.CodeFramingHeaderMalformed, "header line %q does not end with CRLF", clip(string(f.line), 80))
		}
		text := string(f.line[:len(f.line)-1])
		f.line = f.line[:0]
		if total > f.maxHeader {
			return nil, fail(wire.CodeFramingHeaderTooLong, "header block is more than %d bytes", f.maxHeader)
		}
		if text == "" {
			break
		}
		m := headerLine.FindStringSubmatch(text)
		if m == nil {
			return nil, fail(wire.CodeFramingHeaderMalformed, "header line %q is not \"Name: value\"", clip(text, 80))
		}
		switch strings.ToLower(m[1]) {
		case "content-length":
			if length >= 0 {
				return nil, fail(wire.CodeFramingHeaderDuplicate, "Content-Length appears twice")
			}
			if len(m[2]) == 0 || len(m[2]) > 10 || strings.Trim(m[2], "0123456789") != "" {
				return nil, fail(wire.CodeFramingContentLengthInvalid, "Content-Length %q is not a decimal integer", m[2])
			}
			n, _ := strconv.ParseInt(m[2], 10, 64)
			if n > math.MaxInt32 {
				n = math.MaxInt32
			}
			length = int(n)
		case "content-type":
			if sawType {
				return nil, fail(wire.CodeFramingHeaderDuplicate, "Content-Type appears twice")
			}
			sawType = true
			if !contentType.MatchString(m[2]) {
				return nil, fail(wire.CodeFramingContentTypeUnsupported, "Content-Type %q is not supported", m[2])
			}
		default:
			return nil, fail(wire.CodeFramingHeaderUnknown, "unknown header %q", m[1])
		}
	}
	if length < 0 {
		return nil, fail(wire.CodeFramingContentLengthMissing, "frame has no Content-Length header")
	}
	return f.payload(length)
}

const canonicalPrefix = "Content-Length: "

// canonicalHeader reads the header every encoder writes, "Content-Length: N\r\n\r\n", straight from
// the buffered bytes without building strings; anything else (other headers, spacing, an incomplete
// header in the buffer) is left to the general parser, which accepts the same form.
func (f *frameReader) canonicalHeader() (int, bool) {
	// Wait for the first byte, then look only at what is buffered: Peek of more would wait for bytes a
	// short last frame never sends.
	if _, err := f.r.Peek(1); err != nil {
		return 0, false
	}
	peek, _ := f.r.Peek(min(f.r.Buffered(), len(canonicalPrefix)+14))
	if len(peek) < len(canonicalPrefix)+5 || string(peek[:len(canonicalPrefix)]) != canonicalPrefix {
		return 0, false
	}
	i := len(canonicalPrefix)
	n := 0
	for i < len(peek) && i-len(canonicalPrefix) < 10 && peek[i] >= '0' && peek[i] <= '9' {
		n = n*10 + int(peek[i]-'0')
		i++
	}
	if i == len(canonicalPrefix) || len(peek) < i+4 || string(peek[i:i+4]) != "\r\n\r\n" || i+4 > f.maxHeader {
		return 0, false
	}
	_, _ = f.r.Discard(i + 4)
	return n, true
}

func (f *frameReader) payload(length int) (*rpcMessage, error) {
	if length == 0 {
		return nil, fail(wire.CodeFramingPayloadEmpty, "Content-Length is 0")
	}
	if length > f.maxPayload {
		return nil, fail(wire.CodeFramingPayloadTooLarge, "Content-Length %d exceeds %d bytes", length, f.maxPayload)
	}
	payload := make([]byte, length)
	if _, err := io.ReadFull(f.r, payload); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fail(wire.CodeFramingEOFInFrame, "the stream ended inside a frame payload")
		}
		return nil, err
	}
	return decodePayload(payload)
}

func decodePayload(payload []byte) (*rpcMessage, error) {
	if !utf8.Valid(payload) {
		return nil, fail(wire.CodeFramingUTF8Invalid, "payload is not valid UTF-8")
	}
	env, isObject, err := scanEnvelope(payload)
	if err != nil {
		return nil, fail(wire.CodeFramingJSONInvalid, "payload is not JSON: %v", err)
	}
	if !isObject {
		return nil, fail(wire.CodeFramingMessageInvalid, "payload is not a JSON object")
	}
	if v, ok := env.get(payload, fieldJSONRPC); !ok || !isString(v, "2.0") {
		return nil, fail(wire.CodeFramingMessageInvalid, `"jsonrpc" must be "2.0"`)
	}
	msg := &rpcMessage{}
	id, hasID := env.get(payload, fieldID)
	idNull := hasID && string(id) == "null"
	if hasID && !idNull {
		if !validID(id) {
			return nil, fail(wire.CodeFramingMessageInvalid, `"id" must be a string or an integer`)
		}
		msg.ID = json.RawMessage(id)
	}
	if method, ok := env.get(payload, fieldMethod); ok {
		if msg.Method = methodName(method); msg.Method == "" {
			return nil, fail(wire.CodeFramingMessageInvalid, `"method" must be a non-empty string`)
		}
		if idNull {
			return nil, fail(wire.CodeFramingMessageInvalid, `"id" of a request must be a string or an integer`)
		}
		msg.Params, msg.HasParams = env.get(payload, fieldParams)
		return msg, nil
	}
	if !hasID {
		return nil, fail(wire.CodeFramingMessageInvalid, `a response needs "id"`)
	}
	if idNull {
		msg.ID = json.RawMessage("null")
	}
	result, hasResult := env.get(payload, fieldResult)
	errText, hasError := env.get(payload, fieldError)
	if hasResult == hasError {
		return nil, fail(wire.CodeFramingMessageInvalid, `a response needs exactly one of "result" and "error"`)
	}
	if hasError {
		errValue, _ := parseTree(errText)
		shape, _ := errValue.(map[string]any)
		code, codeOK := shape["code"].(float64)
		message, messageOK := shape["message"].(string)
		if !codeOK || code != math.Trunc(code) || !messageOK {
			return nil, fail(wire.CodeFramingMessageInvalid, `"error" must be {code: integer, message: string}`)
		}
		msg.Error = &rpcError{Code: int(code), Message: message}
		if data, ok := shape["data"]; ok {
			msg.Error.Data, _ = json.Marshal(data)
		}
		return msg, nil
	}
	msg.Result = result
	return msg, nil
}

// The members of the JSON-RPC envelope.
const (
	fieldJSONRPC = iota
	fieldID
	fieldMethod
	fieldParams
	fieldResult
	fieldError
	envelopeFields
)

var envelopeNames = [envelopeFields]string{"jsonrpc", "id", "method", "params", "result", "error"}

// envelope is where the value of each JSON-RPC member is in the payload (the last one when a member
// repeats, as encoding/json keeps it); other members are checked for syntax and skipped.
type envelope struct {
	start, end [envelopeFields]int
	has        [envelopeFields]bool
}

func (e *envelope) get(payload []byte, field int) ([]byte, bool) {
	if !e.has[field] {
		return nil, false
	}
	return payload[e.start[field]:e.end[field]], true
}

// scanEnvelope checks that payload is one JSON document and, when it is an object, where its JSON-RPC
// members are, without building any value (isObject false when it is JSON but not an object).
func scanEnvelope(payload []byte) (env envelope, isObject bool, err error) {
	p := treeParser{data: payload, discard: true}
	p.space()
	if p.i >= len(payload) || payload[p.i] != '{' {
		return env, false, checkSyntax(payload)
	}
	p.depth = 1
	p.i++ // {
	p.space()
	if p.i < len(payload) && payload[p.i] == '}' {
		p.i++
	} else {
		for {
			p.space()
			if p.i >= len(payload) || payload[p.i] != '"' {
				return env, false, p.fail("expected a string for an object key")
			}
			keyStart := p.i + 1
			if _, err := p.str(); err != nil {
				return env, false, err
			}
			key := payload[keyStart : p.i-1]
			p.space()
			if p.i >= len(payload) || payload[p.i] != ':' {
				return env, false, p.fail("expected ':' after an object key")
			}
			p.i++
			p.space()
			at := p.i
			if _, err := p.value(); err != nil {
				return env, false, err
			}
			if field := envelopeField(key); field >= 0 {
				env.start[field], env.end[field], env.has[field] = at, p.i, true
			}
			done, err := p.afterElement('}', "expected ',' or '}' after an object value")
			if err != nil {
				return env, false, err
			}
			if done {
				break
			}
		}
	}
	p.space()
	if p.i != len(payload) {
		return env, false, p.fail("invalid character after the top-level value")
	}
	return env, true, nil
}

// envelopeField is the member a key names, or -1. A key with escapes is decoded first ("\u0069d" is "id").
func envelopeField(key []byte) int {
	for i, name := range envelopeNames {
		if string(key) == name {
			return i
		}
	}
	if bytes.IndexByte(key, '\\') >= 0 {
		quoted := make([]byte, 0, len(key)+2)
		quoted = append(append(append(quoted, '"'), key...), '"')
		if s, err := parseTree(quoted); err == nil {
			for i, name := range envelopeNames {
				if s == name {
					return i
				}
			}
		}
	}
	return -1
}

// isString: the JSON value v is the string want.
func isString(v []byte, want string) bool {
	if len(v) == len(want)+2 && v[0] == '"' && string(v[1:len(v)-1]) == want {
		return true
	}
	s, err := parseTree(v)
	return err == nil && s == want
}

// methodName is the string of a "method" value ("" when it is not a string): the protocol's method
// names are shared strings.
func methodName(v []byte) string {
	if len(v) >= 2 && v[0] == '"' {
		if m, ok := knownMethods()[string(v[1:len(v)-1])]; ok {
			return m
		}
	}
	s, _ := parseTree(v)
	name, _ := s.(string)
	return name
}

func knownMethods() map[string]string {
	knownMethodsOnce.Do(func() {
		knownMethodsValue = map[string]string{}
		for _, m := range wire.Methods {
			knownMethodsValue[m.Method] = m.Method
		}
	})
	return knownMethodsValue
}

var (
	knownMethodsOnce  sync.Once
	knownMethodsValue map[string]string
)

// validID: a JSON-RPC id is a string or an integer.
func validID(raw []byte) bool {
	if raw[0] == '"' {
		return true
	}
	digits := true
	for _, c := range raw {
		if c < '0' || c > '9' {
			digits = false
			break
		}
	}
	if digits {
		return true
	}
	id, _ := parseTree(raw)
	switch v := id.(type) {
	case string:
		return true
	case float64:
		return v == math.Trunc(v)
	}
	return false
}

// encodeFrame writes one message as a frame: header and payload in one buffer, so one Write sends it.
func encodeFrame(message any) ([]byte, error) {
	body, err := json.Marshal(message)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(len(body) + 24)
	buf.WriteString("Content-Length: ")
	buf.WriteString(strconv.Itoa(len(body)))
	buf.WriteString("\r\n\r\n")
	buf.Write(body)
	return buf.Bytes(), nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
