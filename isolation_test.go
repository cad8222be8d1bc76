package streamrules

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// Rules that pass as written and fail as the engine compiles them (anchored):
// `e\w{20}\w{0,10}` runs as `e\w{20}` (its right edge is cut), whose DFA pruned by
// simulation is small (the copy that read the most \w covers the others), anchored at the
// end as `e\w{20}\w{0,10}\z`, whose DFA is exponential even pruned (each copy needs an
// exact count before the end: none covers another) and which keeps a thread per \w
// behind every e. (`e\w{0,30}`, used before, anchored is small once simulated.) (The issue's own
// repros, `[a-z]{4,8}\.?` and `\B\D{3,6}`, failed the same way; anchored, their DFAs
// are built whole (a few hundred states at most), so they validate and cost a DFA's steps:
// TestIssueReprosValidateCheap.)
const heavyEnd = `e\w{20}\w{0,10}`

var (
	endsWithWord = Rule{Name: "ends_with_word", Scope: ScopeText, Negate: true,
		Predicate: &Predicate{EndsWithRegex: heavyEnd}, Text: "End on a word."}
	shellNotDigits = Rule{Name: "shell_not_digits", Scope: ScopeToolPrefix + "shell",
		Predicate: &Predicate{EndsWithRegex: heavyEnd}, Text: "Hm."}
)

// TestValidateChecksTheCompiledForm: the issue's repros are refused by Validate, naming
// the node, because the engine runs them anchored.
func TestValidateChecksTheCompiledForm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r     Rule
		field string
	}{
		{endsWithWord, "predicate.ends_with_regex"},
		{shellNotDigits, "predicate.ends_with_regex"},
		{with(textRule("deep", ""), func(r *Rule) {
			p := AnyOf(Contains("x"), Not(EndsWith(heavyEnd)))
			r.Predicate = &p
		}), "predicate.any_of[1].not_.ends_with_regex"},
		{with(textRule("scoped", "x"), func(r *Rule) { p := EndsWith(heavyEnd); r.AppliesWhen = &p }), "applies_when.ends_with_regex"},
	} {
		r := tc.r
		r.Normalize()
		err := Validate(&r, testEnvs)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field || !strings.Contains(ve.Reason, "as the engine runs it") {
			t.Errorf("%s: Validate = %v, want an error on %s", tc.r.Name, err, tc.field)
		}
	}
	// As written they pass: it is the anchored form that fails.
	for _, re := range []string{heavyEnd} {
		if err := checkRegex("condition", re); err != nil {
			t.Errorf("%q as written: %v", re, err)
		}
	}
	// A starts/ends regex of the maximum length stays valid: the limit is on what was written.
	long := textRule("long", "")
	p := EndsWith("a" + strings.Repeat("b", MaxConditionBytes-1))
	long.Predicate = &p
	long.Normalize()
	if err := Validate(&long, testEnvs); err != nil {
		t.Errorf("ends_with_regex of %d bytes: %v", MaxConditionBytes, err)
	}
}

// TestOneBadRuleIsSkippedAlone: each rule group (the text rules, a tool's rules, field
// rules, predicate trees and applies_when) with one member that cannot run: that member
// is skipped alone (Skipped, the load summary) and every other member still fires.
func TestOneBadRuleIsSkippedAlone(t *testing.T) {
	t.Parallel()
	tree := func(p Predicate) *Predicate { return &p }
	good := []Rule{
		textRule("text_plain", `darn`),
		with(textRule("text_negate", `(?i)thanks`), func(r *Rule) { r.Negate = true }),
		with(textRule("text_tree", ""), func(r *Rule) { r.Predicate = tree(AllOf(Contains("```"), Not(EndsWith("```\\s*")))) }),
		with(textRule("text_scoped", `sorry`), func(r *Rule) { r.AppliesWhen = tree(MinWords(2)) }),
		softRule("shell_plain", "shell", `rm\s+-rf`),
		with(softRule("shell_tree", "shell", ""), func(r *Rule) { r.Predicate = tree(AnyOf(StartsWith(`\{"cmd":"sudo`), Contains("curl"))) }),
		with(softRule("write_field", "write_file", ""), func(r *Rule) { r.Field = "content"; r.Predicate = tree(Contains("TODO")) }),
		softRule("write_plain", "write_file", `\.env`),
	}
	bad := []Rule{
		endsWithWord, // the text group
		shellNotDigits,
		with(softRule("shell_deep", "shell", ""), func(r *Rule) { r.Predicate = tree(AnyOf(Contains("x"), Not(EndsWith(heavyEnd)))) }),
		with(softRule("shell_scoped", "shell", "ls"), func(r *Rule) { r.AppliesWhen = tree(EndsWith(heavyEnd)) }),
		with(softRule("write_field_bad", "write_file", ""), func(r *Rule) { r.Field = "content"; r.Predicate = tree(EndsWith(heavyEnd)) }),
		with(textRule("text_scoped_bad", "zz"), func(r *Rule) { r.AppliesWhen = tree(EndsWith(heavyEnd)) }),
	}
	for _, b := range bad {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			st, err := NewMemoryStore(good, testEnvs...)
			if err != nil {
				t.Fatal(err)
			}
			b := b
			b.Mode = ModeForScope(b.Scope)
			st.PutRaw(b)
			f := newFixtureOn(t, st, st, nil)
			sk := f.eng.Skipped()
			if len(sk) != 1 || sk[0].Name != b.Name || sk[0].Field == "" || !strings.Contains(sk[0].Reason, "as the engine runs it") {
				t.Fatalf("Skipped() = %+v, want %s alone, with its field", sk, b.Name)
			}
			if lines := f.log.Lines("level=INFO", "stream rules loaded", "loaded=8", "skipped=1", b.Name); len(lines) != 1 {
				t.Errorf("want one summary naming %s, log:\n%s", b.Name, f.log)
			}
			if lines := f.log.Lines("level=ERROR"); len(lines) != 0 {
				t.Errorf("errors logged: %v", lines)
			}
			ctx, m := f.eng.BeginMove(context.Background(), "c-"+b.Name)
			tool := func(name, args string) []string { return reminderNames(m.ToolReminders(ctx, name, args)) }
			if got := tool("shell", `{"cmd":"rm -rf /tmp/x"}`); !slices.Equal(got, []string{"shell_plain"}) {
				t.Errorf("rm: %v, want shell_plain", got)
			}
			if got := tool("shell", `{"cmd":"sudo curl x"}`); !slices.Equal(got, []string{"shell_tree"}) {
				t.Errorf("sudo curl: %v, want shell_tree", got)
			}
			if got := tool("write_file", `{"path":"a/.env","content":"TODO: fill"}`); !slices.Equal(got, []string{"write_field", "write_plain"}) {
				t.Errorf("write_file: %v, want write_field and write_plain", got)
			}
			if got := tool("write_file", `{"path":"a.txt","content":"done 123"}`); len(got) != 0 {
				t.Errorf("clean write_file: %v, want none", got)
			}
			v := m.CheckAnswer(ctx, "Oh darn, I am sorry.\n```go\nx := 1\n```\nmore")
			if want := []string{"text_negate", "text_plain", "text_scoped", "text_tree"}; !slices.Equal(v.Rules, want) {
				t.Errorf("answer: rules %v, want %v", v.Rules, want)
			}
			_, m2 := f.eng.BeginMove(context.Background(), "c2-"+b.Name)
			if v := m2.CheckAnswer(ctx, "Thanks, all done."); len(v.Rules) != 0 {
				t.Errorf("clean answer: rules %v, want none (a skipped negate rule must not fire)", v.Rules)
			}
		})
	}
}

// TestMatcherIsolatesAPatternThatDoesNotCompile: the matcher's own last line of defence.
// A pattern that reaches it without compiling (a bug: compile skips such rules) never
// matches, and the group's other patterns keep matching.
func TestMatcherIsolatesAPatternThatDoesNotCompile(t *testing.T) {
	t.Parallel()
	logger, buf := newLogger()
	e := &Engine{log: logger}
	m := e.newTextMatcherOn([]string{"darn", anchorEnd(heavyEnd), "heck"}, analysisCache{}, nil)
	if got := m.Match("darn it, heck abc", nil); !slices.Equal(got, []int{0, 2}) {
		t.Fatalf("Match = %v, want [0 2]", got)
	}
	if lines := buf.Lines("level=ERROR", "never matches"); len(lines) != 1 {
		t.Fatalf("want one error, log:\n%s", buf)
	}
	// compiles names the field and the pattern.
	r := shellNotDigits
	err := e.compiles(&r, analysisCache{})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "predicate" || !strings.Contains(ve.Reason, `\z`) {
		t.Fatalf("compiles = %v, want an error on predicate", err)
	}
}

// TestIssueReprosValidateCheap: the issue's two repros, anchored as the engine runs them,
// have small DFAs (non-ASCII runes step by class, so no text makes them give up): they
// validate, cost a DFA's steps, and judge as regexp does.
func TestIssueReprosValidateCheap(t *testing.T) {
	t.Parallel()
	for _, r := range []Rule{
		{Name: "ends_with_word", Scope: ScopeText, Negate: true, Predicate: &Predicate{EndsWithRegex: `[a-z]{4,8}\.?`}, Text: "End on a word."},
		{Name: "shell_not_digits", Scope: ScopeToolPrefix + "shell", Predicate: &Predicate{EndsWithRegex: `\B\D{3,6}`}, Text: "Hm."},
	} {
		j := mustJudge(t, r)
		a, c, err := analyzeRegex("condition", anchorEnd(r.Predicate.EndsWithRegex))
		if err != nil || c.ns != costDFANs {
			t.Errorf("%s: %v, %.0f ns/byte; want a DFA's cost", r.Name, err, c.ns)
			continue
		}
		if w := a.WorstCase(exploreStates); !w.Complete {
			t.Errorf("%s: DFA of %d states (complete %v)", r.Name, w.States, w.Complete)
		}
		for _, text := range []string{"It ends on a word.", "It ends on 42", "中文字 word", "x"} {
			want := StatusPass
			if naiveHolds(r.Predicate, text) != r.Negate {
				want = StatusViolation
			}
			if got := j.Check(text, nil).Status; got != want {
				t.Errorf("%s on %q: %s, want %s", r.Name, text, got, want)
			}
		}
	}
}
