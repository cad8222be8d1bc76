package rulesdb_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/seeds"
)

func treeRule() streamrules.Rule {
	return streamrules.Rule{
		Name:  "end_with_runnable_or_assumption",
		Scope: streamrules.ScopeText,
		Predicate: &streamrules.Predicate{AnyOf: []streamrules.Predicate{
			streamrules.EndsWith("```\\s*"), streamrules.Contains("(?i)assumption:"),
		}},
		Negate:      true,
		AppliesWhen: &streamrules.Predicate{ContainsRegex: "```python"},
		Fix:         &streamrules.Fix{AppendIfMissing: "\n\nAssumption: example inputs are valid <&>."},
		Severity:    "medium",
		Explanation: "Code responses must end in either a closing fence or an explicit assumption.",
		Text:        "End code with a closing fence or an explicit assumption.",
	}
}

// comparable drops what the store sets: id and times.
func comparable(r streamrules.Rule) streamrules.Rule {
	r.ID, r.CreatedAt, r.UpdatedAt = 0, time.Time{}, time.Time{}
	r.Normalize()
	return r
}

// TestPredicateColumnsRoundTrip: every wave-2 field is written by create and update and
// read back exactly, on both dialects.
func TestPredicateColumnsRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, nil)
		want := treeRule()
		if _, err := s.CreateRule(ctx, want); err != nil {
			t.Fatal(err)
		}
		tool := streamrules.Rule{Name: "no_todo_in_edits", Scope: "tool:patch_file", Field: "edits.new_string",
			Predicate: &streamrules.Predicate{AllOf: []streamrules.Predicate{streamrules.Contains("TODO"), streamrules.MaxChars(200)}},
			Severity:  "low", Text: "Do not leave TODOs in edits."}
		if _, err := s.CreateRule(ctx, tool); err != nil {
			t.Fatal(err)
		}
		for _, w := range []streamrules.Rule{want, tool} {
			if got := ruleNamed(t, s, w.Name); !reflect.DeepEqual(comparable(got), comparable(w)) {
				t.Errorf("read back\n%+v\nwant\n%+v", comparable(got), comparable(w))
			}
		}
		// The column holds the rule's own JSON spelling, HTML characters unescaped.
		var fix string
		if err := s.DB().Get(&fix, s.DB().Rebind(`SELECT fix FROM stream_rules WHERE name = ?`), want.Name); err != nil {
			t.Fatal(err)
		}
		if fix != `{"append_if_missing":"\n\nAssumption: example inputs are valid <&>."}` {
			t.Errorf("fix column %q", fix)
		}

		// An update replaces them, and can drop them.
		want.Predicate, want.Negate, want.AppliesWhen, want.Fix = nil, false, nil, nil
		want.Condition, want.Severity, want.Explanation = "policybot-internal", "high", ""
		if _, err := s.UpdateRule(ctx, want.Name, want); err != nil {
			t.Fatal(err)
		}
		if got := ruleNamed(t, s, want.Name); !reflect.DeepEqual(comparable(got), comparable(want)) {
			t.Errorf("after update\n%+v\nwant\n%+v", comparable(got), comparable(want))
		}

		// A bad tree is refused with the path of the bad node, and nothing is written.
		bad := treeRule()
		bad.Name = "bad_tree"
		bad.Predicate = &streamrules.Predicate{AllOf: []streamrules.Predicate{streamrules.Contains("a"), streamrules.EndsWith("(")}}
		_, err := s.CreateRule(ctx, bad)
		var ve *streamrules.ValidationError
		if !errors.As(err, &ve) || ve.Field != "predicate.all_of[1].ends_with_regex" {
			t.Errorf("CreateRule(bad tree) = %v, want a ValidationError on predicate.all_of[1].ends_with_regex", err)
		}
	})
}

// TestHandEditedPredicateColumns: a column that is not its type's JSON makes the row
// unreadable (skipped with a warning); a tree that reads but does not validate reaches the
// engine, which skips it naming the node. Every other rule still loads.
func TestHandEditedPredicateColumns(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		log, buf := capture()
		s := open(t, dsn, &rulesdb.Config{Logger: log})
		for _, name := range []string{"a_typo", "b_bad_regex", "c_good"} {
			r := treeRule()
			r.Name = name
			if _, err := s.CreateRule(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		mustExec(t, s, `UPDATE stream_rules SET predicate = ? WHERE name = ?`, `{"any_off": []}`, "a_typo")
		mustExec(t, s, `UPDATE stream_rules SET applies_when = ? WHERE name = ?`, `{"not_": {"contains_regex": "(x"}}`, "b_bad_regex")
		rules, err := s.LoadRules(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(names(rules), ","); got != "b_bad_regex,c_good" {
			t.Errorf("loaded %s, want the unreadable row skipped", got)
		}
		if lines := buf.Lines("unreadable row", "rule=a_typo", "predicate"); len(lines) != 1 {
			t.Errorf("want one warning naming the row and column, log:\n%s", buf)
		}
		eng := newEngine(t, s, log)
		if got := names(eng.Rules()); strings.Join(got, ",") != "c_good" {
			t.Errorf("engine loaded %v", got)
		}
		if lines := buf.Lines("bad rule in store", "rule=b_bad_regex", "applies_when.not_.contains_regex"); len(lines) != 1 {
			t.Errorf("want one warning naming the bad node, log:\n%s", buf)
		}
	})
}

// TestFiringDiffStored: a fixed firing's diff goes to stream_rule_stat.diff and back, and
// an early cut's early and cut_at_bytes.
func TestFiringDiffStored(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, nil)
		diff := streamrules.Diff("Here: ![a](http://x/a.png)", "Here: http://x/a.png\n\n↩ #4")
		rec := streamrules.MoveRecord{ChatID: "c", Move: 1, Answered: true, Firings: []streamrules.Firing{
			{Rule: "telegram_markdown_image", Mode: streamrules.ModeInterrupt, Outcome: streamrules.OutcomeFixed, Diff: diff},
			{Rule: "other", Mode: streamrules.ModeInterrupt, Retry: true, Early: true, CutAtBytes: 517},
		}}
		if err := s.SaveMove(ctx, rec); err != nil {
			t.Fatal(err)
		}
		got, err := s.Firings(ctx, "c")
		if err != nil || len(got) != 2 {
			t.Fatalf("firings %+v %v", got, err)
		}
		if !reflect.DeepEqual(got[0].Diff, diff) || got[1].Diff != nil {
			t.Errorf("diffs read back %+v and %+v, want %+v and none", got[0].Diff, got[1].Diff, diff)
		}
		// Migration 0006: an early cut and where it fell.
		if got[0].Early || got[0].CutAtBytes != 0 || !got[1].Early || got[1].CutAtBytes != 517 {
			t.Errorf("early read back %v/%d and %v/%d, want false/0 and true/517", got[0].Early, got[0].CutAtBytes, got[1].Early, got[1].CutAtBytes)
		}
	})
}

// TestSeedAddsFixes: the shipped set over a database seeded with version 1 of the seeds
// (before rules had fixes) gives the untouched telegram_reply_tail its fix and leaves the
// master's edited telegram_markdown_image alone, fix-less.
func TestSeedAddsFixes(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		v2 := defaultSeeds(t)
		if v2.Version < 2 {
			t.Fatalf("shipped seed version %d, want 2 or more", v2.Version)
		}
		v1 := seeds.Set{Version: 1}
		for _, r := range v2.Rules {
			r.Fix = nil // version 1 had no fixes
			v1.Rules = append(v1.Rules, r)
		}
		s := open(t, dsn, &rulesdb.Config{Seed: &v1})
		edited := ruleNamed(t, s, "telegram_markdown_image")
		edited.Text = "No markdown images in Telegram. (master's words)"
		if _, err := s.UpdateRule(ctx, edited.Name, edited); err != nil {
			t.Fatal(err)
		}
		rep, err := s.Seed(ctx, v2)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Applied || strings.Join(rep.Kept, ",") != "telegram_markdown_image" || len(rep.Updated) != len(v2.Rules)-1 {
			t.Errorf("report %+v", rep)
		}
		tail := ruleNamed(t, s, "telegram_reply_tail")
		if tail.Fix == nil || tail.Fix.AppendIfMissing != "\n\n↩ #{{message_id}}" {
			t.Errorf("telegram_reply_tail fix %+v", tail.Fix)
		}
		if img := ruleNamed(t, s, "telegram_markdown_image"); img.Fix != nil || img.Text != edited.Text {
			t.Errorf("the master's edit was touched: %+v", img)
		}
		want, _ := v2.Rule("telegram_markdown_image")
		if want.Fix == nil || want.Fix.ReplaceRegex == nil || want.Fix.ReplaceRegex.With != "$1" {
			t.Errorf("shipped telegram_markdown_image fix %+v", want.Fix)
		}
	})
}

// TestSeedAddsToolRecordRules: the shipped set (seed version 3 or later) over a database seeded
// with version 2 adds the two rules that read the move's tool record, rewrites the
// untouched seeded rules and keeps the master's edit.
func TestSeedAddsToolRecordRules(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		v3 := defaultSeeds(t)
		if v3.Version < 3 {
			t.Fatalf("shipped seed version %d, want 3 or later", v3.Version)
		}
		v2 := seeds.Set{Version: 2}
		for _, r := range v3.Rules {
			if r.Name != "unbacked_tool_claim" && r.Name != "verify_before_done" {
				v2.Rules = append(v2.Rules, r)
			}
		}
		s := open(t, dsn, &rulesdb.Config{Seed: &v2})
		edited := ruleNamed(t, s, "telegram_reply_tail")
		edited.Text = "The tail, always. (master's words)"
		if _, err := s.UpdateRule(ctx, edited.Name, edited); err != nil {
			t.Fatal(err)
		}
		rep, err := s.Seed(ctx, v3)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(rep.Added)
		if !rep.Applied || strings.Join(rep.Added, ",") != "unbacked_tool_claim,verify_before_done" ||
			strings.Join(rep.Kept, ",") != "telegram_reply_tail" || len(rep.Updated) != len(v2.Rules)-1 {
			t.Errorf("report %+v", rep)
		}
		claim := ruleNamed(t, s, "unbacked_tool_claim")
		if claim.Predicate == nil || claim.Predicate.AllOf[1].Not.ToolSucceeded != "generate_speech" || claim.Fix == nil || claim.Fix.ReplaceRegex == nil {
			t.Errorf("unbacked_tool_claim read back as %+v", claim)
		}
		done := ruleNamed(t, s, "verify_before_done")
		if done.Predicate == nil || done.Predicate.AllOf[1].EditedUnchecked == nil ||
			strings.Join(done.Predicate.AllOf[1].EditedUnchecked.Checks, ",") != "run_tests" {
			t.Errorf("verify_before_done read back as %+v", done)
		}
		if got := ruleNamed(t, s, "telegram_reply_tail"); got.Text != edited.Text {
			t.Errorf("the master's edit was touched: %q", got.Text)
		}
	})
}
