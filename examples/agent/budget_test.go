package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
)

// TestReminderBudgetFromEnvironment: STREAMRULES_REMINDER_BUDGET reaches the engine (a
// variable read and not wired fails here).
func TestReminderBudgetFromEnvironment(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig(environ("STREAMRULES_DSN", "sqlite:"+filepath.Join(t.TempDir(), "b.db"),
		"STREAMRULES_REMINDER_BUDGET", "100"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ReminderBudget != 100 {
		t.Fatalf("ReminderBudget %d", cfg.ReminderBudget)
	}
	r, err := openRig(context.Background(), cfg, "b", quietLog(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	for _, name := range []string{"deploy_one", "deploy_two"} {
		if _, err := r.store.CreateRule(ctx, streamrules.Rule{Name: name, Scope: "tool:deploy", Text: name + ". " + strings.Repeat("x", 80)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.eng.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	mctx, m := r.eng.BeginMove(ctx, "b")
	got := m.ToolReminders(mctx, "deploy", "{}")
	if len(got) != 2 || got[0].Delivery != "" || got[1].Delivery != streamrules.DeliveryManifest {
		t.Fatalf("reminders %+v: want one whole and one manifest under a budget of 100", got)
	}
}
