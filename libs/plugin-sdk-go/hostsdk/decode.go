package hostsdk

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"sync"
	"unicode/utf8"
)

// The decoding of every host request's params and of HTTP events: the one path that decides whether a
// value is valid and builds the generated wire type from it, in one pass over the bytes with the compiled
// schema in hand, so an event costs no map per object and no second pass. Objects, arrays, their
// required, unknown and counted members, and plain strings are judged here; a value this pass does not
// judge itself (a scalar but a plain string, anyOf, const, enum, uniqueItems, propertyNames,
// json.Unmarshaler targets, `any` fields) is parsed into a tree for that value only and judged by the
// schema's keyword rules (validate.go), then filled from the tree. The pass stops at the first refusal and
// words nothing: describeRefusal, which runs only then, walks the whole value to say what is wrong.

// errRefused ends the pass at the first value the schema refuses.
var errRefused = errors.New("refused by the schema")

// decodeChecked checks the JSON value data against n and fills v (a pointer) when it is valid; it returns
// the issues (with `<domain>.field.*` codes) or nil. data is syntactically valid JSON (the frame was parsed).
func decodeChecked(data []byte, n *node, v any, domain string) []Issue {
	switch err := decide(data, n, v); {
	case err == errRefused:
		return describeRefusal(data, n, domain)
	case err != nil:
		return []Issue{{Code: domain + ".field.invalid", Path: "", Message: err.Error()}}
	}
	return nil
}

// decide is the verdict and the value: nil with v filled, errRefused, or an error of the JSON text.
func decide(data []byte, n *node, v any) error {
	var scratch []fault
	w := newWalk(&scratch)
	// The strings of the value are cut from one copy of its text instead of one allocation each.
	p := treeParser{data: data, text: string(data)}
	p.space()
	return p.checked(n, reflect.ValueOf(v).Elem(), w)
}

// describeRefusal says why n refuses data, which decide refused: every fault the tree walk finds in the
// whole value, ordered by path. It runs only after a refusal, so the valid case pays nothing for words.
func describeRefusal(data []byte, n *node, domain string) []Issue {
	tree, err := parseTree(data)
	if err != nil {
		return []Issue{{Code: domain + ".field.invalid", Path: "", Message: err.Error()}}
	}
	var found []fault
	n.check(tree, &found)
	if len(found) == 0 {
		// Not reached while the two agree (a test runs every vector through both); refused all the same.
		return []Issue{{Code: domain + ".field.invalid", Path: "", Message: "the value does not follow the protocol schema"}}
	}
	issues := fieldIssues(domain, found)
	slices.SortStableFunc(issues, func(a, b Issue) int { return compareStrings(a.Path, b.Path) })
	return issues
}

// simple reports whether the one-pass decoder handles n itself.
func (n *node) simple() bool {
	return n.anyOf == nil && !n.unique && n.propertyNames == nil
}

// checked reads one value at p.i against n into dst (an invalid Value discards it).
func (p *treeParser) checked(n *node, dst reflect.Value, w *walk) error {
	return p.checkedAs(n, dst, w, dst.IsValid() && dst.CanAddr() && dst.Addr().Type().Implements(unmarshalerType))
}

// checkedAs is checked with it known whether dst decodes itself (json.Unmarshaler), as a struct's plan
// knows it for each field.
func (p *treeParser) checkedAs(n *node, dst reflect.Value, w *walk, unmarshaler bool) error {
	n = n.resolve()
	if dst.IsValid() {
		switch {
		case unmarshaler, dst.Kind() == reflect.Interface:
			return p.viaTree(n, dst, w)
		case dst.Kind() == reflect.Pointer:
			if p.i < len(p.data) && p.data[p.i] == 'n' {
				return p.viaTree(n, dst, w) // null: checked, and the pointer stays nil
			}
			if dst.IsNil() {
				dst.Set(reflect.New(dst.Type().Elem()))
			}
			return p.checked(n, dst.Elem(), w)
		}
	}
	if !n.simple() || n.hasConst || n.hasEnum {
		return p.viaTree(n, dst, w)
	}
	if p.i >= len(p.data) {
		return p.fail("unexpected end of JSON input")
	}
	kind := ""
	switch c := p.data[p.i]; {
	case c == '{':
		kind = "object"
	case c == '[':
		kind = "array"
	case c == '"':
		kind = "string"
	case c == 't' || c == 'f':
		kind = "boolean"
	case c == 'n':
		kind = "null"
	default:
		kind = "number"
	}
	if n.types != nil && kind != "number" {
		ok := false
		for _, t := range n.types {
			if t == kind {
				ok = true
				break
			}
		}
		if !ok {
			return errRefused
		}
		if n.onlyType {
			return p.viaTree(n, dst, w)
		}
	}
	switch kind {
	case "object":
		return p.checkedObject(n, dst, w)
	case "array":
		return p.checkedArray(n, dst, w)
	}
	// A scalar: the tree walk judges it (type "number"/"integer", lengths, patterns, limits).
	return p.viaTree(n, dst, w)
}

// viaTree parses the value into a tree, judges it with the schema's keyword rules, and fills dst from it
// when it is valid.
func (p *treeParser) viaTree(n *node, dst reflect.Value, w *walk) error {
	v, err := p.value()
	if err != nil {
		return err
	}
	at := len(*w.out)
	n.walk(v, w)
	if len(*w.out) != at {
		*w.out = (*w.out)[:at]
		return errRefused
	}
	if dst.IsValid() {
		return fill(dst, v)
	}
	return nil
}

func (p *treeParser) checkedObject(n *node, dst reflect.Value, w *walk) error {
	if dst.IsValid() && dst.Kind() == reflect.Struct {
		return p.checkedStruct(n, dst, w)
	}
	if p.depth++; p.depth > maxJSONDepth {
		return p.fail("exceeded max depth")
	}
	var plan *structPlan
	var mapElem reflect.Type
	switch {
	case !dst.IsValid():
	case dst.Kind() == reflect.Map && dst.Type().Key().Kind() == reflect.String:
		mapElem = dst.Type().Elem()
		dst.Set(reflect.MakeMap(dst.Type()))
	default:
		return p.viaTree(n, dst, w)
	}
	// seen marks the required keys present (bit i: n.required[i]); larger lists fall back to a set.
	var seen uint64
	var seenSet map[string]bool
	if len(n.required) > 64 {
		seenSet = map[string]bool{}
	}
	p.i++ // {
	p.space()
	first := true
	for {
		if p.i < len(p.data) && p.data[p.i] == '}' && first {
			p.i++
			break
		}
		p.space()
		key, err := p.key()
		if err != nil {
			return err
		}
		p.space()
		p.i++ // : (the frame was parsed, so the syntax is known to be right)
		p.space()
		for i, r := range n.required {
			if r == key {
				if seenSet != nil {
					seenSet[key] = true
				} else {
					seen |= 1 << i
				}
				break
			}
		}
		w.steps = append(w.steps, step{key: key, index: -1})
		sub := n.properties[key]
		if sub == nil {
			sub = n.additional
		}
		var target reflect.Value
		switch {
		case plan != nil:
			if i, ok := plan.fields[key]; ok {
				target = dst.Field(i)
			}
		case mapElem != nil:
			target = reflect.New(mapElem).Elem()
		}
		err = p.member(sub, n.closed, target, w)
		w.steps = w.steps[:len(w.steps)-1]
		if err != nil {
			return err
		}
		if mapElem != nil {
			dst.SetMapIndex(reflect.ValueOf(key).Convert(dst.Type().Key()), target)
		}
		first = false
		p.space()
		if p.i < len(p.data) && p.data[p.i] == ',' {
			p.i++
			continue
		}
		p.i++ // }
		break
	}
	p.depth--
	return allRequired(n.required, seen, seenSet)
}

// member reads the value of one object member: checked against sub (its property's schema or
// additionalProperties) when there is one; refused when the object is closed; otherwise filled into target
// as it is, or skipped when the struct has no field for it.
func (p *treeParser) member(sub *node, closed bool, target reflect.Value, w *walk) error {
	switch {
	case sub != nil:
		return p.checked(sub, target, w)
	case closed:
		return errRefused
	case target.IsValid():
		v, err := p.value()
		if err == nil {
			err = fill(target, v)
		}
		return err
	default:
		_, err := p.value()
		return err
	}
}

func (p *treeParser) checkedArray(n *node, dst reflect.Value, w *walk) error {
	if p.depth++; p.depth > maxJSONDepth {
		return p.fail("exceeded max depth")
	}
	if dst.IsValid() && dst.Kind() != reflect.Slice {
		return p.viaTree(n, dst, w)
	}
	p.i++ // [
	p.space()
	count := 0
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
	} else {
		for {
			p.space()
			var target reflect.Value
			if dst.IsValid() {
				dst.Set(reflect.Append(dst, reflect.Zero(dst.Type().Elem())))
				target = dst.Index(count)
			}
			w.steps = append(w.steps, step{index: count})
			var err error
			if n.items != nil {
				err = p.checked(n.items, target, w)
			} else if target.IsValid() {
				var v any
				if v, err = p.value(); err == nil {
					err = fill(target, v)
				}
			} else {
				_, err = p.value()
			}
			w.steps = w.steps[:len(w.steps)-1]
			if err != nil {
				return err
			}
			count++
			p.space()
			if p.i < len(p.data) && p.data[p.i] == ',' {
				p.i++
				continue
			}
			p.i++ // ]
			break
		}
	}
	p.depth--
	if dst.IsValid() && count == 0 {
		dst.Set(emptySlice(dst.Type()))
	}
	if (n.minItems >= 0 && count < n.minItems) || (n.maxItems >= 0 && count > n.maxItems) {
		return errRefused
	}
	return nil
}

// objectPlan is how an object schema fills one struct type: its properties in the struct's field order,
// each with the field it fills, so a key is found by comparing its bytes with the name expected next
// (senders write the members in one order) instead of a map lookup per key.
type objectPlan struct {
	typ   reflect.Type
	props []propPlan
}

type propPlan struct {
	name        string
	node        *node // the property's schema, references resolved
	field       int   // the struct field it fills; -1 when the struct has none (checked, then dropped)
	required    int   // its index in the schema's required list, -1 when optional
	unmarshaler bool  // the field decodes itself (json.Unmarshaler)
	plainString bool  // a string field under a schema that only checks strings: read without boxing
}

// planFor is n's plan for struct type t, kept on the node (one struct type per schema in practice).
func (n *node) planFor(t reflect.Type) *objectPlan {
	if pl := n.plan.Load(); pl != nil && pl.typ == t {
		return pl
	}
	fields := planOf(t)
	pl := &objectPlan{typ: t}
	for name, sub := range n.properties {
		pp := propPlan{name: name, node: sub.resolve(), field: -1, required: slices.Index(n.required, name)}
		if i, ok := fields.fields[name]; ok {
			ft := t.Field(i).Type
			pp.field = i
			pp.unmarshaler = reflect.PointerTo(ft).Implements(unmarshalerType)
			pp.plainString = ft.Kind() == reflect.String && !pp.unmarshaler && pp.node.checksOnlyStrings()
		}
		pl.props = append(pl.props, pp)
	}
	slices.SortFunc(pl.props, func(a, b propPlan) int {
		if a.field != b.field && (a.field < 0 || b.field < 0) {
			return b.field - a.field // fields first
		}
		if a.field != b.field {
			return a.field - b.field
		}
		return compareStrings(a.name, b.name)
	})
	n.plan.Store(pl)
	return pl
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checksOnlyStrings: a string value is judged by n with string rules only (type, const and enum of
// strings, lengths, pattern, not blank), which plainString applies to the bytes.
func (n *node) checksOnlyStrings() bool {
	if !n.simple() || n.ref != nil || (n.types != nil && !slices.Contains(n.types, "string")) {
		return false
	}
	if _, ok := n.constValue.(string); n.hasConst && !ok {
		return false
	}
	for _, e := range n.enum {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return true
}

// plainString reads a string without escapes at p.i into dst when n accepts it, and reports whether it
// did; anything else (another type, an escape, a fault) is left to checked, which reports the faults.
func (p *treeParser) plainString(n *node, dst reflect.Value, w *walk) bool {
	d := p.data
	if p.i >= len(d) || d[p.i] != '"' {
		return false
	}
	start := p.i + 1
	end := start
	for end < len(d) && d[end] != '"' && d[end] != '\\' && d[end] >= 0x20 {
		end++
	}
	if end >= len(d) || d[end] != '"' {
		return false
	}
	s := d[start:end]
	if !n.onlyType {
		if n.hasConst && n.constValue.(string) != string(s) {
			return false
		}
		if n.hasEnum && !slices.ContainsFunc(n.enum, func(e any) bool { return e.(string) == string(s) }) {
			return false
		}
		if n.minLength >= 0 || n.maxLength >= 0 {
			length := utf16LengthOf(s)
			if (n.minLength >= 0 && length < n.minLength) || (n.maxLength >= 0 && length > n.maxLength) {
				return false
			}
		}
		if n.pattern != nil && !n.matches(s) {
			return false
		}
		if n.nonBlank && n.nonBlankApplies(w.last()) &&
			(len(bytes.TrimFunc(s, jsWhitespace)) == 0 || bytes.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })) {
			return false
		}
	}
	if dst.IsValid() {
		if p.text != "" {
			dst.SetString(p.text[start:end])
		} else {
			dst.SetString(string(s))
		}
	}
	p.i = end + 1
	return true
}

// utf16LengthOf is utf16Length of text in bytes.
func utf16LengthOf(s []byte) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		n++
		if r > 0xFFFF {
			n++
		}
		i += size
	}
	return n
}

// checkedStruct is checkedObject into a struct, with the schema's plan for its type.
func (p *treeParser) checkedStruct(n *node, dst reflect.Value, w *walk) error {
	if p.depth++; p.depth > maxJSONDepth {
		return p.fail("exceeded max depth")
	}
	pl := n.planFor(dst.Type())
	props := pl.props
	// seen marks the required keys present (bit i: n.required[i]); larger lists fall back to a set.
	var seen uint64
	var seenSet map[string]bool
	if len(n.required) > 64 {
		seenSet = map[string]bool{}
	}
	next := 0 // where the next key is looked for first
	d := p.data
	p.i++ // {
	p.space()
	first := true
	for {
		if p.i < len(d) && d[p.i] == '}' && first {
			p.i++
			break
		}
		p.space()
		var pp *propPlan
		var key string
		// A key without escapes is compared in place with the names, the one after the last match first.
		if start := p.i + 1; start <= len(d) {
			end := start
			for end < len(d) && d[end] != '"' && d[end] != '\\' && d[end] >= 0x20 {
				end++
			}
			if end < len(d) && d[end] == '"' {
				raw := d[start:end]
				for k := range props {
					at := next + k
					if at >= len(props) {
						at -= len(props)
					}
					if props[at].name == string(raw) {
						pp, next, key = &props[at], at+1, props[at].name
						p.i = end + 1
						break
					}
				}
			}
		}
		if pp == nil {
			var err error
			if key, err = p.key(); err != nil {
				return err
			}
			for k := range props {
				if props[k].name == key {
					pp = &props[k]
					break
				}
			}
		}
		p.space()
		p.i++ // : (the frame was parsed, so the syntax is known to be right)
		p.space()
		switch {
		case seenSet != nil:
			if slices.Contains(n.required, key) {
				seenSet[key] = true
			}
		case pp != nil:
			if pp.required >= 0 {
				seen |= 1 << pp.required
			}
		default:
			if i := slices.Index(n.required, key); i >= 0 {
				seen |= 1 << i
			}
		}
		w.steps = append(w.steps, step{key: key, index: -1})
		var err error
		switch {
		case pp != nil:
			var target reflect.Value
			if pp.field >= 0 {
				target = dst.Field(pp.field)
			}
			if !pp.plainString || !p.plainString(pp.node, target, w) {
				err = p.checkedAs(pp.node, target, w, pp.unmarshaler)
			}
		default:
			// Not a property: the struct may still have a field for it (filled as additionalProperties say).
			var target reflect.Value
			if i, ok := planOf(dst.Type()).fields[key]; ok {
				target = dst.Field(i)
			}
			err = p.member(n.additional, n.closed, target, w)
		}
		w.steps = w.steps[:len(w.steps)-1]
		if err != nil {
			return err
		}
		first = false
		p.space()
		if p.i < len(d) && d[p.i] == ',' {
			p.i++
			continue
		}
		p.i++ // }
		break
	}
	p.depth--
	return allRequired(n.required, seen, seenSet)
}

// allRequired refuses an object without one of its required keys: bit i of seen stands for required[i],
// or seenSet holds the keys when the list is longer than 64.
func allRequired(required []string, seen uint64, seenSet map[string]bool) error {
	for i, key := range required {
		present := seen&(1<<i) != 0
		if seenSet != nil {
			present = seenSet[key]
		}
		if !present {
			return errRefused
		}
	}
	return nil
}

var emptySlices sync.Map // reflect.Type -> reflect.Value of an empty, non-nil slice

// emptySlice is an empty non-nil slice of type t (they share no storage: appending allocates).
func emptySlice(t reflect.Type) reflect.Value {
	if v, ok := emptySlices.Load(t); ok {
		return v.(reflect.Value)
	}
	v := reflect.MakeSlice(t, 0, 0)
	emptySlices.Store(t, v)
	return v
}
