package ruletools_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/seeds"
)

// TestPredicatesThroughTheTools: the master creates a rule with a tree, applies_when and a
// fix, sees them listed, clears the fix with null, and a bad node is refused naming it.
func TestPredicatesThroughTheTools(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			_, eng, tl := setup(t, st.make)
			ctx, _ := eng.BeginMove(context.Background(), "master-chat", seeds.EnvMaster)
			res := call(t, ctx, tl["stream_rule_create"], `{"name":"code_ends_cleanly","scope":"text",
				"applies_when":{"contains_regex":"`+"```python"+`"},
				"predicate":{"any_of":[{"ends_with_regex":"`+"```\\\\s*"+`"},{"contains_regex":"(?i)assumption:"}]},"negate":true,
				"fix":{"append_if_missing":"\n\nAssumption: inputs are valid."},"severity":"medium","explanation":"Code ends cleanly.",
				"text":"End code with a fence or an assumption."}`)
			if !res.OK || res.Rule == nil || !res.Rule.Loaded || res.Rule.Fix == nil || res.Rule.Predicate == nil ||
				res.Rule.AppliesWhen == nil || res.Rule.Severity != "medium" || res.Rule.Explanation != "Code ends cleanly." {
				t.Fatalf("create: %+v", res)
			}
			mctx, move := eng.BeginMove(context.Background(), "c")
			if v := move.CheckAnswer(mctx, "```python\nx = 1\n```\nDone."); v.Fixed != "```python\nx = 1\n```\nDone.\n\nAssumption: inputs are valid." {
				t.Errorf("the created rule does not repair: %+v", v)
			}

			// null clears the fix; absent fields stay.
			res = call(t, ctx, tl["stream_rule_edit"], `{"name":"code_ends_cleanly","fix":null}`)
			if !res.OK || res.Rule.Fix != nil || res.Rule.Predicate == nil || res.Rule.Severity != "medium" {
				t.Fatalf("edit fix:null: %+v", res)
			}

			res = call(t, ctx, tl["stream_rule_edit"], `{"name":"code_ends_cleanly","predicate":{"all_of":[{"contains_regex":"a"},{"ends_with_regex":"("}]}}`)
			if res.OK || res.Field != "predicate.all_of[1].ends_with_regex" {
				t.Errorf("bad node: %+v", res)
			}
			res = call(t, ctx, tl["stream_rule_edit"], `{"name":"code_ends_cleanly","predicate":{"contains":"a"}}`)
			if res.OK || !strings.Contains(res.Error, "contains") {
				t.Errorf("unknown predicate key: %+v", res)
			}

			// Context atoms: the master writes a rule on what the move's tools did.
			res = call(t, ctx, tl["stream_rule_create"], `{"name":"verify_first","scope":"text",
				"predicate":{"all_of":[{"contains_regex":"(?i)\\bdone\\b"},{"edited_unchecked":{"edits":["write_file"],"checks":["run_tests"]}}]},
				"text":"Run the tests before you say it is done."}`)
			if !res.OK || res.Rule == nil || !res.Rule.Loaded {
				t.Fatalf("create a context rule: %+v", res)
			}
			mctx, move = eng.BeginMove(context.Background(), "c2")
			move.ToolReminders(mctx, "write_file", `{"path":"a"}`)
			if v := move.CheckAnswer(mctx, "Done."); !v.Discard || !slices.Contains(v.Rules, "verify_first") {
				t.Errorf("the context rule does not fire after an unchecked edit: %+v", v)
			}
			res = call(t, ctx, tl["stream_rule_edit"], `{"name":"verify_first","predicate":{"all_of":[{"contains_regex":"done"},{"edited_unchecked":{"edits":["write_file"],"checks":[]}}]}}`)
			if res.OK || res.Field != "predicate.all_of[1].edited_unchecked.checks" {
				t.Errorf("empty checks: %+v", res)
			}
			res = call(t, ctx, tl["stream_rule_edit"], `{"name":"verify_first","applies_when":{"tool_called":"bad name"}}`)
			if res.OK || res.Field != "applies_when.tool_called" {
				t.Errorf("bad tool name: %+v", res)
			}
		})
	}
}
