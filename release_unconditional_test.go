package streamrules_test

import (
	"context"
	"testing"

	"github.com/streamrules/streamrules"
)

// TestReleaseHoldsForAnUnconditionalRule: a text rule without a condition fires on every
// answer, so nothing of the answer is released while it is armed.
func TestReleaseHoldsForAnUnconditionalRule(t *testing.T) {
	t.Parallel()
	always := streamrules.Rule{Name: "always", Scope: "text", Mode: streamrules.ModeInterrupt, Text: "Think again."}
	_, m := quietEngine(t, nil, always).BeginMove(context.Background(), "c")
	if final := m.HeldScanner().Release([]byte("A whole answer that is long enough to be read.")); len(final) != 0 {
		t.Errorf("released %q under a rule that fires on every answer", final)
	}
}
