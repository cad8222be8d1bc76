package ruletools_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

// TestTestsThroughTheTools: the master's tools carry a rule's tests: create stores them
// (the context form too), the list shows them, an edit replaces or drops them, and a bad
// example is refused naming it; the store holds what the tools said.
func TestTestsThroughTheTools(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			s, eng, tl := setup(t, st.make)
			ctx, _ := eng.BeginMove(context.Background(), "master-chat", seeds.EnvMaster)

			res := call(t, ctx, tl["stream_rule_create"], `{"name":"no_lorem","scope":"text","condition":"(?i)lorem ipsum","text":"Never send placeholder text.",`+
				`"tests":{"fires":["Lorem ipsum dolor.",{"text":"lorem IPSUM","input":"Write a draft","tools":[]}],"passes":["A real answer.","Lorem, but not ipsum."]}}`)
			input := "Write a draft"
			want := &streamrules.RuleTests{
				Fires:  []streamrules.Example{{Text: "Lorem ipsum dolor."}, {Text: "lorem IPSUM", Input: &input, Tools: []streamrules.ToolRun{}}},
				Passes: []streamrules.Example{{Text: "A real answer."}, {Text: "Lorem, but not ipsum."}},
			}
			if !res.OK || res.Rule == nil || !reflect.DeepEqual(res.Rule.Tests, want) {
				t.Fatalf("create: %+v", res)
			}
			stored, err := s.GetRule(context.Background(), "no_lorem")
			if err != nil || !reflect.DeepEqual(stored.Tests, want) {
				t.Fatalf("stored %+v, %v", stored.Tests, err)
			}
			// The list shows them on request only: a page is for the prompt.
			res = call(t, ctx, tl["stream_rule_list"], `{"name":"no_lorem","tests":true}`)
			if !res.OK || len(res.Rules) != 1 || !reflect.DeepEqual(res.Rules[0].Tests, want) {
				t.Fatalf("list with tests: %+v", res)
			}
			res = call(t, ctx, tl["stream_rule_list"], `{"name":"no_lorem"}`)
			if !res.OK || len(res.Rules) != 1 || res.Rules[0].Tests != nil {
				t.Fatalf("list: %+v", res)
			}

			// An edit replaces the tests whole, leaves them alone when it does not name them,
			// and drops them with null.
			res = call(t, ctx, tl["stream_rule_edit"], `{"name":"no_lorem","tests":{"fires":["lorem ipsum"]}}`)
			if !res.OK || !reflect.DeepEqual(res.Rule.Tests, &streamrules.RuleTests{Fires: []streamrules.Example{{Text: "lorem ipsum"}}}) {
				t.Fatalf("edit: %+v", res)
			}
			res = call(t, ctx, tl["stream_rule_edit"], `{"name":"no_lorem","text":"No placeholders."}`)
			if !res.OK || res.Rule.Tests == nil || len(res.Rule.Tests.Fires) != 1 {
				t.Fatalf("edit without tests: %+v", res.Rule)
			}
			res = call(t, ctx, tl["stream_rule_edit"], `{"name":"no_lorem","tests":null}`)
			if !res.OK || res.Rule.Tests != nil {
				t.Fatalf("edit tests null: %+v", res.Rule)
			}

			// Bad examples: the field named, nothing stored.
			for _, tt := range []struct{ tests, field string }{
				{`{"fires":["a\u0000b"]}`, "tests.fires[0].text"},
				{`{"passes":["ok",{"text":"x","input":"` + strings.Repeat("y", streamrules.MaxExampleBytes+1) + `"}]}`, "tests.passes[1].input"},
				{`{"fires":[` + strings.Repeat(`"x",`, streamrules.MaxTestExamples) + `"x"]}`, "tests.fires"},
				{`{"fires":[{"text":"x","tools":[{"tool":""}]}]}`, "tests.fires[0].tools[0].tool"},
			} {
				res = call(t, ctx, tl["stream_rule_edit"], `{"name":"no_lorem","tests":`+tt.tests+`}`)
				if res.OK || res.Field != tt.field {
					t.Errorf("edit tests %.60s: %+v, want an error on %s", tt.tests, res, tt.field)
				}
			}
			// The shape is checked as strictly as a rule's own keys, and named the same way.
			res = call(t, ctx, tl["stream_rule_edit"], `{"name":"no_lorem","tests":{"fires":[{"text":"x","tool":"y"}]}}`)
			if res.OK || res.Field != "tool" || !strings.Contains(res.Error, "known: input, text, tools") {
				t.Errorf("an example with an unknown key: %+v", res)
			}
			res = call(t, ctx, tl["stream_rule_edit"], `{"name":"no_lorem","tests":{"passes":[42]}}`)
			if res.OK || res.Field != "passes" || !strings.Contains(res.Error, "a string, or an object") {
				t.Errorf("a number for an example: %+v", res)
			}
			if r, err := s.GetRule(context.Background(), "no_lorem"); err != nil || r.Tests != nil {
				t.Errorf("after refused edits: %+v, %v", r.Tests, err)
			}
		})
	}
}
