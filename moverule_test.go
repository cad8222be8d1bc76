package streamrules

import (
	"context"
	"log/slog"
	"testing"
)

// TestMoveRule: a move answers with the rule as its rule set has it, a copy the caller
// may change, and ok false for a name it does not hold.
func TestMoveRule(t *testing.T) {
	t.Parallel()
	store, err := NewMemoryStore([]Rule{{Name: "sev", Scope: "text", Condition: "x", Text: "t", Severity: "high", When: []string{envTelegram}}}, testEnvs...)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := New(context.Background(), store, &Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	_, m := eng.BeginMove(context.Background(), "c")
	r, ok := m.Rule("sev")
	if !ok || r.Severity != "high" || r.Text != "t" || len(r.When) != 1 {
		t.Fatalf("Rule: %+v, %v", r, ok)
	}
	r.When[0] = "changed"
	if again, _ := m.Rule("sev"); again.When[0] != envTelegram {
		t.Errorf("the caller's copy changed the rule set: %v", again.When)
	}
	if _, ok := m.Rule("missing"); ok {
		t.Error("a missing rule was found")
	}
}
