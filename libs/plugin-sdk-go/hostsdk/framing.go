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
	"unicode/utf8"

	"plugin-host.dev/sdk-go/hostsdk/wire"
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
	Result    any
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
	p := treeParser{data: payload, idStart: -1}
	p.space()
	tree, err := p.value()
	if err == nil {
		p.space()
		if p.i != len(payload) {
			err = p.fail("invalid character after the top-level value")
		}
	}
	if err != nil {
		return nil, fail(wire.CodeFramingJSONInvalid, "payload is not JSON: %v", err)
	}
	env, ok := tree.(map[string]any)
	if !ok {
		return nil, fail(wire.CodeFramingMessageInvalid, "payload is not a JSON object")
	}
	if v, ok := env["jsonrpc"].(string); !ok || v != "2.0" {
		return nil, fail(wire.CodeFramingMessageInvalid, `"jsonrpc" must be "2.0"`)
	}
	msg := &rpcMessage{}
	id, hasID := env["id"]
	idNull := hasID && id == nil
	if hasID && !idNull {
		if !validID(id) {
			return nil, fail(wire.CodeFramingMessageInvalid, `"id" must be a string or an integer`)
		}
		msg.ID = json.RawMessage(payload[p.idStart:p.idEnd])
	}
	if method, ok := env["method"]; ok {
		if msg.Method, _ = method.(string); msg.Method == "" {
			return nil, fail(wire.CodeFramingMessageInvalid, `"method" must be a non-empty string`)
		}
		if idNull {
			return nil, fail(wire.CodeFramingMessageInvalid, `"id" of a request must be a string or an integer`)
		}
		if _, msg.HasParams = env["params"]; msg.HasParams {
			msg.Params = payload[p.paramsStart:p.paramsEnd]
		}
		return msg, nil
	}
	if !hasID {
		return nil, fail(wire.CodeFramingMessageInvalid, `a response needs "id"`)
	}
	if idNull {
		msg.ID = json.RawMessage("null")
	}
	result, hasResult := env["result"]
	errValue, hasError := env["error"]
	if hasResult == hasError {
		return nil, fail(wire.CodeFramingMessageInvalid, `a response needs exactly one of "result" and "error"`)
	}
	if hasError {
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

// validID: a JSON-RPC id is a string or an integer.
func validID(id any) bool {
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
