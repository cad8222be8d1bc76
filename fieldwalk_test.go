package streamrules

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// decodeWalk is the walk of a field path as it was before fieldwalk.go: the arguments
// decoded whole, then walked. The reference the raw walk must agree with, but for one
// thing: the decode took `{"a":0}}` for JSON (json.Decoder.More is false before a
// closing bracket), and the walk, as the doc of fieldValues says, takes no value from
// what is not JSON (the fuzz corpus keeps the case).
func decodeWalk(input string, path []string) []string {
	root, ok := strictDecode(input)
	if !ok {
		return nil
	}
	var out []string
	walkField(root, path, &out)
	return out
}

func walkField(v any, path []string, out *[]string) {
	if len(*out) >= maxFieldValues {
		return
	}
	switch x := v.(type) {
	case []any:
		// An array fans out at any depth, the last segment included: "tags" over
		// {"tags": ["a", "b"]} yields "a" and "b".
		for _, e := range x {
			walkField(e, path, out)
		}
		return
	case string:
		if len(path) == 0 {
			*out = append(*out, x)
			return
		}
		if inner, ok := strictDecode(x); ok {
			if _, isString := inner.(string); !isString { // "\"x\"" would loop forever
				walkField(inner, path, out)
			}
		}
		return
	}
	if len(path) == 0 {
		if v == nil {
			*out = append(*out, "null")
			return
		}
		b, err := json.Marshal(v)
		if err == nil {
			*out = append(*out, string(b))
		}
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return
	}
	child, ok := obj[path[0]]
	if !ok {
		return
	}
	walkField(child, path[1:], out)
}

func strictDecode(s string) (any, bool) {
	if !json.Valid([]byte(s)) {
		return nil, false
	}
	return decodeJSONValue(s)
}

var fieldWalkCases = []struct{ input, path string }{
	{`{"a":"x"}`, "a"},
	{`{"a":1.50,"a":2E+3}`, "a"},
	{`{"a":{"z":1,"b":[true,null,"<&>"],"a":{"y":"\u00e9"}}}`, "a"},
	{` {"a" : [ {"b":1} , {"b":"2"}, [{"b":[3,4]}] ] } `, "a.b"},
	{`{"a":"{\"b\":[\"x\",\"y\"]}"}`, "a.b"},
	{`{"a":"\"quoted\""}`, "a.b"},
	{`{"a":"[1,2]"}`, "a"},
	{`{"a":"[{\"b\":7}]"}`, "a.b"},
	{`{"a\u0062":1,"ab":2}`, "ab"},
	{`{"a":"\ud800x"}`, "a"},
	{"{\"a\":\"\xff\xfe\"}", "a"},
	{`{"a":null}`, "a"},
	{`{"a":null}`, "a.b"},
	{`[{"a":1},{"a":2}]`, "a"},
	{`{"a":[]}`, "a"},
	{`{"a":{}}`, "a"},
	{`{"a":1} x`, "a"},
	{`{"a":1`, "a"},
	{``, "a"},
	{`"{\"a\":1}"`, "a"},
	{`{"a":{"b":{"c":"deep"}}}`, "a.b.c"},
	{`{"a":[[[["x"]]]]}`, "a"},
}

// TestFieldWalkMatchesDecode: the raw walk gives the values decoding gave, on the
// shapes a path meets (duplicates, escapes, JSON inside strings, fan-out, bad JSON).
func TestFieldWalkMatchesDecode(t *testing.T) {
	t.Parallel()
	for _, c := range fieldWalkCases {
		path := strings.Split(c.path, ".")
		if got, want := fieldValues(c.input, c.path), decodeWalk(c.input, path); !slices.Equal(got, want) {
			t.Errorf("fieldValues(%q, %q) = %q, decoding gives %q", c.input, c.path, got, want)
		}
	}
	// The cap on values.
	many := `{"a":[` + strings.Repeat(`"x",`, 2*maxFieldValues) + `"y"]}`
	if got := fieldValues(many, "a"); len(got) != maxFieldValues {
		t.Errorf("%d values, want %d", len(got), maxFieldValues)
	}
}

// FuzzFieldWalk: on any input and path, the raw walk gives the values decoding gave.
func FuzzFieldWalk(f *testing.F) {
	for _, c := range fieldWalkCases {
		f.Add(c.input, c.path)
	}
	f.Fuzz(func(t *testing.T, input, path string) {
		if path == "" || len(input) > 1<<12 {
			return
		}
		segs := strings.Split(path, ".")
		if got, want := fieldValues(input, path), decodeWalk(input, segs); !slices.Equal(got, want) {
			t.Fatalf("fieldValues(%q, %q) = %q, decoding gives %q", input, path, got, want)
		}
	})
}

// fieldArgs are 1 MB tool arguments of the shapes that made decoding slow: a long array
// of small values, of small objects, of short strings, and one long string.
func fieldArgs() map[string]string {
	return map[string]string{
		"numbers": `{"a":[` + strings.Repeat("0,", 1<<19) + `0]}`,
		"objects": `{"a":[` + strings.Repeat(`{"b":1},`, 1<<17) + `{}]}`,
		"strings": `{"a":[` + strings.Repeat(`"x",`, 1<<18) + `""]}`,
		"text":    `{"a":"` + strings.Repeat("x", 1<<20) + `"}`,
	}
}

// BenchmarkFieldWalk: a field path over 1 MB of arguments, the raw walk against the
// decode it replaced (the figure per byte is costFieldNs).
func BenchmarkFieldWalk(b *testing.B) {
	for name, args := range fieldArgs() {
		for _, path := range []string{"a", "a.b"} {
			segs := strings.Split(path, ".")
			b.Run(name+"/"+path+"/raw", func(b *testing.B) {
				b.SetBytes(int64(len(args)))
				for b.Loop() {
					a := callArgs{text: args}
					a.values(segs)
				}
			})
			b.Run(name+"/"+path+"/decode", func(b *testing.B) {
				b.SetBytes(int64(len(args)))
				for b.Loop() {
					decodeWalk(args, segs)
				}
			})
		}
	}
}
