package main

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

const (
	pass = streamrules.StatusPass
	viol = streamrules.StatusViolation
	na   = streamrules.StatusNotApplicable
)

func loadRules(t *testing.T) []streamrules.Rule {
	t.Helper()
	rules, err := parseRules(rulesYAML)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// TestSeedConstitution: the six rules of seed 003 and its first exercise, in our name
// form, with their severities, explanations, predicates and fixes.
func TestSeedConstitution(t *testing.T) {
	t.Parallel()
	rules := loadRules(t)
	got := map[string]string{}
	fixes := map[string]bool{}
	for _, r := range rules {
		got[r.Name] = r.Severity
		fixes[r.Name] = r.Fix != nil
		if r.Explanation == "" || r.Scope != streamrules.ScopeText || (r.Predicate == nil && r.Condition == "") {
			t.Errorf("rule %s is incomplete: %+v", r.Name, r)
		}
	}
	want := map[string]string{
		"no_empty_refusal": "medium", "end_with_runnable_or_assumption": "medium", "no_pii_in_examples": "high",
		"cite_when_asserting_fact": "low", "no_internal_library_leak": "high", "bounded_length": "low",
		"urgent_line_on_safety": "medium",
	}
	if !maps.Equal(got, want) {
		t.Errorf("rules %v, want %v", got, want)
	}
	r := rules[slices.IndexFunc(rules, func(r streamrules.Rule) bool { return r.Name == "end_with_runnable_or_assumption" })]
	if r.AppliesWhen == nil || r.AppliesWhen.ContainsRegex != "```python" || !r.Negate ||
		len(r.Predicate.AnyOf) != 2 || r.Predicate.AnyOf[0].EndsWithRegex != "```\\s*$" ||
		r.Fix.AppendIfMissing != "\n\nAssumption: example inputs are valid." {
		t.Errorf("the seed's example rule lost its shape: %+v", r)
	}
}

// TestDrafts: one draft passes, one violates and is repaired (with its diff), one is
// not applicable to the code rule (no code block). Every rule's verdict on every draft.
func TestDrafts(t *testing.T) {
	t.Parallel()
	rules := loadRules(t)
	reports, err := judge(context.Background(), rules, drafts)
	if err != nil {
		t.Fatal(err)
	}
	order := []string{"no_empty_refusal", "end_with_runnable_or_assumption", "no_pii_in_examples", "cite_when_asserting_fact", "no_internal_library_leak", "bounded_length", "urgent_line_on_safety"}
	want := [][]streamrules.Status{
		{na, pass, pass, na, pass, pass, na},
		{na, viol, pass, na, pass, pass, na},
		{na, na, pass, na, pass, pass, na},
		{na, na, pass, na, pass, pass, viol},
	}
	for i, rep := range reports {
		for k, name := range order {
			if got := rep.Statuses[name]; got != want[i][k] {
				t.Errorf("draft %d, %s: %s, want %s", i+1, name, got, want[i][k])
			}
		}
	}
	if reports[0].Fixed != "" || len(reports[0].Firings) != 0 || reports[2].Fixed != "" || len(reports[2].Firings) != 0 {
		t.Errorf("a passing draft was touched: %+v / %+v", reports[0], reports[2])
	}
	fixed := reports[1]
	wantText := drafts[1].Answer + "\n\nAssumption: example inputs are valid."
	wantDiff := []streamrules.Change{
		{Op: streamrules.ChangeAdd, NewLine: 5},
		{Op: streamrules.ChangeAdd, NewLine: 6, New: "Assumption: example inputs are valid."},
	}
	if fixed.Fixed != wantText || fixed.Discard || !reflect.DeepEqual(fixed.Diff, wantDiff) {
		t.Errorf("draft 2 repaired as %q, diff %v; want %q, %v", fixed.Fixed, fixed.Diff, wantText, wantDiff)
	}
	if len(fixed.Firings) != 1 || fixed.Firings[0].Rule != "end_with_runnable_or_assumption" ||
		fixed.Firings[0].Outcome != streamrules.OutcomeFixed || !reflect.DeepEqual(fixed.Firings[0].Diff, wantDiff) {
		t.Errorf("firings %+v", fixed.Firings)
	}
	// The repaired draft passes every rule.
	again, err := judge(context.Background(), rules, []draft{{drafts[1].Prompt, fixed.Fixed}})
	if err != nil {
		t.Fatal(err)
	}
	for name, st := range again[0].Statuses {
		if st == viol {
			t.Errorf("the repaired draft still violates %s", name)
		}
	}
}

// TestOtherRules: each remaining rule on a draft that violates it: the fixable ones are
// repaired, the others take the replay path.
func TestOtherRules(t *testing.T) {
	t.Parallel()
	rules := loadRules(t)
	long := strings.Repeat("word ", 801)
	tests := []struct {
		name, draft, rule, fixed string
	}{
		{"refusal without a next step", "I can't help with that.", "no_empty_refusal",
			"I can't help with that.\n\nInstead, tell me what you are trying to do and I will suggest another way."},
		{"an e-mail in example data", "Example: send it to ann@corp.io now.", "no_pii_in_examples", "Example: send it to [email] now."},
		{"an internal library", "Use policybot-internal for this.", "no_internal_library_leak", "Use [internal] for this."},
		{"a phone number (no fix for it)", "Call 555-123-4567.", "no_pii_in_examples", ""},
		{"an uncited claim", "According to the docs it is fast.", "cite_when_asserting_fact", ""},
		{"too long", long, "bounded_length", ""},
	}
	for _, tt := range tests {
		reps, err := judge(context.Background(), rules, []draft{{"Help me.", tt.draft}})
		if err != nil {
			t.Fatal(err)
		}
		rep := reps[0]
		if rep.Statuses[tt.rule] != viol {
			t.Errorf("%s: %s says %s", tt.name, tt.rule, rep.Statuses[tt.rule])
		}
		if rep.Fixed != tt.fixed || rep.Discard != (tt.fixed == "") {
			t.Errorf("%s: fixed %q, discard %v; want %q", tt.name, rep.Fixed, rep.Discard, tt.fixed)
		}
	}
	cited, err := judge(context.Background(), rules, []draft{{"Is it fast?", "According to the docs (docs.python.org) it is fast."}})
	if err != nil {
		t.Fatal(err)
	}
	if st := cited[0].Statuses["cite_when_asserting_fact"]; st != pass {
		t.Errorf("a cited claim: %s", st)
	}
}

// TestSafetyExercise: the seed's first exercise. A safety question's answer gets the
// urgent line appended in place; an answer that has it, or a question that is not about
// safety, is left alone; without the message the rule is not applicable, never a pass.
func TestSafetyExercise(t *testing.T) {
	t.Parallel()
	rules := loadRules(t)
	reps, err := judge(context.Background(), rules, []draft{
		{"What safety gear do I need for welding?", "A helmet, gloves and boots."},
		{"Safety first: is bleach with ammonia ok?", "No, never mix them. If this is urgent, call poison control."},
		{"What is the weather in Oslo?", "Cold and clear."},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "A helmet, gloves and boots.\n\nIf this is urgent, call your local emergency number now."
	if reps[0].Fixed != want || len(reps[0].Firings) != 1 || reps[0].Firings[0].Outcome != streamrules.OutcomeFixed {
		t.Errorf("safety question: fixed %q, firings %+v", reps[0].Fixed, reps[0].Firings)
	}
	for i, st := range []streamrules.Status{pass, na} {
		rep := reps[i+1]
		if rep.Statuses["urgent_line_on_safety"] != st || rep.Fixed != "" || len(rep.Firings) != 0 {
			t.Errorf("draft %d: %s, fixed %q, firings %v; want %s and untouched", i+2, rep.Statuses["urgent_line_on_safety"], rep.Fixed, rep.Firings, st)
		}
	}
	r := rules[slices.IndexFunc(rules, func(r streamrules.Rule) bool { return r.Name == "urgent_line_on_safety" })]
	j, err := streamrules.NewJudge(r, seeds.Environments()...)
	if err != nil {
		t.Fatal(err)
	}
	if got := j.Check("A helmet.", nil).Status; got != na {
		t.Errorf("without the message: %s, want not_applicable", got)
	}
}

// TestBadConstitution: a bad node is refused with the rule and the path of the node.
func TestBadConstitution(t *testing.T) {
	t.Parallel()
	bad := strings.Replace(string(rulesYAML), `- ends_with_regex: "`+"```"+`\\s*$"`, `- ends_with_regex: "(unclosed"`, 1)
	_, err := parseRules([]byte(bad))
	var ve *streamrules.ValidationError
	if !errors.As(err, &ve) || ve.Field != "predicate.any_of[0].ends_with_regex" ||
		!strings.Contains(err.Error(), `rule #2 "end_with_runnable_or_assumption"`) {
		t.Errorf("parseRules(bad) = %v", err)
	}
}
