// The protocol's JSON Schemas compiled for validation (wire.SchemasJSON, generated from libs/protocol/schema):
// each document and each method's params and result is compiled the first time it is needed; the
// compiled node drives the one-pass decoding that decides (decode.go) and the tree walk (validate.go), and
// applies the schema's defaults.

package hostsdk

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

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
