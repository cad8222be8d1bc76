package rulefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/ruleinput"
)

// shape is what a JSON value may look like: an object with exactly these keys (spelled
// exactly so), an array of elem, or anything (a scalar, or a value whose type decodes
// itself and so knows its own keys).
type shape struct {
	keys   map[string]*shape // object; nil: not an object
	elem   *shape            // array; nil: not an array
	anyObj bool              // an object with any keys (a map)
	// nullable are the keys whose field is a pointer (predicate, applies_when, fix): null
	// is a value of theirs, it removes the tree. Every other key refuses null, which
	// encoding/json would take as "leave the field as it is" or as its zero value: an
	// edit's "condition": null would clear the condition, "when": null the scope.
	nullable map[string]bool
}

var anything = &shape{}

// storeFields belong to the store: a file or a tool never sets them.
var storeFields = []string{"id", "created_at", "updated_at"}

// ruleShape is a rule's outside shape: Rule's own JSON names ("enabled" for Disabled,
// as Rule.MarshalJSON writes it), without the fields the store owns. It is read from the
// struct tags, so a field added to Rule is in every file and tool with no second spelling.
var ruleShape = func() *shape {
	s := shapeOf(reflect.TypeFor[streamrules.Rule](), true)
	// Keys Rule.MarshalJSON writes that no tag names ("enabled", for Disabled): it writes
	// them for the zero rule too.
	var written map[string]json.RawMessage
	data, err := json.Marshal(streamrules.Rule{})
	if err == nil && json.Unmarshal(data, &written) == nil {
		for k := range written {
			if _, ok := s.keys[k]; !ok {
				s.keys[k] = anything
			}
		}
	}
	for _, k := range storeFields {
		delete(s.keys, k)
	}
	return s
}()

// setShape is a versioned set: {"version": N, "rules": [rule, …]}.
var setShape = &shape{keys: map[string]*shape{
	"version": anything,
	"rules":   {elem: ruleShape},
}}

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// exampleType decodes itself only to take a string for its object form: its keys are
// checked as a struct's (a string is a value of every shape).
var exampleType = reflect.TypeFor[streamrules.Example]()

// shapeOf reads the JSON shape of t from its struct tags. top skips t's own UnmarshalJSON
// (Rule has one, only to spell Disabled as "enabled").
func shapeOf(t reflect.Type, top bool) *shape {
	return shapes(t, top, map[reflect.Type]*shape{})
}

// shapes is shapeOf with the struct shapes made so far: a recursive type (a predicate
// holding predicates) refers to its own shape instead of recursing forever.
func shapes(t reflect.Type, top bool, seen map[reflect.Type]*shape) *shape {
	if !top && t != exampleType && (t.Implements(unmarshaler) || reflect.PointerTo(t).Implements(unmarshaler)) {
		return anything
	}
	switch t.Kind() {
	case reflect.Pointer:
		return shapes(t.Elem(), false, seen)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return anything // []byte is a base64 string
		}
		return &shape{elem: shapes(t.Elem(), false, seen)}
	case reflect.Map:
		return &shape{anyObj: true}
	case reflect.Struct:
		if s, ok := seen[t]; ok {
			return s
		}
		s := &shape{keys: map[string]*shape{}, nullable: map[string]bool{}}
		seen[t] = s
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			name, _, _ := strings.Cut(tag, ",")
			if name == "-" && !strings.HasPrefix(tag, "-,") || (!f.IsExported() && !f.Anonymous) {
				continue
			}
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					inner := shapes(ft, false, seen)
					for k, v := range inner.keys {
						s.keys[k] = v
						s.nullable[k] = inner.nullable[k]
					}
					continue
				}
			}
			if name == "" {
				name = f.Name
			}
			s.keys[name] = shapes(f.Type, false, seen)
			s.nullable[name] = f.Type.Kind() == reflect.Pointer
		}
		return s
	}
	return anything
}

// names returns an object shape's keys, sorted.
func (s *shape) names() []string {
	out := make([]string, 0, len(s.keys))
	for k := range s.keys {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// pathErr is a fault found while checking the input: at path (object keys and array
// indexes from the top), about field (the key it concerns).
type pathErr struct {
	path   []any
	field  string
	offset int64 // JSON input: byte offset; -1 when unknown
	err    error
}

// checker walks a JSON document token by token, before any decoding, and rejects what
// encoding/json would let through: keys the shape does not have or has in another case
// (encoding/json matches keys case-insensitively), duplicate keys (it keeps the last),
// invalid UTF-8 and lone surrogates (it substitutes U+FFFD), and data after the value.
type checker struct {
	data []byte
	dec  *json.Decoder
	path []any
	// depth is how many objects and lists are open.
	depth int
	// mark, if set, is told where each object key and array element starts.
	mark func(path []any, offset int64)
}

func check(data []byte, s *shape, mark func([]any, int64)) *pathErr {
	c := &checker{data: data, dec: json.NewDecoder(bytes.NewReader(data)), mark: mark}
	c.dec.UseNumber()
	if t := bytes.TrimLeft(data, " \t\r\n"); s.keys != nil && (len(t) == 0 || t[0] != '{') {
		return &pathErr{offset: int64(len(data) - len(t)), err: errors.New("not an object of named fields")}
	}
	if perr := c.value(s, "", false); perr != nil {
		return perr
	}
	off := c.dec.InputOffset()
	if _, err := c.dec.Token(); !errors.Is(err, io.EOF) {
		return &pathErr{offset: off, err: errors.New("data after the JSON value")}
	}
	return nil
}

func (c *checker) fail(field string, format string, args ...any) *pathErr {
	return &pathErr{path: slices.Clone(c.path), field: field, offset: c.dec.InputOffset(), err: fmt.Errorf(format, args...)}
}

// token reads the next token and the raw bytes it was read from.
func (c *checker) token() (json.Token, []byte, *pathErr) {
	start := c.dec.InputOffset()
	tok, err := c.dec.Token()
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, nil, &pathErr{path: slices.Clone(c.path), offset: se.Offset, err: fmt.Errorf("not JSON: %v", se)}
		}
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, nil, &pathErr{path: slices.Clone(c.path), offset: start, err: fmt.Errorf("not JSON: %v", err)}
	}
	raw := bytes.TrimLeft(c.data[start:c.dec.InputOffset()], " \t\r\n,:")
	return tok, raw, nil
}

// exact reports whether a string token decoded to exactly what its raw bytes say: valid
// UTF-8 and no escaped lone surrogate turned into U+FFFD.
func exact(s string, raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	n := strings.Count(s, "\uFFFD")
	return n == 0 || n == bytes.Count(raw, []byte("\uFFFD"))+bytes.Count(bytes.ToLower(raw), []byte(`\ufffd`))
}

// value checks one value of shape s, about field. noNull: null is not a value here (a
// key that is not nullable, an element of a list).
func (c *checker) value(s *shape, field string, noNull bool) *pathErr {
	start := c.dec.InputOffset()
	tok, raw, perr := c.token()
	if perr != nil {
		perr.field = field
		return perr
	}
	switch tok := tok.(type) {
	case nil:
		if noNull {
			if len(c.path) > 0 {
				if _, elem := c.path[len(c.path)-1].(int); elem {
					return c.fail(field, "%s holds null: give a value, or leave it out", what(field))
				}
			}
			return c.fail(field, "%s is null: give a value, or leave the field out (null does not mean \"unchanged\")", what(field))
		}
	case json.Delim:
		if tok == '{' || tok == '[' {
			// encoding/json stops at 10,000 levels; a rule needs a few dozen.
			if c.depth++; c.depth > MaxDepth {
				return c.fail(field, "nested deeper than %d levels", MaxDepth)
			}
			defer func() { c.depth-- }()
		}
		switch {
		case tok == '{':
			return c.object(s, field)
		case tok == '[':
			return c.array(s, field)
		}
		return &pathErr{path: slices.Clone(c.path), field: field, offset: start, err: fmt.Errorf("not JSON: unexpected %q", tok)}
	case string:
		if !exact(tok, raw) {
			return c.fail(field, "%s: not valid UTF-8", what(field))
		}
	}
	return nil
}

func what(field string) string {
	if field == "" {
		return "the input"
	}
	return strconv.Quote(field)
}

func (c *checker) object(s *shape, field string) *pathErr {
	if s.keys == nil && !s.anyObj && s != anything {
		return c.fail(field, "%s must not be an object", what(field))
	}
	seen := map[string]bool{}
	for c.dec.More() {
		keyStart := c.dec.InputOffset()
		tok, raw, perr := c.token()
		if perr != nil {
			return perr
		}
		key := tok.(string) // json.Decoder yields only strings in key position
		c.path = append(c.path, key)
		if c.mark != nil {
			c.mark(c.path, keyStart)
		}
		if !exact(key, raw) {
			return c.fail(excerpt(key), "a field name is not valid UTF-8")
		}
		if seen[key] {
			return c.fail(excerpt(key), "duplicate field %q", excerpt(key))
		}
		seen[key] = true
		sub := anything
		if s.keys != nil {
			var ok bool
			if sub, ok = s.keys[key]; !ok {
				return c.fail(excerpt(key), "%s", unknownField(key, s))
			}
		}
		if perr := c.value(sub, key, s.keys != nil && !s.nullable[key]); perr != nil {
			return perr
		}
		c.path = c.path[:len(c.path)-1]
	}
	_, _, perr := c.token() // '}'
	return perr
}

func (c *checker) array(s *shape, field string) *pathErr {
	if s.elem == nil && s != anything {
		return c.fail(field, "%s must not be a list", what(field))
	}
	elem := s.elem
	if elem == nil {
		elem = anything
	}
	for i := 0; c.dec.More(); i++ {
		c.path = append(c.path, i)
		if c.mark != nil {
			c.mark(c.path, c.dec.InputOffset())
		}
		if perr := c.value(elem, field, s.elem != nil); perr != nil {
			return perr
		}
		c.path = c.path[:len(c.path)-1]
	}
	_, _, perr := c.token() // ']'
	return perr
}

// unknownField explains a key the shape lacks: another case of a known key, a field the
// store owns, or simply unknown (with the known ones listed).
func unknownField(key string, s *shape) string {
	for k := range s.keys {
		if strings.EqualFold(k, key) {
			return fmt.Sprintf("unknown field %q: field names are case-sensitive, did you mean %q?", excerpt(key), k)
		}
	}
	if slices.Contains(storeFields, key) {
		return fmt.Sprintf("field %q belongs to the store, not to a rule as written", key)
	}
	return fmt.Sprintf("unknown field %q (known: %s)", excerpt(key), strings.Join(s.names(), ", "))
}

// excerpt returns s cut to its first 64 runes, so an error never echoes a long input
// back (ruleinput.Excerpt, which the packages beside this one quote with).
func excerpt(s string) string { return ruleinput.Excerpt(s) }
