package streamrules

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestBlankRepairIsNoRepair: a replace_regex that leaves nothing of the answer does not
// count as a fix. The draft is discarded with the rule's interrupt, nothing is sent as
// "fixed", and the firing is a correction, not a repair.
func TestBlankRepairIsNoRepair(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	wipe := with(textRule("no_secret", `SECRET`), func(r *Rule) {
		r.Fix = &Fix{ReplaceRegex: &ReplaceRegex{Pattern: `(?s).*SECRET.*`, With: " "}}
	})
	f := newFixture(t, []Rule{wipe}, nil)
	_, m := f.eng.BeginMove(ctx, "c")
	v := m.CheckAnswer(ctx, "the SECRET is 42")
	if !v.Discard || v.Fixed != "" || !slices.Equal(v.Rules, []string{"no_secret"}) || !strings.Contains(v.Interrupt, `rule="no_secret"`) {
		t.Fatalf("a blanking fix: verdict %+v, want the draft discarded with the rule's interrupt", v)
	}
	for _, fr := range m.Firings() {
		if fr.Outcome == OutcomeFixed {
			t.Errorf("firing %+v: a blank repair recorded as fixed", fr)
		}
	}
}

// TestRepairThatCuresNothingIsDropped: a fix that leaves its own rule broken and breaks
// another is thrown away: the interrupt names only the rule the draft broke, never one
// that only the failed repair broke.
func TestRepairThatCuresNothingIsDropped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lorem := with(textRule("no_lorem", `(?i)lorem`), func(r *Rule) {
		r.Fix = &Fix{ReplaceRegex: &ReplaceRegex{Pattern: `lorem`, With: "Lorem ipsum"}}
	})
	f := newFixture(t, []Rule{lorem, textRule("no_ipsum", `ipsum`)}, nil)
	_, m := f.eng.BeginMove(ctx, "c")
	v := m.CheckAnswer(ctx, "lorem")
	if !v.Discard || v.Fixed != "" || !slices.Equal(v.Rules, []string{"no_lorem"}) {
		t.Fatalf("verdict %+v, want the draft discarded for no_lorem alone", v)
	}
	if strings.Contains(v.Interrupt, "no_ipsum") || !strings.Contains(v.Interrupt, `rule="no_lorem"`) {
		t.Errorf("interrupt %q names a rule the draft never broke", v.Interrupt)
	}
	var rules []string
	for _, fr := range m.Firings() {
		rules = append(rules, fr.Rule)
	}
	if !slices.Equal(rules, []string{"no_lorem"}) {
		t.Errorf("firings of %v, want no_lorem only", rules)
	}
}

// TestJudgeFixThatChangesNothing: Judge.Fix says no when the fix leaves the text as it
// was (the tail is there already) or lacks a variable; yes, with the diff, otherwise.
func TestJudgeFixThatChangesNothing(t *testing.T) {
	t.Parallel()
	j := mustJudge(t, tailRule())
	vars := map[string]string{"message_id": "42"}
	done := "Hello.\n\n↩ #42"
	if fixed, diff, ok := j.Fix(done, vars); ok || fixed != done || diff != nil {
		t.Errorf("Fix(%q) = %q, %v, %v; want the text back, no diff, not ok", done, fixed, diff, ok)
	}
	if fixed, diff, ok := j.Fix("Hello.", nil); ok || fixed != "Hello." || diff != nil {
		t.Errorf("Fix without its variable = %q, %v, %v; want not ok", fixed, diff, ok)
	}
	if fixed, diff, ok := j.Fix("Hello.", vars); !ok || fixed != done || len(diff) == 0 {
		t.Errorf("Fix(%q) = %q, %v, %v; want %q with a diff", "Hello.", fixed, diff, ok, done)
	}
}

// TestFixLengthLimitIsInclusive: a fix's text may be exactly MaxFixChars characters
// (counted as characters, not bytes), in each of the three operations; one more is refused.
func TestFixLengthLimitIsInclusive(t *testing.T) {
	t.Parallel()
	for _, n := range []int{MaxFixChars, MaxFixChars + 1} {
		text := strings.Repeat("é", n) // two bytes each: the limit counts characters
		tests := []struct {
			name, field string
			fix         Fix
		}{
			{"append", "fix.append_if_missing", Fix{AppendIfMissing: text}},
			{"prepend", "fix.prepend_if_missing", Fix{PrependIfMissing: text}},
			{"replace", "fix.replace_regex.with", Fix{ReplaceRegex: &ReplaceRegex{Pattern: `x`, With: text}}},
		}
		for _, tt := range tests {
			r := with(textRule("r", `x`), func(r *Rule) { r.Fix = &tt.fix })
			_, err := NewJudge(r, testEnvs...)
			var ve *ValidationError
			switch {
			case n == MaxFixChars && err != nil:
				t.Errorf("%s of exactly %d characters refused: %v", tt.name, n, err)
			case n > MaxFixChars && (!errors.As(err, &ve) || ve.Field != tt.field):
				t.Errorf("%s of %d characters: err %v, want a ValidationError on %s", tt.name, n, err, tt.field)
			}
		}
	}
}
