package replay_test

import (
	"testing"

	"github.com/streamrules/streamrules"
)

func TestRunAppliesWhen(t *testing.T) {
	t.Parallel()
	applies := streamrules.StartsWith(`Q:`)
	rules := []streamrules.Rule{{Name: "no_x", Scope: "text", Condition: `x`, AppliesWhen: &applies, Text: "t"}}
	rep := run(t, rules, `{"chat":"c","answer":"Q: x"}
{"chat":"c","answer":"A: x"}
{"chat":"c","answer":"Q: y"}`, nil)
	r := rep.Rules[0]
	if r.InScope != 2 || r.NotApplicable != 1 || r.Fired != 1 {
		t.Errorf("%+v", r)
	}
}

// A templated fix needs the move's variables: with them the miss is repaired in place (no
// discard), without them it would be replayed live, so it counts as a discard.
func TestRunFixWithVars(t *testing.T) {
	t.Parallel()
	fix := streamrules.Fix{AppendIfMissing: "\n↩ #{{message_id}}"}
	rules := []streamrules.Rule{{Name: "reply_tail", Scope: "text", Condition: `↩ #\d+\s*$`, Negate: true, Fix: &fix, Text: "End with the tail."}}
	rep := run(t, rules, `{"chat":"c","answer":"hello","vars":{"message_id":"7"}}
{"chat":"c","answer":"hi again"}`, nil)
	r := rep.Rules[0]
	if r.Fired != 2 || r.Discards != 1 {
		t.Errorf("fired %d, discards %d: want 2 and 1 (the first repaired in place)", r.Fired, r.Discards)
	}
}

// An answer that misses a rule with a fix and one without is discarded: both rules fired
// in it, as the live engine counts them (CheckAnswer names both, a retry firing each).
func TestRunFixableMissInDiscard(t *testing.T) {
	t.Parallel()
	fix := streamrules.Fix{AppendIfMissing: "\n↩ #{{message_id}}"}
	rules := []streamrules.Rule{
		{Name: "no_lorem", Scope: "text", Condition: `(?i)lorem`, Text: "No filler."},
		{Name: "reply_tail", Scope: "text", Condition: `↩ #\d+\s*$`, Negate: true, Fix: &fix, Text: "End with the tail."},
	}
	rep := run(t, rules, `{"chat":"c","answer":"lorem ipsum","vars":{"message_id":"7"}}`, nil)
	for _, r := range rep.Rules {
		if r.Fired != 1 || r.Discards != 1 {
			t.Errorf("%s: fired %d, discards %d; want 1 and 1", r.Rule, r.Fired, r.Discards)
		}
	}
}
