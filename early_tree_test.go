package streamrules

import (
	"context"
	"strings"
	"testing"
)

// TestEarlyTree: an early rule whose condition is a tree is cut as soon as the tree is
// certain to fire, not streamed to its end (any_of of two contains_regex, the issue's
// shape); a tree that only the end can decide is left to the end, and the load says so;
// so does early on a rule with a fix.
func TestEarlyTree(t *testing.T) {
	t.Parallel()
	anyOf := AnyOf(Contains(`\bforbidden\b`), Contains(`(?i)secret`))
	tree := Rule{Name: "tree", Scope: ScopeText, Predicate: &anyOf, Text: "no", Early: true}
	notSecret := Not(Contains(`secret`))
	allOf := AllOf(StartsWith(`Dear`), notSecret)
	// all_of(starts_with, not_(contains)): the start can be certain, the not_ only at the end.
	late := Rule{Name: "late", Scope: ScopeText, Predicate: &allOf, Text: "no", Early: true}
	ends := EndsWith(`!`)
	endsOnly := Rule{Name: "ends_only", Scope: ScopeText, Predicate: &ends, Text: "no", Early: true}
	fixed := textRule("fixed", `x{3}`)
	fixed.Fix, fixed.Early = &Fix{ReplaceRegex: &ReplaceRegex{Pattern: `x{3}`, With: "y"}}, true
	// Loaded for its warning, armed in no move below: an armed fix the release does not
	// follow could still repair away what a tree matched, so it would hold the tree's cut
	// to the end (TestEarlyCutWaitsForUnfollowedFix).
	fixed.When = []string{envTelegram}
	f := newFixture(t, []Rule{tree, late, endsOnly, fixed}, nil)
	ctx := context.Background()

	_, m := f.eng.BeginMove(ctx, "c")
	s := m.EarlyScanner()
	if s == nil {
		t.Fatal("no scanner for an early tree")
	}
	text := strings.Repeat("all is well ", 10) + "but this is a SECRET " + strings.Repeat("more words ", 200)
	cut := -1
	for i := 8; i <= len(text); i += 8 {
		if v, ok := s.Scan(ctx, []byte(text[:i])); ok {
			if !v.Discard || len(v.Rules) != 1 || v.Rules[0] != "tree" {
				t.Fatalf("verdict %+v", v)
			}
			cut = i
			break
		}
	}
	if at := strings.Index(text, "SECRET") + len("SECRET"); cut < at || cut > at+earlyBatchBytes+8 {
		t.Fatalf("cut at byte %d of %d; the miss ends at %d", cut, len(text), at)
	}

	// "late" needs its not_ decided: only the end can; Scan never cuts for it.
	_, m = f.eng.BeginMove(ctx, "c2")
	s = m.EarlyScanner()
	text = "Dear all, " + strings.Repeat("nothing to see here ", 50)
	for i := 8; i <= len(text); i += 8 {
		if v, ok := s.Scan(ctx, []byte(text[:i])); ok {
			t.Fatalf("cut a tree that only the end decides: %+v", v)
		}
	}
	if v := m.CheckAnswer(ctx, text); !v.Discard || v.Rules[0] != "late" {
		t.Fatalf("at the end: %+v", v)
	}

	for _, want := range []string{"rule=ends_only", "rule=fixed"} {
		if lines := f.log.Lines("early has no effect", want); len(lines) != 1 {
			t.Errorf("want one load warning for %s, log:\n%s", want, f.log)
		}
	}
	if lines := f.log.Lines("early has no effect", "rule=tree"); len(lines) != 0 {
		t.Errorf("a tree that can be decided early was warned about: %v", lines)
	}
}
