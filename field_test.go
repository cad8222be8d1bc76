package streamrules

import (
	"context"
	"slices"
	"testing"
)

func TestFieldValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, input, field string
		want               []string
	}{
		{"top-level string", `{"path":"a.go"}`, "path", []string{"a.go"}},
		{"array fans out", `{"edits":[{"new_string":"x"},{"new_string":"y"},{"old":"z"}]}`, "edits.new_string", []string{"x", "y"}},
		{"nested arrays", `{"files":[{"edits":[{"s":"1"},{"s":"2"}]},{"edits":[[{"s":"3"}]]}]}`, "files.edits.s", []string{"1", "2", "3"}},
		{"array at the end fans out", `{"tags":["a",["b","c"]]}`, "tags", []string{"a", "b", "c"}},
		{"JSON in a string", `{"payload":"{\"edits\":[{\"new_string\":\"deep\"}]}"}`, "payload.edits.new_string", []string{"deep"}},
		{"JSON in a string in an array", `{"ops":["{\"cmd\":\"rm -rf /\"}","{\"cmd\":\"ls\"}"]}`, "ops.cmd", []string{"rm -rf /", "ls"}},
		{"non-string value as JSON", `{"a":{"b":[1,2.50,true,null,{"c":1}]}}`, "a.b", []string{"1", "2.50", "true", "null", `{"c":1}`}},
		{"object value as compact JSON", `{"a":{ "b" : 1 }}`, "a", []string{`{"b":1}`}},
		{"missing field", `{"edits":[{"old":"z"}]}`, "edits.new_string", nil},
		{"missing top", `{}`, "a.b", nil},
		{"path through a scalar", `{"a":5}`, "a.b", nil},
		{"string that is not JSON", `{"a":"plain"}`, "a.b", nil},
		{"string holding a JSON string", `{"a":"\"x\""}`, "a.b", nil},
		{"input not JSON", `rm -rf /`, "cmd", nil},
		{"trailing data", `{"a":"x"} {"a":"y"}`, "a", nil},
	}
	for _, tt := range tests {
		if got := fieldValues(tt.input, tt.field); !slices.Equal(got, tt.want) {
			t.Errorf("%s: fieldValues(%s, %q) = %q, want %q", tt.name, tt.input, tt.field, got, tt.want)
		}
	}
	var many []byte
	many = append(many, `{"a":[`...)
	for i := range maxFieldValues + 10 {
		if i > 0 {
			many = append(many, ',')
		}
		many = append(many, `"v"`...)
	}
	many = append(many, "]}"...)
	if n := len(fieldValues(string(many), "a")); n != maxFieldValues {
		t.Errorf("%d values, want the cap %d", n, maxFieldValues)
	}
}

// TestFieldRule: a tool rule with a field judges each value and fires if one fires; a call
// without the field does not fire it; the rule without a field sees the whole arguments.
func TestFieldRule(t *testing.T) {
	t.Parallel()
	todo := Predicate{AllOf: []Predicate{Contains(`TODO`), NotContains(`TODO\(\w+\)`)}}
	f := newFixture(t, []Rule{
		with(softRule("no_todo", "patch_file", ""), func(r *Rule) { r.Field = "edits.new_string"; r.Predicate = &todo }),
		softRule("whole_args", "patch_file", `"path":"secret`),
		with(softRule("short_edits", "patch_file", ""), func(r *Rule) {
			r.Field = "edits.new_string"
			p := MaxChars(3)
			r.Predicate = &p
			r.Negate = true // fires on an edit longer than 3 characters
		}),
	}, nil)
	ctx := context.Background()
	tests := []struct {
		name, input string
		want        []string
	}{
		{"one of two edits has a bare TODO", `{"path":"a.go","edits":[{"new_string":"ok"},{"new_string":"// TODO fix"}]}`, []string{"no_todo", "short_edits"}},
		{"owned TODO passes", `{"path":"a.go","edits":[{"new_string":"TODO(ann)"}]}`, []string{"short_edits"}},
		{"no field: the field rules stay silent", `{"path":"secret.txt"}`, []string{"whole_args"}},
		{"edits inside a JSON string", `{"path":"a.go","edits":"[{\"new_string\":\"TODO\"}]"}`, []string{"no_todo", "short_edits"}},
		{"short edits pass", `{"path":"a.go","edits":[{"new_string":"ab"},{"new_string":"c"}]}`, []string{}},
	}
	for _, tt := range tests {
		_, m := f.eng.BeginMove(ctx, "chat-"+tt.name)
		if got := reminderNames(m.ToolReminders(ctx, "patch_file", tt.input)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: reminders %v, want %v", tt.name, got, tt.want)
		}
	}
}
