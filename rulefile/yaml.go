package rulefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/streamrules/streamrules"
)

// readYAML turns YAML into the JSON the strict checks and the decoder read, keeping its
// syntax tree to name lines. Duplicate keys are the parser's error.
func readYAML(data []byte) (*doc, *Error) {
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return nil, &Error{Line: lineAt(data, int64(off)), Err: errors.New("not valid UTF-8")}
	}
	tokens, ferr := yamlTokens(data)
	if ferr != nil {
		return nil, ferr
	}
	file, err := parser.Parse(tokens, 0)
	if err != nil {
		return nil, yamlError(err)
	}
	var body ast.Node
	for _, d := range file.Docs {
		if d.Body == nil {
			continue
		}
		if body != nil {
			return nil, &Error{Line: d.Body.GetToken().Position.Line, Err: errors.New("more than one YAML document")}
		}
		body = d.Body
	}
	if body == nil {
		return nil, &Error{Line: 1, Err: errors.New("empty file")}
	}
	var v any
	if err := yaml.NodeToValue(body, &v, yaml.UseOrderedMap()); err != nil {
		return nil, yamlError(err)
	}
	out, err := toJSON(v)
	if err != nil {
		return nil, &Error{Line: body.GetToken().Position.Line, Err: err}
	}
	return &doc{json: out, line: func(path []any) int { return lineOf(body, path) }}, nil
}

var duplicateRE = regexp.MustCompile(`^mapping key "(.*)" already defined`)

func yamlError(err error) *Error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		e := &Error{Line: ye.GetToken().Position.Line, Err: fmt.Errorf("not YAML: %s", ye.GetMessage())}
		if m := duplicateRE.FindStringSubmatch(ye.GetMessage()); m != nil {
			e.Field = excerpt(m[1])
			e.Err = fmt.Errorf("duplicate field %q (%s)", e.Field, ye.GetMessage())
		}
		return e
	}
	return &Error{Err: fmt.Errorf("not YAML: %v", err)}
}

// toJSON writes a decoded YAML value as JSON, keys in the file's order.
func toJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	var walk func(v any) error
	walk = func(v any) error {
		switch v := v.(type) {
		case yaml.MapSlice:
			b.WriteByte('{')
			for i, it := range v {
				if i > 0 {
					b.WriteByte(',')
				}
				k, ok := it.Key.(string)
				if !ok {
					k = fmt.Sprint(it.Key)
				}
				kb, _ := json.Marshal(k)
				b.Write(kb)
				b.WriteByte(':')
				if err := walk(it.Value); err != nil {
					return err
				}
			}
			b.WriteByte('}')
		case []any:
			b.WriteByte('[')
			for i, e := range v {
				if i > 0 {
					b.WriteByte(',')
				}
				if err := walk(e); err != nil {
					return err
				}
			}
			b.WriteByte(']')
		default:
			out, err := json.Marshal(v)
			if err != nil {
				return fmt.Errorf("a value JSON cannot hold: %v", err)
			}
			b.Write(out)
		}
		return nil
	}
	err := walk(v)
	return b.Bytes(), err
}

// lineOf returns the line of the deepest node on path that the tree has.
func lineOf(n ast.Node, path []any) int {
	line := 0
	if n != nil && n.GetToken() != nil {
		line = n.GetToken().Position.Line
	}
	for _, p := range path {
		n = unwrap(n)
		var next ast.Node
		switch n := n.(type) {
		case *ast.MappingNode:
			for _, mv := range n.Values {
				if keyString(mv.Key) == p {
					next = mv.Value
					line = mv.Key.GetToken().Position.Line
					break
				}
			}
		case *ast.MappingValueNode:
			if keyString(n.Key) == p {
				next = n.Value
				line = n.Key.GetToken().Position.Line
			}
		case *ast.SequenceNode:
			if i, ok := p.(int); ok && i < len(n.Values) {
				next = n.Values[i]
				if tok := unwrap(next).GetToken(); tok != nil {
					line = tok.Position.Line
				}
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}

func unwrap(n ast.Node) ast.Node {
	for {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		default:
			return n
		}
	}
}

func keyString(k ast.MapKeyNode) any {
	if s, ok := k.(ast.ScalarNode); ok {
		if v, ok := s.GetValue().(string); ok {
			return v
		}
		return fmt.Sprint(s.GetValue())
	}
	return k.String()
}

// ---- writing ----

// Marshal writes a set in format f: export's output, which Parse reads back to the same
// set. The store's fields (id, timestamps) are left out.
func Marshal(s Set, f Format) ([]byte, error) {
	out := struct {
		Version int                `json:"version"`
		Rules   []streamrules.Rule `json:"rules"`
	}{s.Version, make([]streamrules.Rule, len(s.Rules))}
	for i, r := range s.Rules {
		out.Rules[i] = outside(r)
	}
	return encode(out, f)
}

// MarshalRule writes one rule in format f, as ParseRule reads it.
func MarshalRule(r streamrules.Rule, f Format) ([]byte, error) {
	return encode(outside(r), f)
}

func encode(v any, f Format) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("rulefile: %w", err)
	}
	if f != YAML {
		return b.Bytes(), nil
	}
	tree, err := orderedTree(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("rulefile: %w", err)
	}
	var y bytes.Buffer
	obj, ok := tree.(object)
	if !ok {
		return nil, errors.New("rulefile: not an object")
	}
	writeObject(&y, obj, 0, false)
	return y.Bytes(), nil
}

type member struct {
	key string
	val any
}

// object is a JSON object with its keys in order.
type object []member

// orderedTree decodes JSON keeping key order: object, []any, string, json.Number, bool, nil.
func orderedTree(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var value func() (any, error)
	value = func() (any, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch tok {
		case json.Delim('{'):
			obj := object{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := value()
				if err != nil {
					return nil, err
				}
				obj = append(obj, member{k.(string), v})
			}
			_, err := dec.Token()
			return obj, err
		case json.Delim('['):
			arr := []any{}
			for dec.More() {
				v, err := value()
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, err
		}
		return tok, nil
	}
	return value()
}

func indent(b *bytes.Buffer, n int) {
	for range n {
		b.WriteByte(' ')
	}
}

// writeObject writes a block mapping at depth n; inline: the first key goes on the
// current line (after a sequence's "- ").
func writeObject(b *bytes.Buffer, obj object, n int, inline bool) {
	for i, m := range obj {
		if i > 0 || !inline {
			indent(b, n)
		}
		b.WriteString(scalar(m.key, false))
		b.WriteByte(':')
		switch v := m.val.(type) {
		case object:
			if len(v) == 0 {
				b.WriteString(" {}\n")
				continue
			}
			b.WriteByte('\n')
			writeObject(b, v, n+2, false)
		case []any:
			if len(v) == 0 || !hasObject(v) {
				b.WriteByte(' ')
				writeFlow(b, v)
				b.WriteByte('\n')
				continue
			}
			b.WriteByte('\n')
			for _, e := range v {
				indent(b, n)
				b.WriteString("- ")
				if o, ok := e.(object); ok && len(o) > 0 {
					writeObject(b, o, n+2, true)
					continue
				}
				writeFlow(b, e)
				b.WriteByte('\n')
			}
		case string:
			b.WriteByte(' ')
			b.WriteString(scalar(v, false))
			b.WriteByte('\n')
		default:
			b.WriteByte(' ')
			writeFlow(b, v)
			b.WriteByte('\n')
		}
	}
}

func hasObject(arr []any) bool {
	for _, e := range arr {
		if _, ok := e.(object); ok {
			return true
		}
	}
	return false
}

// writeFlow writes a value in YAML's flow style.
func writeFlow(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case object:
		b.WriteByte('{')
		for i, m := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(scalar(m.key, true))
			b.WriteString(": ")
			writeFlow(b, m.val)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			writeFlow(b, e)
		}
		b.WriteByte(']')
	case string:
		b.WriteString(scalar(v, true))
	case json.Number:
		b.WriteString(v.String())
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case nil:
		b.WriteString("null")
	}
}

var (
	plainRE     = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	plainToolRE = regexp.MustCompile(`^tool:[A-Za-z0-9_.-]+$`)
)

// scalar writes a string plainly when YAML reads it back as that same string (names,
// scopes), and double-quoted otherwise. The quoting escapes every character YAML could
// read differently, so what goes out comes back byte for byte.
func scalar(s string, flow bool) string {
	switch s {
	case "true", "false", "yes", "no", "on", "off", "null", "y", "n":
		return quote(s)
	}
	if plainRE.MatchString(s) || (!flow && plainToolRE.MatchString(s)) {
		return s
	}
	return quote(s)
}

func quote(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == ' ' || (r < utf8.RuneSelf && unicode.IsPrint(r)):
			b.WriteRune(r)
		case r >= utf8.RuneSelf && unicode.IsPrint(r) && r != '\uFEFF':
			b.WriteRune(r)
		case r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
