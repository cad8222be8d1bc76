package rulefile_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/ruleinput"
	"github.com/streamrules/streamrules/rulefile"
	"github.com/streamrules/streamrules/seeds"
)

const goodYAML = `# a rules repository
version: 2
rules:
  - name: no_lorem
    scope: text
    condition: (?i)lorem ipsum
    text: Never send placeholder text.
  - name: shell_is_ours
    scope: tool:shell
    when: [client_ops]
    repeat: once
    text: This shell runs on the agent's host.
    enabled: false
`

func TestParseYAMLAndJSONAgree(t *testing.T) {
	t.Parallel()
	y, err := rulefile.Parse([]byte(goodYAML))
	if err != nil {
		t.Fatal(err)
	}
	j, err := rulefile.Parse([]byte(`{"version":2,"rules":[
		{"name":"no_lorem","scope":"text","condition":"(?i)lorem ipsum","text":"Never send placeholder text."},
		{"name":"shell_is_ours","scope":"tool:shell","when":["client_ops"],"repeat":"once","text":"This shell runs on the agent's host.","enabled":false}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(y, j) {
		t.Fatalf("YAML %+v\nJSON %+v", y, j)
	}
	want := streamrules.Rule{Name: "shell_is_ours", Scope: "tool:shell", When: []string{"client_ops"}, Repeat: "once",
		Text: "This shell runs on the agent's host.", Mode: streamrules.ModeRemind, Disabled: true}
	if y.Version != 2 || len(y.Rules) != 2 || y.Rules[0].Disabled || !reflect.DeepEqual(y.Rules[1], want) {
		t.Errorf("got %+v", y)
	}
}

// TestParseErrors: a good set spoiled one way at a time, in both formats; the error names
// the line, the rule and the field.
// TestContextAtoms: the atoms that read the move's input and tool record are file fields
// like any other, in YAML and JSON alike.
func TestContextAtoms(t *testing.T) {
	t.Parallel()
	yaml := `version: 1
rules:
  - name: verify_before_done
    scope: text
    text: Run the tests first.
    applies_when:
      input_not_contains_regex: "(?i)skip the tests"
    predicate:
      all_of:
        - contains_regex: "(?i)\\bdone\\b"
        - edited_unchecked: {edits: [write_file], checks: [run_tests]}
        - any_of: [{tool_called: write_file}, {tool_failed: run_tests}, {input_contains_regex: x}]
`
	set, err := rulefile.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	r := set.Rules[0]
	if r.AppliesWhen.InputNotContainsRegex != "(?i)skip the tests" || r.Predicate.AllOf[1].EditedUnchecked.Checks[0] != "run_tests" ||
		r.Predicate.AllOf[2].AnyOf[1].ToolFailed != "run_tests" {
		t.Fatalf("parsed %+v", r)
	}
	for _, f := range []rulefile.Format{rulefile.JSON, rulefile.YAML} {
		data, err := rulefile.Marshal(set, f)
		if err != nil {
			t.Fatal(err)
		}
		back, err := rulefile.Parse(data)
		if err != nil || !reflect.DeepEqual(back.Rules[0].Predicate, r.Predicate) || !reflect.DeepEqual(back.Rules[0].AppliesWhen, r.AppliesWhen) {
			t.Errorf("%v round trip: %v\n%s", f, err, data)
		}
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		data   string
		line   int
		rule   int
		field  string
		reason string // the error text contains this
	}{
		{"yaml bad regex", strings.Replace(goodYAML, "(?i)lorem ipsum", "(?i)lorem(", 1), 6, 1, "condition", `rulefile: line 6: rule #1 "no_lorem": streamrules: invalid condition:`},
		{"yaml key in another case", strings.Replace(goodYAML, "    repeat:", "    Repeat:", 1), 11, 2, "Repeat", `did you mean "repeat"`},
		{"yaml unknown key", strings.Replace(goodYAML, "    enabled:", "    colour: red\n    enabled:", 1), 13, 2, "colour", `unknown field "colour"`},
		{"yaml store field", strings.Replace(goodYAML, "    enabled:", "    id: 4\n    enabled:", 1), 13, 2, "id", "belongs to the store"},
		{"yaml duplicate key", strings.Replace(goodYAML, "    repeat: once", "    repeat: once\n    repeat: once", 1), 12, 0, "repeat", `duplicate field "repeat"`},
		{"yaml wrong type", strings.Replace(goodYAML, "[client_ops]", "client_ops", 1), 10, 2, "when", `"when" must be a list of strings`},
		{"yaml yes is not a bool", strings.Replace(goodYAML, "enabled: false", "enabled: no", 1), 13, 2, "enabled", `"enabled" must be true or false`},
		{"yaml unknown environment", strings.Replace(goodYAML, "[client_ops]", "[whatsapp]", 1), 10, 2, "when", "whatsapp"},
		{"yaml long text", strings.Replace(goodYAML, "Never send placeholder text.", strings.Repeat("x", 401), 1), 7, 1, "text", "401 characters"},
		{"yaml duplicate name", strings.Replace(goodYAML, "shell_is_ours", "no_lorem", 1), 8, 2, "name", "duplicate of rule #1"},
		{"yaml version zero", strings.Replace(goodYAML, "version: 2", "version: 0", 1), 2, 0, "version", "must be 1 or more"},
		{"yaml no version", strings.Replace(goodYAML, "version: 2\n", "", 1), 1, 0, "version", `missing "version"`},
		{"yaml invalid UTF-8", strings.Replace(goodYAML, "placeholder", "place\xffholder", 1), 7, 0, "", "not valid UTF-8"},
		{"yaml two documents", goodYAML + "---\nversion: 3\n", 15, 0, "", "more than one"},
		{"yaml syntax", "version: 1\nrules:\n  - name: x\n   scope: text\n", 4, 0, "", "not YAML"},
		{"json bad scope", "{\"version\": 1,\n \"rules\": [\n  {\"name\": \"a\", \"scope\": \"text\", \"text\": \"t\"},\n  {\"name\": \"b\",\n   \"scope\": \"thought\", \"text\": \"t\"}]}", 5, 2, "scope", `rule #2 "b": streamrules: invalid scope`},
		{"json duplicate key", "{\"version\": 1,\n \"rules\": [\n  {\"name\": \"a\", \"scope\": \"text\",\n   \"text\": \"t\", \"text\": \"u\"}]}", 4, 1, "text", `duplicate field "text"`},
		{"json key in another case", "{\"Version\": 1, \"rules\": []}", 1, 0, "Version", `did you mean "version"`},
		{"json invalid UTF-8", "{\"version\": 1,\n \"rules\": [\n  {\"name\": \"a\", \"scope\": \"text\",\n   \"text\": \"t\xc3\"}]}", 4, 1, "text", "not valid UTF-8"},
		{"json lone surrogate", "{\"version\": 1, \"rules\": [{\"name\": \"a\", \"scope\": \"text\", \"text\": \"\\udc00\"}]}", 1, 1, "text", "not valid UTF-8"},
		{"json trailing data", "{\"version\": 1, \"rules\": []}\n{}", 2, 0, "", "data after"},
		{"json syntax", "{\"version\": 1,\n \"rules\": [,]}", 2, 1, "rules", "not JSON"},
		{"json not an object", `[1]`, 1, 0, "", "not an object"},
		{"yaml bad predicate node", "version: 1\nrules:\n  - name: p\n    scope: text\n    text: t\n    predicate:\n      any_of:\n        - contains_regex: a\n        - ends_with_regex: \"(\"\n", 9, 1, "predicate.any_of[1].ends_with_regex", "invalid predicate.any_of[1].ends_with_regex"},
		{"json bad predicate node", "{\"version\": 1, \"rules\": [{\"name\": \"p\", \"scope\": \"text\", \"text\": \"t\",\n \"predicate\": {\"any_of\": [{\"contains_regex\": \"a\"},\n  {\"ends_with_regex\": \"(\"}]}}]}", 3, 1, "predicate.any_of[1].ends_with_regex", "invalid predicate"},
		{"yaml nested key in another case", "version: 1\nrules:\n  - name: p\n    scope: text\n    text: t\n    fix:\n      Append_If_Missing: x\n", 7, 1, "Append_If_Missing", `did you mean "append_if_missing"`},
		{"yaml not an object", "- version: 1\n", 1, 0, "", "not an object"},
		{"yaml bad tool name in a context atom", "version: 1\nrules:\n  - name: p\n    scope: text\n    text: t\n    predicate:\n      all_of:\n        - contains_regex: done\n        - not_: {tool_succeeded: \"run tests\"}\n", 9, 1,
			"predicate.all_of[1].not_.tool_succeeded", `tool name "run tests"`},
		{"yaml empty checks", "version: 1\nrules:\n  - name: p\n    scope: text\n    text: t\n    applies_when:\n      edited_unchecked: {edits: [write_file], checks: []}\n", 7, 1,
			"applies_when.edited_unchecked.checks", "empty list"},
		{"yaml bad input regex", "version: 1\nrules:\n  - name: p\n    scope: text\n    text: t\n    applies_when:\n      input_contains_regex: \"(\"\n", 7, 1,
			"applies_when.input_contains_regex", "invalid applies_when.input_contains_regex"},
		{"yaml unknown key in edited_unchecked", "version: 1\nrules:\n  - name: p\n    scope: text\n    text: t\n    predicate:\n      edited_unchecked: {edits: [a], check: [b]}\n", 7, 1,
			"check", `unknown field "check"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := rulefile.Parse([]byte(tt.data))
			var fe *rulefile.Error
			if !errors.As(err, &fe) {
				t.Fatalf("error %v, want a *rulefile.Error", err)
			}
			if fe.Line != tt.line || fe.Rule != tt.rule || fe.Field != tt.field || !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("got line %d rule %d field %q: %v\nwant line %d rule %d field %q, containing %q", fe.Line, fe.Rule, fe.Field, err, tt.line, tt.rule, tt.field, tt.reason)
			}
			var ve *streamrules.ValidationError
			if errors.As(err, &ve) && ve.Field != fe.Field {
				t.Errorf("validation error on %q, file error on %q", ve.Field, fe.Field)
			}
		})
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(goodYAML, "(?i)lorem ipsum", "(", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := rulefile.Load(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+`:6: rule #1 "no_lorem": streamrules: invalid condition: `) {
		t.Errorf("got %v", err)
	}
	if _, err := rulefile.Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("missing file loaded")
	}
}

// TestRoundTrip: export then import changes nothing, in both formats, for the seeds and
// for rules with every field set.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	def, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	odd := rulefile.Set{Version: 7, Rules: []streamrules.Rule{
		{Name: "quotes", Scope: "text", Condition: `"yes"|'no'|#x: y|\t\\`, Negate: true, When: []string{"master", "telegram"},
			Text: "Line one.\nLine two: \"quoted\" <b>&amp;</b> \t tab, \u00a0nbsp, \u2028sep, \ufeffbom, emoji 👍, null-ish ~", Repeat: "after:12", Shadow: true, Early: true, Disabled: true},
		{Name: "true", Scope: "tool:a.b-c:d", Text: "yes", Mode: streamrules.ModeRemind, Repeat: "once"},
		{Name: "null", Scope: "text", Condition: "^$", Text: "- [x] {a: b}", Mode: streamrules.ModeInterrupt},
	}}
	// The wave-2 fields, nested trees included: the YAML writer is the package's own.
	tree := streamrules.AnyOf(streamrules.AllOf(streamrules.StartsWith(`^"hi`), streamrules.MaxWords(3)),
		streamrules.Not(streamrules.EndsWith(`↩ #\d+$`)), streamrules.MinWords(0))
	scope := streamrules.Not(streamrules.MaxChars(10))
	odd.Rules = append(odd.Rules,
		streamrules.Rule{Name: "tree", Scope: "text", Predicate: &tree, AppliesWhen: &scope, Text: "t",
			Fix:      &streamrules.Fix{PrependIfMissing: "# x: y\n"},
			Severity: "high", Explanation: "why: \"this\"\n- not a list"},
		streamrules.Rule{Name: "field", Scope: "tool:edit", Field: "edits.new_string", Condition: "TODO", Text: "t", Severity: "low"},
		streamrules.Rule{Name: "gate", Scope: "tool:sh", Mode: streamrules.ModeInterrupt, Field: "cmd", Shell: true, Condition: `^rm\s`, Text: "t"},
		streamrules.Rule{Name: "swap", Scope: "text", Condition: `"a"`, Text: "t",
			Fix: &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: `"(a)"`, With: "'$1' #"}}})
	for i := range odd.Rules {
		odd.Rules[i].Normalize()
		if err := streamrules.Validate(&odd.Rules[i], nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, set := range []rulefile.Set{def, odd} {
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
			again, _ := rulefile.Marshal(back, f)
			if string(again) != string(data) {
				t.Errorf("%s: the second export differs:\n%s\n%s", f, data, again)
			}
		}
	}
}

func TestRuleFiles(t *testing.T) {
	t.Parallel()
	r, err := rulefile.ParseRule([]byte("name: deploy_ticket\nscope: tool:deploy\nwhen: [prod]\ntext: Deploys need a ticket.\n"), "prod")
	if err != nil {
		t.Fatal(err)
	}
	if r.Mode != streamrules.ModeRemind || r.When[0] != "prod" || r.Disabled {
		t.Errorf("got %+v", r)
	}
	for _, f := range []rulefile.Format{rulefile.YAML, rulefile.JSON} {
		data, err := rulefile.MarshalRule(r, f)
		if err != nil {
			t.Fatal(err)
		}
		back, err := rulefile.ParseRule(data, "prod")
		if err != nil || !reflect.DeepEqual(back, r) {
			t.Errorf("%s: %v\n%+v\n%+v", f, err, r, back)
		}
	}
	_, err = rulefile.ParseRule([]byte("name: deploy_ticket\nscope: tool:deploy\nwhen: [prod]\ntext: Deploys need a ticket.\n"))
	if err == nil || !strings.Contains(err.Error(), `line 3: rule "deploy_ticket": streamrules: invalid when`) {
		t.Errorf("unknown environment: %v", err)
	}
}

func TestApply(t *testing.T) {
	t.Parallel()
	cur := streamrules.Rule{ID: 4, Name: "a", Scope: "text", Condition: "x", Text: "t", Mode: streamrules.ModeInterrupt, When: []string{"telegram"}}
	fields, err := ruleinput.DecodeFields([]byte(`{"name":"a","scope":"tool:shell","shadow":true,"new_name":"b"}`), "new_name")
	if err != nil {
		t.Fatal(err)
	}
	delete(fields, "name")
	fields["name"] = fields["new_name"]
	got, err := rulefile.Apply(cur, fields)
	if err != nil {
		t.Fatal(err)
	}
	want := streamrules.Rule{ID: 4, Name: "b", Scope: "tool:shell", Condition: "x", Text: "t", When: []string{"telegram"}, Shadow: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if _, err := rulefile.Apply(cur, map[string]json.RawMessage{"negate": json.RawMessage(`"yes"`)}); err == nil {
		t.Error("a string negate applied")
	}
	var fe *rulefile.Error
	_, err = rulefile.Apply(cur, map[string]json.RawMessage{"predicate": json.RawMessage(`{"Contains_Regex": "x"}`)})
	if !errors.As(err, &fe) || fe.Field != "Contains_Regex" {
		t.Errorf("a nested key in another case: %v", err)
	}
	_, err = rulefile.Apply(cur, map[string]json.RawMessage{"fix": json.RawMessage(`{"append_if_missing": "a", "append_if_missing": "b"}`)})
	if !errors.As(err, &fe) || fe.Field != "append_if_missing" {
		t.Errorf("a nested duplicate key: %v", err)
	}
}

// TestEveryRuleFieldIsAFileField: a rule with every field set (by reflection, so a field
// added to Rule is covered) goes through a file and back: no second list of names to
// keep in step with Rule.
func TestEveryRuleFieldIsAFileField(t *testing.T) {
	t.Parallel()
	var r streamrules.Rule
	v := reflect.ValueOf(&r).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			if f.Type().Elem().Kind() == reflect.String {
				f.Set(reflect.ValueOf([]string{"telegram"}).Convert(f.Type()))
			}
		case reflect.Pointer:
			// The trees and the fix (Predicate, AppliesWhen, Fix), their strings set: a
			// pointer field the file drops fails too.
			if el := f.Type().Elem(); el.Kind() == reflect.Struct {
				f.Set(reflect.New(el))
				for j := range el.NumField() {
					if g := f.Elem().Field(j); g.Kind() == reflect.String {
						g.SetString("x")
					}
				}
			}
		}
	}
	if r.Predicate == nil || r.AppliesWhen == nil || r.Fix == nil {
		t.Fatalf("the pointer fields were not set: %+v", r)
	}
	r.ID = 0
	data, err := rulefile.MarshalRule(r, rulefile.JSON)
	if err != nil {
		t.Fatal(err)
	}
	back, err := rulefile.DecodeRule(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !reflect.DeepEqual(back, r) {
		t.Errorf("round trip:\n%+v\n%+v", r, back)
	}
	// The store's own fields are not a file's.
	for _, k := range []string{"id", "created_at", "updated_at"} {
		if _, err := rulefile.DecodeRule([]byte(`{"` + k + `": 1}`)); err == nil || !strings.Contains(err.Error(), "belongs to the store") {
			t.Errorf("%s: %v", k, err)
		}
	}
}
