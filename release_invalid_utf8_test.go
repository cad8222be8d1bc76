package streamrules_test

import (
	"context"
	"testing"

	"github.com/streamrules/streamrules"
)

// TestReleaseShortInvalidUTF8: a first chunk of a few stray continuation bytes is held or
// released like any other text, never read past its start.
func TestReleaseShortInvalidUTF8(t *testing.T) {
	t.Parallel()
	sign := streamrules.Rule{Name: "signed", Scope: "text", Mode: streamrules.ModeInterrupt, Negate: true,
		Condition: `signed$`, Text: "End with your signature.", Fix: &streamrules.Fix{AppendIfMissing: " -- signed"}}
	for _, chunk := range []string{"\x80", "\x80\x80", "\xbf\xbf\xbf"} {
		_, m := quietEngine(t, nil, sign).BeginMove(context.Background(), "c")
		if final := m.HeldScanner().Release([]byte(chunk)); len(final) > len(chunk) {
			t.Errorf("Release(%q) = %q", chunk, final)
		}
	}
}
