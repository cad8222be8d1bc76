package rulefile_test

import (
	"encoding/json"
	"reflect"
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
		if streamrules.Validate(&r, nil) != nil {
			return
		}
		set := rulefile.Set{Version: 1, Rules: []streamrules.Rule{r}}
		for _, format := range []rulefile.Format{rulefile.YAML, rulefile.JSON} {
			data, err := rulefile.Marshal(set, format)
			if err != nil {
				t.Fatal(err)
			}
			back, err := rulefile.Parse(data)
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
		set, err := rulefile.Parse(data)
		if err != nil {
			return
		}
		for _, r := range set.Rules {
			if err := streamrules.Validate(&r, nil); err != nil {
				t.Fatalf("Parse returned an invalid rule %+v: %v", r, err)
			}
		}
		for _, format := range []rulefile.Format{rulefile.YAML, rulefile.JSON} {
			out, err := rulefile.Marshal(set, format)
			if err != nil {
				t.Fatal(err)
			}
			back, err := rulefile.Parse(out)
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
