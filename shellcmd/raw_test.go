package shellcmd_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
)

// TestUnreadableMatchedRaw: a value the parser cannot read (here an unclosed quote) is
// judged raw by a shell rule, with one debug log line; a readable one is judged per command.
func TestUnreadableMatchedRaw(t *testing.T) {
	t.Parallel()
	gate := streamrules.Rule{Name: "no_forced_rm", Scope: "tool:shell", Mode: streamrules.ModeInterrupt, Shell: true,
		Condition: `^rm -rf\b`, Text: "No forced recursive rm."}
	store, err := streamrules.NewMemoryStore([]streamrules.Rule{gate})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	eng, err := streamrules.New(context.Background(), store, &streamrules.Config{
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx, m := eng.BeginMove(context.Background(), "c")
	if rem := m.GateCall(ctx, "shell", `rm -rf /srv "unclosed`); len(rem) != 1 {
		t.Errorf("an unreadable value was not matched raw: %v", rem)
	}
	if n := strings.Count(logs.String(), "shell value not readable, matched raw"); n != 1 {
		t.Errorf("%d debug lines, want 1:\n%s", n, logs.String())
	}
	// Read, the same words are the command rm -r -f /srv: this condition (written for the
	// raw text) no longer matches, which is why conditions of shell rules are written for
	// the rendering.
	if rem := m.GateCall(ctx, "shell", `rm -rf /srv`); rem != nil {
		t.Errorf("a readable value was matched raw: %v", rem)
	}
}
