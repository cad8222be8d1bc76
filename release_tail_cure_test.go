package streamrules_test

import (
	"context"
	"testing"

	"github.com/streamrules/streamrules"
)

// TestReleaseTailOnlyWhenTheFixCures: a rule that must end the answer (its condition
// anchored at the end) streams as a tail only when its append fix makes the answer end right; with a fix that does not, the rule
// may still discard the answer, so nothing is released before the end.
func TestReleaseTailOnlyWhenTheFixCures(t *testing.T) {
	t.Parallel()
	text := []byte("Here is the whole answer, long enough to be read by now. ")
	for _, tt := range []struct {
		cond, add string
		released  bool
	}{
		{`signed$`, " -- signed", true},
		{`signed$`, " -- bye", false},
		// Not anchored at the end: the answer may say it anywhere, so the rule is watched.
		{`signed`, " -- signed", false},
		{`sign(ed)?`, " -- signed", false},
	} {
		sign := streamrules.Rule{Name: "signed", Scope: "text", Mode: streamrules.ModeInterrupt, Negate: true,
			Condition: tt.cond, Text: "End with your signature.", Fix: &streamrules.Fix{AppendIfMissing: tt.add}}
		eng := quietEngine(t, nil, sign)
		_, m := eng.BeginMove(context.Background(), "c")
		final := m.HeldScanner().Release(text)
		if got := len(final) > 0; got != tt.released {
			t.Errorf("condition %q, fix %q: released %q", tt.cond, tt.add, final)
		}
	}
}
