package shellcmd_test

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

// TestUnreadableRefusedByGate: a value the parser cannot read (here an unclosed quote) is
// refused by a shell gate, which says why, with one debug log line; a reminder judges
// it raw. A readable one is judged per command.
func TestUnreadableRefusedByGate(t *testing.T) {
	t.Parallel()
	gate := streamrules.Rule{Name: "no_forced_rm", Scope: "tool:shell", Mode: streamrules.ModeInterrupt, Shell: true,
		Condition: `^rm -r -f\b`, Text: "No forced recursive rm."}
	remind := streamrules.Rule{Name: "say_rm", Scope: "tool:shell", Shell: true, Condition: `^rm -rf\b`, Text: "You ran rm."}
	store, err := streamrules.NewMemoryStore([]streamrules.Rule{gate, remind}, seeds.Environments()...)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var outcomes []streamrules.Outcome
	eng, err := streamrules.New(context.Background(), store, &streamrules.Config{
		Logger:    slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		OnOutcome: func(_ context.Context, f streamrules.Firing) { outcomes = append(outcomes, f.Outcome) }})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx, m := eng.BeginMove(context.Background(), "c")
	rem := m.GateCall(ctx, "shell", `true "unclosed`)
	if len(rem) != 1 || rem[0].Rule != "no_forced_rm" || !strings.Contains(rem[0].Text, streamrules.UnreadableLead) {
		t.Errorf("an unreadable value was not refused as unreadable: %v", rem)
	}
	if n := strings.Count(logs.String(), "shell value not readable"); n != 1 {
		t.Errorf("%d debug lines, want 1:\n%s", n, logs.String())
	}
	if rem := m.GateCall(ctx, "shell", `rm -rf /srv`); len(rem) != 1 || strings.Contains(rem[0].Text, streamrules.UnreadableLead) {
		t.Errorf("a readable forced rm was not refused as a plain match: %v", rem)
	}
	if rem := m.GateCall(ctx, "shell", `ls /srv`); rem != nil {
		t.Errorf("a readable ls was refused: %v", rem)
	}
	// The reminder judges the unreadable value raw: its raw-text condition fires.
	if rem := m.ToolReminders(ctx, "shell", `rm -rf /x "unclosed`); len(rem) != 1 || rem[0].Rule != "say_rm" {
		t.Errorf("the reminder did not judge the raw value: %v", rem)
	}
	m.End(ctx, nil)
	if !slices.Contains(outcomes, streamrules.OutcomeUnreadable) || !slices.Contains(outcomes, streamrules.OutcomeRefused) {
		t.Errorf("outcomes %v, want refused_unreadable and refused", outcomes)
	}
}
