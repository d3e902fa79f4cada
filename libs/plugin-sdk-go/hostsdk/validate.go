package hostsdk

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Validation of protocol documents against the protocol's JSON Schemas (wire.SchemasJSON, generated from
// libs/protocol/schema): the subset of JSON Schema those schemas use, plus the rules JSON Schema cannot
// express that the host applies as well (names not blank and without control characters, command words
// unique ignoring case, settings fields that fit their type). Issues carry the host's codes and paths
// (`commands[0].aliases[1]`), so a plugin author sees what the host would say at install.
//
// Values are what encoding/json decodes into `any`: nil, bool, float64, string, []any, map[string]any.
// This file is the tree walk: the check of a manifest (manifest_rules.go), the keyword rules decode.go
// applies to the values it does not judge itself, and the words of a refusal (describeRefusal) once
// decode.go, the one path that decides on and builds a host request's params, has refused them. The
// schemas are compiled in schema.go.

// vpath is the path of a fault (a linked list from the last key), formatted only for the issues.
type vpath struct {
	parent *vpath
	key    string
	index  int // -1 for an object key
}

func (p *vpath) child(key string) *vpath { return &vpath{parent: p, key: key, index: -1} }

var identifierPattern = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// String formats a path as the host does: `commands[0].aliases[1]`, odd keys quoted: `environment["1PORT"]`.
func (p *vpath) String() string {
	var keys []*vpath
	for q := p; q != nil; q = q.parent {
		keys = append(keys, q)
	}
	var b strings.Builder
	for i := len(keys) - 1; i >= 0; i-- {
		k := keys[i]
		switch {
		case k.index >= 0:
			b.WriteString("[" + strconv.Itoa(k.index) + "]")
		case identifierPattern.MatchString(k.key):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(k.key)
		default:
			b.WriteString("[" + jsonString(k.key) + "]")
		}
	}
	return b.String()
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// fault is one finding: kind is "required", "unknown" or "invalid"; keyword the schema keyword at fault.
type fault struct {
	kind    string
	path    *vpath
	keyword string
	message string
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64, json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	default:
		return "object"
	}
}

func isType(v any, kind string) bool {
	switch kind {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "number", "integer":
		f, ok := v.(float64)
		if !ok || math.IsInf(f, 0) || math.IsNaN(f) {
			return false
		}
		return kind == "number" || f == math.Trunc(f)
	}
	return false
}

// sameValue is JSON equality (const, enum, uniqueItems): types must agree, so 1 is not true.
func sameValue(a, b any) bool { return typeName(a) == typeName(b) && reflect.DeepEqual(a, b) }

func literal(v any) string {
	if s, ok := v.(string); ok {
		return jsonString(s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// walk is one validation: the path of the value being checked, as a stack of steps (no allocation per
// property; a fault copies it), and where the faults go.
type walk struct {
	steps []step
	out   *[]fault
}

type step struct {
	key   string
	index int // -1 for an object key
}

func newWalk(out *[]fault) *walk { return &walk{steps: make([]step, 0, 16), out: out} }

// here is the current path, copied for a fault.
func (w *walk) here() *vpath {
	var p *vpath
	for _, s := range w.steps {
		p = &vpath{parent: p, key: s.key, index: s.index}
	}
	return p
}

func (w *walk) fault(kind, keyword, message string) {
	*w.out = append(*w.out, fault{kind, w.here(), keyword, message})
}

// at reports whether p is the current path.
func (w *walk) at(p *vpath) bool {
	i := len(w.steps) - 1
	for ; p != nil && i >= 0; p, i = p.parent, i-1 {
		if p.index != w.steps[i].index || p.key != w.steps[i].key {
			return false
		}
	}
	return p == nil && i < 0
}

// last is the final key of the current path ("" at the root or after an index).
func (w *walk) last() string {
	if len(w.steps) == 0 || w.steps[len(w.steps)-1].index >= 0 {
		return ""
	}
	return w.steps[len(w.steps)-1].key
}

// check appends every fault of v against n (at the root of a new walk).
func (n *node) check(v any, out *[]fault) {
	n.walk(v, newWalk(out))
}

func (n *node) walk(v any, w *walk) {
	n = n.resolve()
	if n.anyOf != nil {
		n.walkAnyOf(v, w)
		return
	}
	if n.types != nil {
		ok := false
		for _, t := range n.types {
			if isType(v, t) {
				ok = true
				break
			}
		}
		if !ok {
			w.fault("invalid", "type", n.typeMsg+", not "+typeName(v))
			return
		}
		if n.onlyType {
			return
		}
	}
	if n.hasConst && !sameValue(v, n.constValue) {
		w.fault("invalid", "const", "must be "+literal(n.constValue))
		return
	}
	if n.hasEnum {
		found := false
		for _, e := range n.enum {
			if sameValue(v, e) {
				found = true
				break
			}
		}
		if !found {
			options := make([]string, len(n.enum))
			for i, e := range n.enum {
				options[i] = literal(e)
			}
			w.fault("invalid", "enum", "must be "+strings.Join(options, " or "))
			return
		}
	}
	switch x := v.(type) {
	case string:
		n.walkString(x, w)
	case float64:
		if n.minimum != nil && x < *n.minimum {
			w.fault("invalid", "minimum", "must be at least "+number(*n.minimum))
		} else if n.maximum != nil && x > *n.maximum {
			w.fault("invalid", "maximum", "must be at most "+number(*n.maximum))
		}
	case []any:
		n.walkArray(x, w)
	case map[string]any:
		n.walkObject(x, w)
	}
}

func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func (n *node) walkAnyOf(v any, w *walk) {
	out := w.out
	defer func() { w.out = out }()
	var first []fault
	for _, b := range n.anyOf {
		var found []fault
		w.out = &found
		b.walk(v, w)
		if len(found) == 0 {
			return
		}
		if first != nil {
			continue
		}
		// A branch whose type or discriminating constant does not match is not the one the sender meant.
		meant := true
		for _, f := range found {
			if (f.keyword == "type" && w.at(f.path)) || (f.keyword == "const" && f.path != nil && w.at(f.path.parent)) {
				meant = false
				break
			}
		}
		if meant {
			first = found
		}
	}
	w.out = out
	if first != nil {
		*out = append(*out, first...)
	} else {
		w.fault("invalid", "anyOf", "matches none of the allowed shapes")
	}
}

// utf16Length counts as JavaScript does: characters beyond U+FFFF count twice.
func utf16Length(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < utf8.RuneSelf {
			n++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n++
		if r > 0xFFFF {
			n++
		}
		i += size - 1
	}
	return n
}

func (n *node) walkString(s string, w *walk) {
	length := -1
	if n.minLength >= 0 || n.maxLength >= 0 {
		length = utf16Length(s)
	}
	switch {
	case n.minLength >= 0 && length < n.minLength:
		msg := fmt.Sprintf("must be at least %d characters", n.minLength)
		if n.minLength == 1 {
			msg = "must not be empty"
		}
		w.fault("invalid", "minLength", msg)
	case n.maxLength >= 0 && length > n.maxLength:
		w.fault("invalid", "maxLength", fmt.Sprintf("must be at most %d characters", n.maxLength))
	case n.pattern != nil && !n.matches([]byte(s)):
		w.fault("invalid", "pattern", "must match "+n.patternSource)
	case n.nonBlank && n.nonBlankApplies(w.last()):
		if strings.TrimFunc(s, jsWhitespace) == "" {
			w.fault("invalid", "blank", "must not be blank")
		} else if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			w.fault("invalid", "blank", "must not contain control characters")
		}
	}
}

// matches reports whether s matches the node's pattern.
func (n *node) matches(s []byte) bool {
	if n.dateTime {
		return isDateTime(s)
	}
	return n.pattern.Match(s)
}

// nonBlankApplies: the non-blank rule (left out of the JSON Schema because regex dialects differ) holds
// for non-empty strings without a length limit, and for the manifest's name and author (at most 100).
func (n *node) nonBlankApplies(last string) bool {
	if n.maxLength < 0 {
		return true
	}
	return n.maxLength == 100 && (last == "name" || last == "author")
}

func (n *node) walkArray(a []any, w *walk) {
	if n.minItems >= 0 && len(a) < n.minItems {
		w.fault("invalid", "minItems", fmt.Sprintf("must have at least %d item(s)", n.minItems))
	} else if n.maxItems >= 0 && len(a) > n.maxItems {
		w.fault("invalid", "maxItems", fmt.Sprintf("must have at most %d items", n.maxItems))
	}
	if n.items != nil {
		for i, item := range a {
			w.steps = append(w.steps, step{index: i})
			n.items.walk(item, w)
			w.steps = w.steps[:len(w.steps)-1]
		}
	}
	if n.unique {
		for i, item := range a {
			for _, earlier := range a[:i] {
				if sameValue(item, earlier) {
					w.steps = append(w.steps, step{index: i})
					w.fault("invalid", "uniqueItems", literal(item)+" is listed twice; list each once")
					w.steps = w.steps[:len(w.steps)-1]
					break
				}
			}
		}
	}
}

func (n *node) walkObject(o map[string]any, w *walk) {
	for _, key := range n.required {
		if _, ok := o[key]; !ok {
			w.steps = append(w.steps, step{key: key, index: -1})
			w.fault("required", "required", "is required")
			w.steps = w.steps[:len(w.steps)-1]
		}
	}
	for key, item := range o {
		w.steps = append(w.steps, step{key: key, index: -1})
		switch sub := n.properties[key]; {
		case sub != nil:
			sub.walk(item, w)
		case n.propertyNames != nil && n.badPropertyName(key, w):
		case n.closed:
			w.fault("unknown", "additionalProperties", "is not a known field; remove it or check its spelling")
		case n.additional != nil:
			n.additional.walk(item, w)
		}
		w.steps = w.steps[:len(w.steps)-1]
	}
}

// badPropertyName reports a key that propertyNames refuses (true), as one fault at the key.
func (n *node) badPropertyName(key string, w *walk) bool {
	out := w.out
	var found []fault
	w.out = &found
	n.propertyNames.walk(key, w)
	w.out = out
	if len(found) == 0 {
		return false
	}
	w.fault("invalid", "propertyNames", "the key "+jsonString(key)+" "+found[0].message)
	return true
}

func fieldIssues(domain string, found []fault) []Issue {
	issues := make([]Issue, len(found))
	for i, f := range found {
		where := f.path.String()
		subject := where
		if subject == "" {
			subject = "the document"
		}
		issues[i] = Issue{Code: domain + ".field." + f.kind, Path: where, Message: subject + " " + f.message}
	}
	return issues
}
