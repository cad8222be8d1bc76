package streamrules

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// firedOnly prints the stats as {rule fired} pairs.
func firedOnly(s Stats) string {
	out := make([]string, len(s.Rules))
	for i, r := range s.Rules {
		out[i] = fmt.Sprintf("{%s %d}", r.Rule, r.Fired)
	}
	return "[" + strings.Join(out, " ") + "]"
}

func TestStats(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{softRule("b_soft", "shell", ""), textRule("a_text", "bad"), softRule("c_quiet", "nothing", "")}, nil)
	ctx := context.Background()
	stats, err := f.eng.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := firedOnly(stats); got != "[{a_text 0} {b_soft 0} {c_quiet 0}]" {
		t.Fatalf("fresh stats %s, want every loaded rule with zero", got)
	}
	for i := 0; i < 3; i++ {
		c, m := f.eng.BeginMove(ctx, fmt.Sprint("chat", i))
		m.ToolReminders(c, "shell", "{}")
		if i < 2 {
			m.CheckAnswer(c, "bad")
		}
		if err := m.End(c, nil); err != nil {
			t.Fatal(err)
		}
	}
	stats, _ = f.eng.Stats(ctx)
	if got := firedOnly(stats); got != "[{a_text 2} {b_soft 3} {c_quiet 0}]" {
		t.Fatalf("stats %s", got)
	}
	// Deleting a rule drops it from the list, not its history.
	if err := f.store.DeleteRule(ctx, "b_soft"); err != nil {
		t.Fatal(err)
	}
	stats, _ = f.eng.Stats(ctx)
	if got := firedOnly(stats); got != "[{a_text 2} {c_quiet 0}]" {
		t.Fatalf("stats after delete %s", got)
	}
	if counts, _ := f.store.CountFirings(ctx); counts["b_soft"] != 3 {
		t.Fatalf("firings of a deleted rule: %v", counts)
	}
	// Counting goes on: the other rules, and the rule brought back, keep their history.
	c, m := f.eng.BeginMove(ctx, "chat9")
	m.CheckAnswer(c, "bad")
	_ = m.End(c, nil)
	if _, err := f.store.CreateRule(ctx, softRule("b_soft", "shell", "")); err != nil {
		t.Fatal(err)
	}
	stats, _ = f.eng.Stats(ctx)
	if got := firedOnly(stats); got != "[{a_text 3} {b_soft 3} {c_quiet 0}]" {
		t.Fatalf("stats after re-create %s", got)
	}
}

func TestStatsNeedsAFiringCounter(t *testing.T) {
	t.Parallel()
	mem, _ := NewMemoryStore(nil, testEnvs...)
	f := newFixtureOn(t, plainStore{mem}, mem, nil)
	if _, err := f.eng.Stats(context.Background()); err == nil {
		t.Fatal("Stats on a store that cannot count succeeded")
	}
}
