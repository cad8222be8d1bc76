package enginetest_test

import (
	"context"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/enginetest"
	"github.com/streamrules/streamrules/internal/testlog"
)

var shellNote = streamrules.Rule{Name: "shell_note", Scope: "tool:shell", Text: "Mind the shell."}

// TestWithRulesReminds: the engine runs on the rules given, logs to a Logger given in
// cfg, and leaves cfg as it was.
func TestWithRulesReminds(t *testing.T) {
	log, buf := testlog.New()
	cfg := &streamrules.Config{Logger: log, MaxRetriesPerMove: 2}
	eng := enginetest.WithRules(t, cfg, shellNote)
	ctx, m := eng.BeginMove(context.Background(), "c1")
	rs := m.ToolReminders(ctx, "shell", "ls")
	if err := m.End(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Rule != shellNote.Name {
		t.Fatalf("reminders %+v, want one of %s", rs, shellNote.Name)
	}
	if buf.String() == "" {
		t.Error("nothing logged to the Logger given")
	}
	if cfg.Logger != log || cfg.MaxRetriesPerMove != 2 {
		t.Errorf("cfg changed: %+v", cfg)
	}
}

// TestNewQuietConfigUntouched: with no Logger the engine is quiet, and cfg keeps its nil
// Logger.
func TestNewQuietConfigUntouched(t *testing.T) {
	cfg := &streamrules.Config{}
	eng := enginetest.New(t, enginetest.Store(t, shellNote), cfg)
	if cfg.Logger != nil {
		t.Error("New set cfg.Logger")
	}
	eng.Close() // the cleanup closes it again
}
