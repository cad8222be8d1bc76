package rulefile_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulefile"
)

// TestTestsInFiles: a rule's tests as a person writes them in YAML (strings, and the
// object form for context) parse to the examples, and export and parse again to the same
// rules in both formats; a bad example is refused with its line and field.
func TestTestsInFiles(t *testing.T) {
	t.Parallel()
	const src = `version: 1
rules:
  - name: no_bare_done
    scope: text
    condition: '^Done\.$'
    text: Say what was done.
    tests:
      fires:
        - Done.
        - text: Done.
          input: "Fix it: the build <fails>"
          tools: []
      passes:
        - "Done: the build is green & tested."
        - text: 'Done: ok.'
          tools:
            - {tool: write_file, ok: true}
            - tool: run_tests
  - name: args_rule
    scope: tool:write_file
    condition: '"path":"/etc/'
    text: Not in /etc.
    tests:
      fires: ['{"path":"/etc/hosts","content":"x"}']
`
	set, err := rulefile.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	input := "Fix it: the build <fails>"
	want := &streamrules.RuleTests{
		Fires: []streamrules.Example{{Text: "Done."}, {Text: "Done.", Input: &input, Tools: []streamrules.ToolRun{}}},
		Passes: []streamrules.Example{{Text: "Done: the build is green & tested."},
			{Text: "Done: ok.", Tools: []streamrules.ToolRun{{Tool: "write_file", OK: true}, {Tool: "run_tests"}}}},
	}
	if r, _ := set.Rule("no_bare_done"); !reflect.DeepEqual(r.Tests, want) {
		t.Errorf("parsed %+v\nwant %+v", r.Tests, want)
	}
	if r, _ := set.Rule("args_rule"); r.Tests == nil || r.Tests.Fires[0].Text != `{"path":"/etc/hosts","content":"x"}` || r.Tests.Passes != nil {
		t.Errorf("tool rule's tests: %+v", r.Tests)
	}
	for _, f := range []rulefile.Format{rulefile.YAML, rulefile.JSON} {
		data, err := rulefile.Marshal(set, f)
		if err != nil {
			t.Fatal(err)
		}
		back, err := rulefile.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v\n%s", f, err, data)
		}
		if !reflect.DeepEqual(back, set) {
			t.Errorf("%s round trip:\n%+v\n%+v\n%s", f, set, back, data)
		}
		if f == rulefile.JSON && !strings.Contains(string(data), `"fires": [
          "Done.",`) {
			t.Errorf("a text-only example is not written as a string:\n%s", data)
		}
	}

	for _, tt := range []struct {
		name, tests, want string
	}{
		{"NUL", "\n      fires: [\"a\\0b\"]", `rulefile: line 8: rule #1 "r": streamrules: invalid tests.fires[0].text: contains a NUL byte at byte 1`},
		{"unknown key", "\n      passes:\n        - txt: a", `rulefile: line 9: rule #1 "r": unknown field "txt" (known: input, text, tools)`},
		{"a number", "\n      fires: [1]", `rulefile: line 3: rule #1 "r": "fires" must be a string, or an object with text, input and tools, not number`},
		{"too many", "\n      fires: [" + strings.Repeat("a, ", streamrules.MaxTestExamples) + "a]", `rulefile: line 8: rule #1 "r": streamrules: invalid tests.fires: 33 examples, at most 32`},
		{"duplicate", "\n      fires:\n        - {text: a, text: b}", `rulefile: line 9: duplicate field "text" (mapping key "text" already defined at [9:12])`},
		{"empty tool", "\n      fires:\n        - text: a\n          tools: [{tool: ''}]", `rulefile: line 10: rule #1 "r": streamrules: invalid tests.fires[0].tools[0].tool: empty: name the tool that ran`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rulefile.Parse([]byte("version: 1\nrules:\n  - name: r\n    scope: text\n    condition: a\n    text: t\n    tests:" + tt.tests + "\n"))
			var fe *rulefile.Error
			if err == nil || !errors.As(err, &fe) || err.Error() != tt.want {
				t.Errorf("got  %v\nwant %s", err, tt.want)
			}
		})
	}
}
