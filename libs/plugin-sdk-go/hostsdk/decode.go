package hostsdk

import (
	"fmt"
	"reflect"
)

// The hot path's decoding of a host request's params: one pass over the bytes with the compiled schema in
// hand, checking every keyword as the tree walk (validate.go) does and filling the generated wire type as
// it goes, so an event costs no map per object and no second pass. What this pass does not handle itself
// (anyOf, uniqueItems, propertyNames, json.Unmarshaler targets, `any` fields) it parses into a tree for
// that value only and hands to the tree walk and treeInto. A test runs every event and method vector
// through both paths and wants the same issues and the same values.

// decodeChecked checks the JSON value data against n and fills v (a pointer) when it is valid; it returns
// the issues (with `<domain>.field.*` codes) or nil. data is syntactically valid JSON (the frame was parsed).
func decodeChecked(data []byte, n *node, v any, domain string) []Issue {
	var found []fault
	w := newWalk(&found)
	p := treeParser{data: data}
	p.space()
	dst := reflect.ValueOf(v).Elem()
	if err := p.checked(n, dst, w); err != nil {
		return []Issue{{Code: domain + ".field.invalid", Path: "", Message: err.Error()}}
	}
	if len(found) > 0 {
		return fieldIssues(domain, found)
	}
	return nil
}

// simple reports whether the one-pass decoder handles n itself.
func (n *node) simple() bool {
	return n.anyOf == nil && !n.unique && n.propertyNames == nil
}

// checked reads one value at p.i against n into dst (an invalid Value discards it).
func (p *treeParser) checked(n *node, dst reflect.Value, w *walk) error {
	n = n.resolve()
	if dst.IsValid() {
		switch {
		case dst.CanAddr() && dst.Addr().Type().Implements(unmarshalerType), dst.Kind() == reflect.Interface:
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
			w.fault("invalid", "type", n.typeMsg+", not "+kind)
			_, err := p.value()
			return err
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
	// A scalar: read it, let the tree walk judge it (type "number"/"integer", lengths, patterns, limits).
	at := len(*w.out)
	v, err := p.value()
	if err != nil {
		return err
	}
	n.walk(v, w)
	if len(*w.out) == at && dst.IsValid() {
		return fill(dst, v)
	}
	return nil
}

// viaTree parses the value into a tree, walks it, and fills dst from it when it is valid.
func (p *treeParser) viaTree(n *node, dst reflect.Value, w *walk) error {
	at := len(*w.out)
	v, err := p.value()
	if err != nil {
		return err
	}
	n.walk(v, w)
	if len(*w.out) == at && dst.IsValid() {
		return fill(dst, v)
	}
	return nil
}

func (p *treeParser) checkedObject(n *node, dst reflect.Value, w *walk) error {
	if p.depth++; p.depth > maxJSONDepth {
		return p.fail("exceeded max depth")
	}
	var plan *structPlan
	var mapElem reflect.Type
	switch {
	case !dst.IsValid():
	case dst.Kind() == reflect.Struct:
		plan = planOf(dst.Type())
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
		switch {
		case sub != nil:
			err = p.checked(sub, target, w)
		case n.closed:
			w.fault("unknown", "additionalProperties", "is not a known field; remove it or check its spelling")
			_, err = p.value()
		case target.IsValid():
			var v any
			if v, err = p.value(); err == nil {
				err = fill(target, v)
			}
		default:
			_, err = p.value()
		}
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
	for i, key := range n.required {
		present := seen&(1<<i) != 0
		if seenSet != nil {
			present = seenSet[key]
		}
		if !present {
			w.steps = append(w.steps, step{key: key, index: -1})
			w.fault("required", "required", "is required")
			w.steps = w.steps[:len(w.steps)-1]
		}
	}
	return nil
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
		dst.Set(reflect.MakeSlice(dst.Type(), 0, 0))
	}
	if n.minItems >= 0 && count < n.minItems {
		w.fault("invalid", "minItems", fmt.Sprintf("must have at least %d item(s)", n.minItems))
	} else if n.maxItems >= 0 && count > n.maxItems {
		w.fault("invalid", "maxItems", fmt.Sprintf("must have at most %d items", n.maxItems))
	}
	return nil
}
