package streamrules_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
)

// TestExampleJSON: an example with text only is a JSON string, one with context the
// object form; an empty tool record stays a record, and an object with another key, or
// a value of another type, is refused.
func TestExampleJSON(t *testing.T) {
	t.Parallel()
	input := "Fix <it> & run"
	tests := []struct {
		ex   streamrules.Example
		wire string
	}{
		{streamrules.Example{Text: "Done <now> & then."}, `"Done <now> & then."`},
		{streamrules.Example{Text: "Done.", Input: &input}, `{"text":"Done.","input":"Fix <it> & run"}`},
		{streamrules.Example{Text: "Done.", Tools: []streamrules.ToolRun{}}, `{"text":"Done.","tools":[]}`},
		{streamrules.Example{Text: "", Tools: []streamrules.ToolRun{{Tool: "run_tests", OK: true}}}, `{"text":"","tools":[{"tool":"run_tests","ok":true}]}`},
	}
	for _, tt := range tests {
		// As the stores and files write it: an encoder that leaves <, > and & alone.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		err := enc.Encode(tt.ex)
		if data := strings.TrimSuffix(buf.String(), "\n"); err != nil || data != tt.wire {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tt.ex, data, err, tt.wire)
		}
		var back streamrules.Example
		if err := json.Unmarshal([]byte(tt.wire), &back); err != nil || !reflect.DeepEqual(back, tt.ex) {
			t.Errorf("Unmarshal(%s) = %+v, %v", tt.wire, back, err)
		}
	}
	for _, bad := range []string{`{"text":"x","tool":"y"}`, `42`, `true`, `["x"]`, `{"text":1}`} {
		var e streamrules.Example
		if err := json.Unmarshal([]byte(bad), &e); err == nil {
			t.Errorf("Unmarshal(%s) = %+v, want an error", bad, e)
		}
	}
	// Facts: none without context; the record and input as given.
	if f := (streamrules.Example{Text: "x"}).Facts(); f != nil {
		t.Errorf("Facts of a text-only example: %+v", f)
	}
	f := streamrules.Example{Text: "x", Tools: []streamrules.ToolRun{}}.Facts()
	if f == nil || !f.HasTools || f.HasInput {
		t.Errorf("Facts with an empty record: %+v", f)
	}
}

// TestValidateTests: the bounds of a rule's tests, each refused naming its field.
func TestValidateTests(t *testing.T) {
	t.Parallel()
	many := make([]streamrules.Example, streamrules.MaxTestExamples+1)
	long := strings.Repeat("x", streamrules.MaxExampleBytes+1)
	runs := make([]streamrules.ToolRun, streamrules.MaxExampleTools+1)
	for i := range runs {
		runs[i].Tool = "t"
	}
	tests := []struct {
		tests *streamrules.RuleTests
		field string // "": valid
	}{
		{nil, ""},
		{&streamrules.RuleTests{}, ""},
		{&streamrules.RuleTests{Fires: many[:streamrules.MaxTestExamples], Passes: many[:streamrules.MaxTestExamples]}, ""},
		{&streamrules.RuleTests{Fires: many}, "tests.fires"},
		{&streamrules.RuleTests{Passes: many}, "tests.passes"},
		{&streamrules.RuleTests{Fires: []streamrules.Example{{Text: long}}}, "tests.fires[0].text"},
		{&streamrules.RuleTests{Passes: []streamrules.Example{{}, {Text: "x", Input: &long}}}, "tests.passes[1].input"},
		{&streamrules.RuleTests{Fires: []streamrules.Example{{Text: "x", Tools: runs}}}, "tests.fires[0].tools"},
		{&streamrules.RuleTests{Fires: []streamrules.Example{{Text: "x", Tools: []streamrules.ToolRun{{Tool: " "}}}}}, "tests.fires[0].tools[0].tool"},
	}
	for i, tt := range tests {
		r := streamrules.Rule{Name: "r", Scope: streamrules.ScopeText, Condition: "x", Text: "t", Tests: tt.tests}
		r.Normalize()
		err := streamrules.Validate(&r, nil)
		var ve *streamrules.ValidationError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("#%d: %v", i, err)
		case tt.field != "" && (!errors.As(err, &ve) || ve.Field != tt.field):
			t.Errorf("#%d: %v, want a ValidationError on %s", i, err, tt.field)
		}
	}
}
