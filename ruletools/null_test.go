package ruletools_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/seeds"
)

// nonNullable are the rule's fields whose type has no null: null in them is refused.
var nonNullable = []string{"scope", "condition", "negate", "when", "text", "mode", "repeat", "enabled", "shadow", "early", "field", "severity", "explanation"}

// TestEditRefusesNull: null is a wrong type for every field that has no null, named as
// any other, and nothing is written. Before, "condition": null cleared the condition (the
// rule then fired on everything) and "when": null its scope. A model writes null to mean
// "unchanged".
func TestEditRefusesNull(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			s, eng, tl := setup(t, st.make)
			ctx, _ := eng.BeginMove(context.Background(), "master-chat", seeds.EnvMaster)
			tests := []struct{ name, input, field string }{
				{"name", `{"name": null, "text": "t"}`, "name"},
				{"new_name", `{"name": "telegram_reply_tail", "new_name": null}`, "new_name"},
				{"a when entry", `{"name": "telegram_reply_tail", "when": ["telegram", null]}`, "when"},
				{"predicate alone", `{"name": "code_tree", "predicate": null}`, "predicate"},
			}
			for _, f := range nonNullable {
				tests = append(tests, struct{ name, input, field string }{f, `{"name": "telegram_reply_tail", "` + f + `": null}`, f})
			}
			created := call(t, ctx, tl["stream_rule_create"], `{"name":"code_tree","scope":"text","predicate":{"contains_regex":"x"},"text":"t"}`)
			if !created.OK {
				t.Fatalf("create: %+v", created)
			}
			before := snapshot(t, s)
			for _, tt := range tests {
				res := call(t, ctx, tl["stream_rule_edit"], tt.input)
				if res.OK || res.Field != tt.field || !strings.Contains(res.Error, "null") {
					t.Errorf("%s: %s: %+v; want refused, field %q", tt.name, tt.input, res, tt.field)
				}
			}
			if after := snapshot(t, s); !reflect.DeepEqual(after, before) {
				t.Errorf("a refused edit changed the rules:\n%v\n%v", before, after)
			}
			// The tree may go, with the condition that replaces it: null is a value of
			// predicate, applies_when and fix.
			res := call(t, ctx, tl["stream_rule_edit"], `{"name": "code_tree", "predicate": null, "condition": "y"}`)
			if !res.OK || res.Rule.Predicate != nil || res.Rule.Condition != "y" {
				t.Errorf("predicate null with a condition: %+v", res)
			}
		})
	}
}

// snapshot returns each stored rule's JSON by name, with its id and times.
func snapshot(t *testing.T, s editorStore) map[string]string {
	t.Helper()
	rules, err := s.ListRules(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rules {
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out[r.Name] = string(data)
	}
	return out
}

// TestCreateRefusesNull: the create tool and rule files take null the same way.
func TestCreateRefusesNull(t *testing.T) {
	t.Parallel()
	_, eng, tl := setup(t, stores[0].make)
	ctx, _ := eng.BeginMove(context.Background(), "master-chat", seeds.EnvMaster)
	for _, f := range append([]string{"name"}, nonNullable...) {
		in := map[string]any{"name": "n", "scope": "text", "text": "t"}
		in[f] = nil
		data, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if res := call(t, ctx, tl["stream_rule_create"], string(data)); res.OK || res.Field != f {
			t.Errorf("%s: %+v; want refused, field %q", data, res, f)
		}
	}
	if res := call(t, ctx, tl["stream_rule_create"], `{"name": "n", "scope": "text", "text": "t", "fix": null, "applies_when": null}`); !res.OK {
		t.Errorf("null optional trees: %+v", res)
	}
}

// TestPaddedName: a name with space around it is refused, naming the field; before,
// "ab\n" was created as "ab" without a word.
func TestPaddedName(t *testing.T) {
	t.Parallel()
	s, eng, tl := setup(t, stores[0].make)
	ctx, _ := eng.BeginMove(context.Background(), "master-chat", seeds.EnvMaster)
	for _, in := range []string{
		`{"name": "ab\n", "scope": "text", "text": "t"}`,
		`{"name": " ab", "scope": "text", "text": "t"}`,
	} {
		if res := call(t, ctx, tl["stream_rule_create"], in); res.OK || res.Field != "name" || !strings.Contains(res.Error, "around it") {
			t.Errorf("create %s: %+v", in, res)
		}
	}
	if res := call(t, ctx, tl["stream_rule_edit"], `{"name": "telegram_reply_tail", "new_name": "tail\t"}`); res.OK || res.Field != "name" {
		t.Errorf("rename to a padded name: %+v", res)
	}
	for _, name := range []string{"ab", "tail"} {
		if _, err := s.GetRule(ctx, name); err == nil {
			t.Errorf("rule %q exists", name)
		}
	}
}

// TestRefuseOtherEngine: a master's move of another engine is refused by every tool,
// and nothing is written. Before, the tools took any engine's move.
func TestRefuseOtherEngine(t *testing.T) {
	t.Parallel()
	s, _, tl := setup(t, stores[0].make)
	_, other, _ := setup(t, stores[0].make)
	ctx, _ := other.BeginMove(context.Background(), "master-chat", seeds.EnvMaster)
	before, err := s.ListRules(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]string{
		"stream_rule_list":   `{}`,
		"stream_rule_create": `{"name":"sneaky","scope":"text","condition":"x","text":"y"}`,
		"stream_rule_edit":   `{"name":"telegram_reply_tail","enabled":false}`,
		"stream_rule_delete": `{"name":"telegram_reply_tail"}`,
	} {
		if res := call(t, ctx, tl[name], in); res.OK || !strings.Contains(res.Error, "another stream rules engine") || len(res.Rules) != 0 {
			t.Errorf("%s in another engine's move: %+v", name, res)
		}
	}
	if after, _ := s.ListRules(context.Background()); !reflect.DeepEqual(before, after) {
		t.Errorf("rules changed")
	}
}
