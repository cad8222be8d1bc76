package rulefile_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulefile"
	"github.com/streamrules/streamrules/seeds"
)

// FuzzRoundTrip: any valid rule survives export and import in both formats unchanged:
// Parse(Marshal(x)) == x.
func FuzzRoundTrip(f *testing.F) {
	f.Add("no_lorem", "text", "(?i)lorem", false, "telegram", "Never send placeholder text.", "", true, false)
	f.Add("shell", "tool:shell", `"cmd":"rm`, true, "client_ops", "It's \"our\" host: <b>not</b> yours\n\ttab", "after:3", false, true)
	f.Add("q", "text", `^\s*$`, false, "", "yes", "once", false, false)
	f.Add("x", "tool:a.b-c:d", "", false, "master", "- [x] {a: b} # c", "", true, true)
	f.Fuzz(func(t *testing.T, name, scope, cond string, negate bool, when, text, repeat string, disabled, shadow bool) {
		r := streamrules.Rule{Name: name, Scope: scope, Condition: cond, Negate: negate, Text: text, Repeat: repeat, Disabled: disabled, Shadow: shadow}
		if when != "" {
			r.When = []string{when}
		}
		r.Normalize()
		if streamrules.Validate(&r, seeds.Environments()) != nil {
			return
		}
		set := rulefile.Set{Version: 1, Rules: []streamrules.Rule{r}, Environments: seeds.Environments()}
		for _, format := range []rulefile.Format{rulefile.YAML, rulefile.JSON} {
			data, err := rulefile.Marshal(set, format)
			if err != nil {
				t.Fatal(err)
			}
			back, err := rulefile.Parse(data, seeds.Environments()...)
			if err != nil {
				t.Fatalf("%s: %v\n%s", format, err, data)
			}
			if !reflect.DeepEqual(back, set) {
				t.Fatalf("%s round trip:\n%#v\n%#v\n%s", format, set.Rules[0], back.Rules[0], data)
			}
		}
	})
}

// FuzzParse: whatever Parse accepts is valid, and exporting it and parsing the export
// gives the same set.
func FuzzParse(f *testing.F) {
	f.Add(seeds.DefaultJSON())
	f.Add([]byte(goodYAML))
	f.Add([]byte("version: 1\nrules:\n  - {name: a, scope: text, text: t, negate: false}\n"))
	f.Add([]byte(`{"version":1,"rules":[{"name":"a","scope":"text","text":"t","text":"u"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := rulefile.Parse(data, seeds.Environments()...)
		if err != nil {
			return
		}
		for _, r := range set.Rules {
			if err := streamrules.Validate(&r, seeds.Environments()); err != nil {
				t.Fatalf("Parse returned an invalid rule %+v: %v", r, err)
			}
		}
		for _, format := range []rulefile.Format{rulefile.YAML, rulefile.JSON} {
			out, err := rulefile.Marshal(set, format)
			if err != nil {
				t.Fatal(err)
			}
			back, err := rulefile.Parse(out, seeds.Environments()...)
			if err != nil || !reflect.DeepEqual(back, set) {
				t.Fatalf("%s: %v\n%+v\n%+v\n%s", format, err, set, back, out)
			}
		}
	})
}

// FuzzDecodeRule: what the strict decoder accepts, encoding/json reads the same way (the
// strict decoder only refuses more), and the rule's own JSON decodes back to it.
func FuzzDecodeRule(f *testing.F) {
	f.Add([]byte(`{"name":"a","scope":"text","text":"t"}`))
	f.Add([]byte(`{"name":"a","Scope":"text","text":"t","text":"u"}`))
	f.Add([]byte(`{"name":"a","scope":"tool:x","when":["telegram"],"negate":true,"enabled":false,"shadow":true,"text":"\ud800"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := rulefile.DecodeRule(data)
		if err != nil {
			return
		}
		var lenient streamrules.Rule
		if err := json.Unmarshal(data, &lenient); err != nil || !reflect.DeepEqual(lenient, r) {
			t.Fatalf("strict %#v\nlenient %#v (%v)", r, lenient, err)
		}
		out, err := rulefile.MarshalRule(r, rulefile.JSON)
		if err != nil {
			t.Fatal(err)
		}
		back, err := rulefile.DecodeRule(out)
		if r.When == nil {
			r.When = []string{}
		}
		if err != nil || !reflect.DeepEqual(back, r) {
			t.Fatalf("%v\n%#v\n%#v\n%s", err, r, back, out)
		}
	})
}

// FuzzParseBounded: the YAML and JSON readers cost at most linearly in the input. An
// alias repeats a subtree and nesting takes the parser's tree quadratic, so a small input
// that allocates much more than its size is a bomb that got through; one that Parse
// accepts holds no anchor or alias.
func FuzzParseBounded(f *testing.F) {
	f.Add([]byte(aliasBomb()))
	f.Add([]byte("version: 1\nrules:\n  - &r {name: a, scope: text, text: t}\n  - *r\n"))
	f.Add([]byte("version: 1\nrules:\n  - <<: {name: a}\n    scope: text\n    text: t\n"))
	f.Add([]byte("version: 1\nrules: " + strings.Repeat("[", 200) + "\n"))
	f.Add([]byte("version: 1\nrules:\n" + strings.Repeat("- ", 200) + "x\n"))
	f.Add([]byte("version: 1\nrules:\n- name: a\n  scope: text\n  text: t\n  predicate:\n    any_of:\n    - not_:\n        any_of:\n        - max_chars: 3\n"))
	f.Add([]byte(`{"version":1,"rules":[{"name":"a","scope":"text","text":"t","when":` + strings.Repeat("[", 200) + `]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var set rulefile.Set
		var err error
		n := allocated(func() { set, err = rulefile.Parse(data, seeds.Environments()...) })
		if limit := uint64(4<<20 + 2048*len(data)); n > limit {
			t.Fatalf("%d bytes in allocated %d bytes (more than %d): %v", len(data), n, limit, err)
		}
		if err != nil {
			return
		}
		if len(set.Rules) > 0 && (bytes.Contains(data, []byte("*")) || bytes.Contains(data, []byte("&"))) {
			// An accepted file may hold '*' and '&' in strings only: export writes it back
			// without them as YAML syntax, and it parses to the same set.
			out, err := rulefile.Marshal(set, rulefile.YAML)
			if err != nil {
				t.Fatal(err)
			}
			if back, err := rulefile.Parse(out, seeds.Environments()...); err != nil || !reflect.DeepEqual(back, set) {
				t.Fatalf("%v\n%s", err, out)
			}
		}
	})
}
