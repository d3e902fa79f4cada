package hostsdk

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"plugin-host.dev/sdk-go/hostsdk/wire"
)

// Validation of protocol documents against the protocol's JSON Schemas (wire.SchemasJSON, generated from
// libs/protocol/schema): the subset of JSON Schema those schemas use, plus the rules JSON Schema cannot
// express that the host applies as well (names not blank and without control characters, command words
// unique ignoring case, settings fields that fit their type). Issues carry the host's codes and paths
// (`commands[0].aliases[1]`), so a plugin author sees what the host would say at install.
//
// Values are what encoding/json decodes into `any`: nil, bool, float64, string, []any, map[string]any.

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

// jsSpaces is what JavaScript's \s and trim() treat as white space; the schemas' patterns are
// ECMAScript, and RE2's \s is ASCII only.
const jsSpaces = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

// ecmaPattern turns a schema pattern into RE2 syntax: \s gets JavaScript's meaning (\d is [0-9] in both).
func ecmaPattern(source string) (*regexp.Regexp, error) {
	class := `\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`
	var b strings.Builder
	inClass := false
	for i := 0; i < len(source); i++ {
		c := source[i]
		switch {
		case c == '\\' && i+1 < len(source):
			if source[i+1] == 's' {
				if inClass {
					b.WriteString(class)
				} else {
					b.WriteString("[" + class + "]")
				}
			} else {
				b.WriteString(source[i : i+2])
			}
			i++
			continue
		case c == '[':
			inClass = true
		case c == ']':
			inClass = false
		}
		b.WriteByte(c)
	}
	return regexp.Compile(b.String())
}

// node is one compiled schema.
type node struct {
	ref        *node
	anyOf      []*node
	types      []string
	typeMsg    string
	onlyType   bool
	hasConst   bool
	constValue any
	enum       []any
	hasEnum    bool

	minLength, maxLength int // -1: none
	pattern              *regexp.Regexp
	patternSource        string
	dateTime             bool // the pattern is dateTimePattern: isDateTime checks it
	nonBlank             bool // minLength 1 without a pattern: blank and control characters are refused too

	minimum, maximum *float64

	minItems, maxItems int // -1: none
	items              *node
	unique             bool

	properties    map[string]*node
	required      []string
	propertyNames *node
	closed        bool  // additionalProperties: false
	additional    *node // additionalProperties: a schema

	hasDefault    bool
	defaultValue  any
	defaultsBelow int8 // 0 unknown, 1 yes, 2 no

	// plan is how decode.go fills the struct type last decoded from this object schema.
	plan atomic.Pointer[objectPlan]
}

// schemaSet compiles the schemas of one document (or methods.json) with its $defs.
type schemaSet struct {
	defs     map[string]any
	compiled map[uintptr]*node
	byName   map[string]*node
}

func (s *schemaSet) compile(schema map[string]any) *node {
	key := reflect.ValueOf(schema).Pointer()
	if n, ok := s.compiled[key]; ok {
		return n
	}
	n := &node{minLength: -1, maxLength: -1, minItems: -1, maxItems: -1}
	s.compiled[key] = n // before the parts: references may be recursive (MessagePart)
	n.defaultValue, n.hasDefault = schema["default"]
	if ref, ok := schema["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		target, ok := s.defs[name].(map[string]any)
		if !ok {
			panic("hostsdk: schema reference " + ref + " has no definition")
		}
		n.ref = s.compile(target)
		return n
	}
	if branches, ok := schema["anyOf"].([]any); ok {
		for _, b := range branches {
			n.anyOf = append(n.anyOf, s.compile(b.(map[string]any)))
		}
		return n
	}
	switch t := schema["type"].(type) {
	case string:
		n.types = []string{t}
		if t == "integer" {
			n.typeMsg = "must be an integer"
		} else {
			n.typeMsg = "must be " + t
		}
	case []any:
		for _, k := range t {
			n.types = append(n.types, k.(string))
		}
		n.typeMsg = "must be " + strings.Join(n.types, " or ")
		n.onlyType = true
	}
	n.constValue, n.hasConst = schema["const"]
	if e, ok := schema["enum"].([]any); ok {
		n.enum, n.hasEnum = e, true
	}
	if v, ok := schema["minLength"].(float64); ok {
		n.minLength = int(v)
	}
	if v, ok := schema["maxLength"].(float64); ok {
		n.maxLength = int(v)
	}
	if p, ok := schema["pattern"].(string); ok {
		re, err := ecmaPattern(p)
		if err != nil {
			panic("hostsdk: schema pattern " + p + ": " + err.Error())
		}
		n.pattern, n.patternSource, n.dateTime = re, p, p == dateTimePattern
	}
	n.nonBlank = n.minLength == 1 && n.pattern == nil
	if v, ok := schema["minimum"].(float64); ok {
		n.minimum = &v
	}
	if v, ok := schema["maximum"].(float64); ok {
		n.maximum = &v
	}
	if v, ok := schema["minItems"].(float64); ok {
		n.minItems = int(v)
	}
	if v, ok := schema["maxItems"].(float64); ok {
		n.maxItems = int(v)
	}
	if v, ok := schema["items"].(map[string]any); ok {
		n.items = s.compile(v)
	}
	n.unique, _ = schema["uniqueItems"].(bool)
	if props, ok := schema["properties"].(map[string]any); ok {
		n.properties = make(map[string]*node, len(props))
		for k, v := range props {
			n.properties[k] = s.compile(v.(map[string]any))
		}
	}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			n.required = append(n.required, r.(string))
		}
	}
	if v, ok := schema["propertyNames"].(map[string]any); ok {
		n.propertyNames = s.compile(v)
	}
	switch v := schema["additionalProperties"].(type) {
	case bool:
		n.closed = !v
	case map[string]any:
		n.additional = s.compile(v)
	}
	return n
}

// defaultOf is the default of a property schema: its own, or that of the schema it refers to.
func (n *node) defaultOf() (any, bool) {
	for ; n != nil; n = n.ref {
		if n.hasDefault {
			return n.defaultValue, true
		}
	}
	return nil, false
}

func (n *node) resolve() *node {
	for n.ref != nil {
		n = n.ref
	}
	return n
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

// hasDefaults: whether a default applies anywhere under n (cached; recursion through $refs ends).
func (n *node) hasDefaults(seen map[*node]bool) bool {
	n = n.resolve()
	if n.defaultsBelow != 0 {
		return n.defaultsBelow == 1
	}
	if seen[n] {
		return false
	}
	seen[n] = true
	result := n.hasDefault
	subs := append([]*node{}, n.anyOf...)
	for _, p := range n.properties {
		subs = append(subs, p)
	}
	if n.items != nil {
		subs = append(subs, n.items)
	}
	if n.additional != nil {
		subs = append(subs, n.additional)
	}
	for _, s := range subs {
		if result {
			break
		}
		_, own := s.defaultOf()
		result = own || s.hasDefaults(seen)
	}
	if result {
		n.defaultsBelow = 1
	} else {
		n.defaultsBelow = 2
	}
	return result
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// withDefaults is a copy of a valid value with the schema's defaults filled in; subtrees without
// defaults are shared (the validated value is not changed afterwards).
func (n *node) withDefaults(v any) any {
	n = n.resolve()
	if !n.hasDefaults(map[*node]bool{}) {
		return v
	}
	if n.anyOf != nil {
		for _, b := range n.anyOf {
			var found []fault
			b.check(v, &found)
			if len(found) == 0 {
				return b.withDefaults(v)
			}
		}
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			sub := n.properties[k]
			if sub == nil {
				sub = n.additional
			}
			if sub != nil {
				out[k] = sub.withDefaults(item)
			} else {
				out[k] = item
			}
		}
		keys := make([]string, 0, len(n.properties))
		for k := range n.properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := n.properties[k]
			if _, ok := out[k]; !ok {
				if d, has := sub.defaultOf(); has {
					out[k] = sub.withDefaults(deepCopy(d))
				}
			}
		}
		return out
	case []any:
		if n.items == nil {
			return x
		}
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = n.items.withDefaults(item)
		}
		return out
	}
	return v
}

// The compiled schemas: each document and each method's params and result is compiled from
// wire.SchemasJSON the first time it is needed (a plugin's start pays only for its manifest's schema).
var schemas struct {
	mu        sync.Mutex
	documents map[string]*node
	methods   map[methodPart]*node
	methodSet *schemaSet // methods.json: one set, its $defs shared by every method
}

// schemaTree is wire.SchemasJSON parsed once (with plain keys: the shared key strings come from it).
func schemaTree() map[string]any {
	schemaTreeOnce.Do(func() {
		p := treeParser{data: wire.SchemasJSON, plainKeys: true}
		p.space()
		v, err := p.value()
		tree, ok := v.(map[string]any)
		if err != nil || !ok {
			panic(fmt.Sprintf("hostsdk: the embedded protocol schemas are not a JSON object: %v", err))
		}
		schemaTreeValue = tree
	})
	return schemaTreeValue
}

var (
	schemaTreeOnce  sync.Once
	schemaTreeValue map[string]any
)

func documentSchema(file string) *node {
	schemas.mu.Lock()
	defer schemas.mu.Unlock()
	if n, ok := schemas.documents[file]; ok {
		return n
	}
	documents, _ := schemaTree()["documents"].(map[string]any)
	doc, ok := documents[file].(map[string]any)
	if !ok {
		panic("hostsdk: no protocol schema " + file)
	}
	defs, _ := doc["$defs"].(map[string]any)
	n := (&schemaSet{defs: defs, compiled: map[uintptr]*node{}}).compile(doc)
	if schemas.documents == nil {
		schemas.documents = map[string]*node{}
	}
	schemas.documents[file] = n
	return n
}

type methodPart struct{ method, part string }

// methodSchema is the schema of a method's "params" or "result", nil when the method table has none.
func methodSchema(method, part string) *node {
	schemas.mu.Lock()
	defer schemas.mu.Unlock()
	key := methodPart{method, part}
	if n, ok := schemas.methods[key]; ok {
		return n
	}
	file, _ := schemaTree()["methods"].(map[string]any)
	if schemas.methodSet == nil {
		defs, _ := file["$defs"].(map[string]any)
		schemas.methodSet = &schemaSet{defs: defs, compiled: map[uintptr]*node{}}
		schemas.methods = map[methodPart]*node{}
	}
	methods, _ := file["methods"].(map[string]any)
	m, _ := methods[method].(map[string]any)
	var n *node
	if s, ok := m[part].(map[string]any); ok {
		n = schemas.methodSet.compile(s)
	}
	schemas.methods[key] = n
	return n
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

// validateDocument checks v against a document schema ("message-event.schema.json", ...); it returns v
// with the schema's defaults, or the issues with `<domain>.field.*` codes.
func validateDocument(file string, v any, domain string) (any, []Issue) {
	n := documentSchema(file)
	var found []fault
	n.check(v, &found)
	if len(found) > 0 {
		return nil, fieldIssues(domain, found)
	}
	return n.withDefaults(v), nil
}

// checkDocument is validateDocument without the defaults: the verdict only (the hot path; the generated
// types apply the defaults through their Get methods).
func checkDocument(file string, v any, domain string) []Issue {
	var found []fault
	documentSchema(file).check(v, &found)
	if len(found) > 0 {
		return fieldIssues(domain, found)
	}
	return nil
}

// checkMethod is validateMethod without the defaults.
func checkMethod(method, part string, v any, domain string) []Issue {
	n := methodSchema(method, part)
	if n == nil {
		return []Issue{{Code: domain + ".field.invalid", Path: "", Message: fmt.Sprintf("%s has no %s in protocol v2", method, part)}}
	}
	var found []fault
	n.check(v, &found)
	if len(found) > 0 {
		return fieldIssues(domain, found)
	}
	return nil
}

// validateMethod checks the params or result of a JSON-RPC method of the method table.
func validateMethod(method, part string, v any, domain string) (any, []Issue) {
	n := methodSchema(method, part)
	if n == nil {
		return nil, []Issue{{Code: domain + ".field.invalid", Path: "", Message: fmt.Sprintf("%s has no %s in protocol v2", method, part)}}
	}
	var found []fault
	n.check(v, &found)
	if len(found) > 0 {
		return nil, fieldIssues(domain, found)
	}
	return n.withDefaults(v), nil
}

func manifestCode(f fault) string {
	where := f.path.String()
	switch {
	case f.kind == "required":
		return wire.CodeManifestFieldRequired
	case f.kind == "unknown":
		return wire.CodeManifestFieldUnknown
	case where == "protocolVersion":
		return wire.CodeManifestProtocolVersionUnsupported
	case where == "pluginId" && (f.keyword == "pattern" || f.keyword == "maxLength" || f.keyword == "minLength"):
		return wire.CodeManifestPluginIDInvalid
	case where == "transport.type":
		return wire.CodeManifestTransportUnsupported
	case f.path != nil && f.path.index >= 0 && f.path.parent != nil && f.path.parent.parent == nil && f.path.parent.key == "permissions":
		if f.keyword == "uniqueItems" {
			return wire.CodeManifestPermissionsDuplicate
		}
		return wire.CodeManifestPermissionsUnknown
	}
	return wire.CodeManifestFieldInvalid
}

// validateManifest checks a stdio manifest.json (http false) or an HTTP manifest (http true) as the host
// does; it returns the manifest with defaults, or the issues with manifest.* codes.
func validateManifest(v any, http bool) (map[string]any, []Issue) {
	file := "manifest.schema.json"
	if http {
		file = "http-manifest.schema.json"
	}
	n := documentSchema(file)
	var found []fault
	n.check(v, &found)
	var issues []Issue
	transportType := false
	for _, f := range found {
		transportType = transportType || f.path.String() == "transport.type"
	}
	for _, f := range found {
		where := f.path.String()
		if where == "transport.stdio" && transportType {
			continue // a wrong transport type is the one fault; its stdio block is moot
		}
		if where == "capabilities" && f.keyword == "enum" {
			issues = append(issues, capabilityIssues(v.(map[string]any)["capabilities"].(float64))...)
			continue
		}
		subject := where
		if subject == "" {
			subject = "the manifest"
		}
		issues = append(issues, Issue{Code: manifestCode(f), Path: where, Message: subject + " " + f.message})
	}
	if len(issues) > 0 {
		return nil, issues
	}
	manifest := n.withDefaults(v).(map[string]any)
	issues = routingIssues(manifest)
	if http {
		perms, _ := manifest["permissions"].([]any)
		caps, _ := manifest["capabilities"].(float64)
		for _, p := range perms {
			if p == wire.PermissionMessagesSend && int(caps)&2 == 0 {
				issues = append(issues, Issue{wire.CodeManifestCapabilitiesMissing, "capabilities", "messages.send needs the SendMessages capability (2)"})
			}
		}
	}
	if len(issues) > 0 {
		return nil, issues
	}
	return manifest, nil
}

func capabilityIssues(flags float64) []Issue {
	f := int64(flags)
	var issues []Issue
	if f&9 != 9 {
		issues = append(issues, Issue{wire.CodeManifestCapabilitiesMissing, "capabilities", "capabilities must include ReceiveMessages (1) and HttpTransport (8)"})
	}
	if f&^15 != 0 {
		issues = append(issues, Issue{wire.CodeManifestCapabilitiesUnknown, "capabilities", fmt.Sprintf("capabilities has unknown bits %d", f&^15)})
	}
	return issues
}

// routingIssues are the manifest rules JSON Schema cannot express: command words unique ignoring case,
// settings fields whose options, defaultValue and min/max fit their type.
func routingIssues(manifest map[string]any) []Issue {
	var issues []Issue
	words := map[string]string{}
	commands, _ := manifest["commands"].([]any)
	for i, c := range commands {
		command := c.(map[string]any)
		name := command["name"].(string)
		all := []any{name}
		if aliases, ok := command["aliases"].([]any); ok {
			all = append(all, aliases...)
		}
		for j, w := range all {
			word := w.(string)
			key := strings.ToLower(word)
			if owner, ok := words[key]; ok {
				path := fmt.Sprintf("commands[%d].name", i)
				if j > 0 {
					path = fmt.Sprintf("commands[%d].aliases[%d]", i, j-1)
				}
				issues = append(issues, Issue{wire.CodeManifestCommandsDuplicate, path,
					fmt.Sprintf("command word %q is already used by command %q; names and aliases must be unique (case-insensitive)", word, owner)})
			} else {
				words[key] = name
			}
		}
	}
	settings, _ := manifest["settings"].(map[string]any)
	fields, _ := settings["configSchema"].(map[string]any)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		field := fields[key].(map[string]any)
		base := (&vpath{index: -1, key: "settings"}).child("configSchema").child(key)
		issue := func(message, sub string) {
			issues = append(issues, Issue{wire.CodeManifestSettingsInvalid, base.child(sub).String(), message})
		}
		kind, _ := field["type"].(string)
		options, hasOptions := field["options"].([]any)
		if kind == "select" && len(options) == 0 {
			issue(`a "select" field needs at least one entry in "options"`, "options")
		}
		if _, present := field["options"]; kind != "select" && present {
			issue(`"options" is only for "select" fields`, "options")
		}
		if d, ok := field["defaultValue"]; ok {
			if kind == "secret" {
				issue(`a "secret" field cannot have a defaultValue; the operator enters it`, "defaultValue")
			}
			want := "string"
			if kind == "number" || kind == "boolean" {
				want = kind
			}
			if typeName(d) != want {
				issue(fmt.Sprintf("defaultValue of a %q field must be a %s", kind, want), "defaultValue")
			}
			if kind == "select" && hasOptions && len(options) > 0 {
				found := false
				for _, o := range options {
					if om, ok := o.(map[string]any); ok && sameValue(om["value"], d) {
						found = true
					}
				}
				if !found {
					issue("defaultValue must be the value of one of the options", "defaultValue")
				}
			}
		}
		_, hasMin := field["min"]
		_, hasMax := field["max"]
		if (hasMin || hasMax) && kind != "number" && kind != "string" {
			issue(`"min" and "max" apply to "number" (value) and "string" (length) fields only`, "min")
		}
	}
	return issues
}
