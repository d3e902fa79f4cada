package hostsdk

import (
	"fmt"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// The SDK's JSON reading, without encoding/json: the syntax check of a frame, the generic tree encoding/json
// would produce for `any` (nil, bool, float64, string, []any, map[string]any) of a manifest, of a refused
// value to describe and of the values decode.go hands to the keyword rules, and the reading of strings and
// keys that decode.go shares. Syntax is RFC 8259 exactly as encoding/json accepts it (the framing vectors pin
// it); invalid UTF-8 is refused before parsing (framing.utf8_invalid).

type jsonSyntaxError struct {
	offset int
	msg    string
}

func (e *jsonSyntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.offset) }

type treeParser struct {
	data []byte
	// text is data as a string when the caller made one: strings without escapes are cut from it.
	text string
	i    int
	// depth bounds nesting, so a hostile payload cannot exhaust the stack (encoding/json allows 10000).
	depth     int
	discard   bool // only check the syntax, build nothing
	plainKeys bool // no shared key strings (for parsing the schemas they come from)
}

const maxJSONDepth = 10000

// parseTree parses one JSON document (surrounding white space allowed).
func parseTree(data []byte) (any, error) {
	p := treeParser{data: data}
	p.space()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.data) {
		return nil, p.fail("invalid character after the top-level value")
	}
	return v, nil
}

// checkSyntax checks that data is one JSON document without building anything.
func checkSyntax(data []byte) error {
	p := treeParser{data: data, discard: true}
	p.space()
	if _, err := p.value(); err != nil {
		return err
	}
	p.space()
	if p.i != len(p.data) {
		return p.fail("invalid character after the top-level value")
	}
	return nil
}

func (p *treeParser) fail(msg string) error { return &jsonSyntaxError{offset: p.i, msg: msg} }

func (p *treeParser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *treeParser) value() (any, error) {
	if p.i >= len(p.data) {
		return nil, p.fail("unexpected end of JSON input")
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.word("true")
	case c == 'f':
		return false, p.word("false")
	case c == 'n':
		return nil, p.word("null")
	}
	return nil, p.fail("invalid character looking for the beginning of a value")
}

func (p *treeParser) word(w string) error {
	if len(p.data)-p.i < len(w) || string(p.data[p.i:p.i+len(w)]) != w {
		return p.fail("invalid literal")
	}
	p.i += len(w)
	return nil
}

func (p *treeParser) object() (any, error) {
	if p.depth++; p.depth > maxJSONDepth {
		return nil, p.fail("exceeded max depth")
	}
	p.i++ // {
	var m map[string]any
	if !p.discard {
		m = make(map[string]any, 8)
	}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		p.depth--
		return m, nil
	}
	for {
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, p.fail("expected a string for an object key")
		}
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, p.fail("expected ':' after an object key")
		}
		p.i++
		p.space()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if m != nil {
			m[key] = v
		}
		done, err := p.afterElement('}', "expected ',' or '}' after an object value")
		if err != nil {
			return nil, err
		}
		if done {
			return m, nil
		}
	}
}

func (p *treeParser) array() (any, error) {
	if p.depth++; p.depth > maxJSONDepth {
		return nil, p.fail("exceeded max depth")
	}
	p.i++ // [
	var a []any
	if !p.discard {
		a = make([]any, 0, 4)
	}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		p.depth--
		return a, nil
	}
	for {
		p.space()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if !p.discard {
			a = append(a, v)
		}
		done, err := p.afterElement(']', "expected ',' or ']' after an array element")
		if err != nil {
			return nil, err
		}
		if done {
			return a, nil
		}
	}
}

// afterElement reads what follows a member or element: a comma (more follow) or `end` (the container is
// done, one level up); anything else is the error `expected`.
func (p *treeParser) afterElement(end byte, expected string) (done bool, err error) {
	p.space()
	if p.i >= len(p.data) {
		return false, p.fail("unexpected end of JSON input")
	}
	switch p.data[p.i] {
	case ',':
		p.i++
		return false, nil
	case end:
		p.i++
		p.depth--
		return true, nil
	}
	return false, p.fail(expected)
}

func (p *treeParser) number() (any, error) {
	start := p.i
	d := p.data
	if p.i < len(d) && d[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(d) && d[p.i] == '0':
		p.i++
	case p.i < len(d) && d[p.i] >= '1' && d[p.i] <= '9':
		for p.i < len(d) && d[p.i] >= '0' && d[p.i] <= '9' {
			p.i++
		}
	default:
		return nil, p.fail("invalid character in numeric literal")
	}
	integer := true
	if p.i < len(d) && d[p.i] == '.' {
		integer = false
		p.i++
		if p.i >= len(d) || d[p.i] < '0' || d[p.i] > '9' {
			return nil, p.fail("invalid character after decimal point in numeric literal")
		}
		for p.i < len(d) && d[p.i] >= '0' && d[p.i] <= '9' {
			p.i++
		}
	}
	if p.i < len(d) && (d[p.i] == 'e' || d[p.i] == 'E') {
		integer = false
		p.i++
		if p.i < len(d) && (d[p.i] == '+' || d[p.i] == '-') {
			p.i++
		}
		if p.i >= len(d) || d[p.i] < '0' || d[p.i] > '9' {
			return nil, p.fail("invalid character in exponent of numeric literal")
		}
		for p.i < len(d) && d[p.i] >= '0' && d[p.i] <= '9' {
			p.i++
		}
	}
	lit := d[start:p.i]
	if p.discard {
		return nil, nil // checked; a boxed float64 would allocate for nothing
	}
	if integer && len(lit) <= 15 {
		// Small integers exactly, without strconv's general path.
		n, neg := 0.0, lit[0] == '-'
		digits := lit
		if neg {
			digits = lit[1:]
		}
		for _, c := range digits {
			n = n*10 + float64(c-'0')
		}
		if neg {
			n = -n
		}
		return n, nil
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return nil, &jsonSyntaxError{offset: start, msg: "number " + string(lit) + " is out of range"}
	}
	return f, nil
}

// key reads an object key: the protocol's own field names are shared strings instead of a new one per
// key (most keys of a frame are among them).
func (p *treeParser) key() (string, error) {
	if p.plainKeys || p.discard {
		return p.str()
	}
	start := p.i + 1
	for j := start; j < len(p.data); j++ {
		c := p.data[j]
		if c == '"' {
			if k, ok := knownKeys()[string(p.data[start:j])]; ok {
				p.i = j + 1
				return k, nil
			}
			break
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	return p.str()
}

func knownKeys() map[string]string {
	knownKeysOnce.Do(func() {
		keys := map[string]string{}
		for _, k := range []string{"jsonrpc", "id", "method", "params", "result", "error", "code", "message", "data"} {
			keys[k] = k
		}
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				if props, ok := x["properties"].(map[string]any); ok {
					for k := range props {
						keys[k] = k
					}
				}
				for _, e := range x {
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(schemaTree())
		knownKeysValue = keys
	})
	return knownKeysValue
}

var (
	knownKeysOnce  sync.Once
	knownKeysValue map[string]string
)

// str reads a string at p.i (the opening quote). The bytes are valid UTF-8 (checked before parsing).
func (p *treeParser) str() (string, error) {
	p.i++ // "
	start := p.i
	d := p.data
	// Fast path: no escapes.
	for p.i < len(d) {
		c := d[p.i]
		if c == '"' {
			s := ""
			switch {
			case p.discard:
			case p.text != "":
				s = p.text[start:p.i]
			default:
				s = string(d[start:p.i])
			}
			p.i++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.fail("invalid control character in string literal")
		}
		p.i++
	}
	buf := make([]byte, 0, p.i-start+16)
	buf = append(buf, d[start:p.i]...)
	for p.i < len(d) {
		c := d[p.i]
		switch {
		case c == '"':
			p.i++
			return string(buf), nil
		case c < 0x20:
			return "", p.fail("invalid control character in string literal")
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		p.i++
		if p.i >= len(d) {
			break
		}
		e := d[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.fail("invalid \\u escape in string literal")
			}
			if utf16.IsSurrogate(r) {
				// A pair makes one character; a lone half becomes U+FFFD, as encoding/json does.
				r2 := rune(-1)
				if p.i+1 < len(d) && d[p.i] == '\\' && d[p.i+1] == 'u' {
					save := p.i
					p.i += 2
					if r2, ok = p.hex4(); !ok {
						return "", p.fail("invalid \\u escape in string literal")
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						r = dec
					} else {
						p.i = save
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", p.fail("invalid escape in string literal")
		}
	}
	return "", p.fail("unexpected end of JSON input")
}

func (p *treeParser) hex4() (rune, bool) {
	if len(p.data)-p.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.data[p.i : p.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r*16 + rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r*16 + rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r*16 + rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}
