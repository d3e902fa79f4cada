// Filling the generated wire types without encoding/json: from a parsed tree (fill, for the values decode.go
// judges as a tree) or straight from the bytes without a schema (decodeInto, for the host's answers),
// struct fields through a cached plan per type. decode.go fills them while it checks, in one pass.

package hostsdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
)

// decodeInto fills v (a pointer) from the JSON text data exactly as parseTree and fill would, without
// building maps for the objects that fill structs (a member given twice: the last one counts, whole).
func decodeInto(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errors.New("decodeInto needs a non-nil pointer")
	}
	p := treeParser{data: data}
	p.space()
	if err := p.into(rv.Elem()); err != nil {
		return err
	}
	p.space()
	if p.i != len(p.data) {
		return p.fail("invalid character after the top-level value")
	}
	return nil
}

// into reads one value at p.i into dst (addressable).
func (p *treeParser) into(dst reflect.Value) error {
	if p.i < len(p.data) && !dst.Addr().Type().Implements(unmarshalerType) {
		switch {
		case p.data[p.i] == '{' && dst.Kind() == reflect.Struct:
			return p.intoStruct(dst)
		case p.data[p.i] == '"' && dst.Kind() == reflect.String:
			s, err := p.str()
			if err == nil {
				dst.SetString(s)
			}
			return err
		}
	}
	v, err := p.value()
	if err != nil {
		return err
	}
	return fill(dst, v)
}

func (p *treeParser) intoStruct(dst reflect.Value) error {
	if p.depth++; p.depth > maxJSONDepth {
		return p.fail("exceeded max depth")
	}
	plan := planOf(dst.Type())
	p.i++ // {
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		p.depth--
		return nil
	}
	for {
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return p.fail("expected a string for an object key")
		}
		key, err := p.key()
		if err != nil {
			return err
		}
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return p.fail("expected ':' after an object key")
		}
		p.i++
		p.space()
		if i, ok := plan.fields[key]; ok {
			field := dst.Field(i)
			field.SetZero()
			err = p.into(field)
		} else {
			p.discard = true
			_, err = p.value()
			p.discard = false
		}
		if err != nil {
			return err
		}
		done, err := p.afterElement('}', "expected ',' or '}' after an object value")
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

type structPlan struct {
	fields map[string]int
}

var plans sync.Map // reflect.Type -> *structPlan

func planOf(t reflect.Type) *structPlan {
	if p, ok := plans.Load(t); ok {
		return p.(*structPlan)
	}
	p := &structPlan{fields: map[string]int{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("json"); ok {
			if tag == "-" {
				continue
			}
			for j := 0; j < len(tag); j++ {
				if tag[j] == ',' {
					tag = tag[:j]
					break
				}
			}
			if tag != "" {
				name = tag
			}
		}
		p.fields[name] = i
	}
	plans.Store(t, p)
	return p
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func fill(v reflect.Value, tree any) error {
	if v.CanAddr() && v.Addr().Type().Implements(unmarshalerType) {
		raw, err := json.Marshal(tree)
		if err != nil {
			return err
		}
		return v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw)
	}
	if tree == nil {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
			v.SetZero()
		}
		return nil
	}
	mismatch := func() error {
		return fmt.Errorf("cannot put a JSON %s into %s", typeName(tree), v.Type())
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.NumMethod() != 0 {
			return mismatch()
		}
		v.Set(reflect.ValueOf(tree))
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return fill(v.Elem(), tree)
	case reflect.Struct:
		m, ok := tree.(map[string]any)
		if !ok {
			return mismatch()
		}
		plan := planOf(v.Type())
		for key, item := range m {
			if i, ok := plan.fields[key]; ok {
				if err := fill(v.Field(i), item); err != nil {
					return err
				}
			}
		}
	case reflect.Map:
		m, ok := tree.(map[string]any)
		if !ok || v.Type().Key().Kind() != reflect.String {
			return mismatch()
		}
		out := reflect.MakeMapWithSize(v.Type(), len(m))
		elem := v.Type().Elem()
		for key, item := range m {
			e := reflect.New(elem).Elem()
			if err := fill(e, item); err != nil {
				return err
			}
			out.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), e)
		}
		v.Set(out)
	case reflect.Slice:
		a, ok := tree.([]any)
		if !ok {
			return mismatch()
		}
		out := reflect.MakeSlice(v.Type(), len(a), len(a))
		for i, item := range a {
			if err := fill(out.Index(i), item); err != nil {
				return err
			}
		}
		v.Set(out)
	case reflect.String:
		s, ok := tree.(string)
		if !ok {
			return mismatch()
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := tree.(bool)
		if !ok {
			return mismatch()
		}
		v.SetBool(b)
	case reflect.Float32, reflect.Float64:
		f, ok := tree.(float64)
		if !ok {
			return mismatch()
		}
		v.SetFloat(f)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f, ok := tree.(float64)
		if !ok || f != math.Trunc(f) || v.OverflowInt(int64(f)) {
			return mismatch()
		}
		v.SetInt(int64(f))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		f, ok := tree.(float64)
		if !ok || f < 0 || f != math.Trunc(f) || v.OverflowUint(uint64(f)) {
			return mismatch()
		}
		v.SetUint(uint64(f))
	default:
		return mismatch()
	}
	return nil
}
