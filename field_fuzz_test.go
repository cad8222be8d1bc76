package streamrules

import (
	"encoding/json"
	"slices"
	"testing"
)

// FuzzFieldValues: any string, placed in arguments as a value, in an array, in an object
// inside an array, and as JSON inside a string, comes back as that value from the path
// that names it; any input at all returns without panicking.
func FuzzFieldValues(f *testing.F) {
	f.Add("x", `{"a":1}`)
	f.Add(`{"b":"in"}`, `[{"b":2}]`)
	f.Add("", `"\"x\""`)
	f.Add("\xff", `{"a":[[["z"]]]}`)
	f.Fuzz(func(t *testing.T, s string, input string) {
		_ = fieldValues(input, "a.b")
		_ = fieldValues(input, "a")
		inner, _ := json.Marshal(map[string]any{"b": s})
		args, err := json.Marshal(map[string]any{
			"a":    []any{map[string]any{"b": s}, []any{map[string]any{"b": s}}, map[string]any{"c": s}},
			"json": string(inner),
			"list": []any{s, []any{s}},
		})
		if err != nil {
			t.Skip()
		}
		// encoding/json replaces invalid UTF-8: compare with what it kept.
		var back struct{ List []any }
		if err := json.Unmarshal(args, &back); err != nil {
			t.Fatal(err)
		}
		kept := back.List[0].(string)
		if got := fieldValues(string(args), "a.b"); !slices.Equal(got, []string{kept, kept}) {
			t.Fatalf("a.b of %s = %q", args, got)
		}
		if got := fieldValues(string(args), "list"); !slices.Equal(got, []string{kept, kept}) {
			t.Fatalf("list of %s = %q", args, got)
		}
		if got := fieldValues(string(args), "json.b"); !slices.Equal(got, []string{kept}) {
			t.Fatalf("json.b of %s = %q", args, got)
		}
		if got := fieldValues(string(args), "a.missing"); got != nil {
			t.Fatalf("a missing field gave %q", got)
		}
	})
}
