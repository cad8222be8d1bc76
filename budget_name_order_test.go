package streamrules_test

import (
	"context"
	"testing"

	"github.com/streamrules/streamrules"
)

// TestBudgetFitsNameOrder: under a reminder budget that everything fits, a call's
// reminders are whole and in rule-name order, the reminder of a text rule missed after the
// ceiling included, as without a budget.
func TestBudgetFitsNameOrder(t *testing.T) {
	t.Parallel()
	hard := streamrules.Rule{Name: "a_hard", Scope: "text", Mode: streamrules.ModeInterrupt, Condition: "bad", Text: "Never say bad."}
	soft := streamrules.Rule{Name: "b_soft", Scope: "tool:shell", Mode: streamrules.ModeRemind, Text: "Mind the shell."}
	for _, budget := range []int{0, 1000} {
		eng := quietEngine(t, &streamrules.Config{ReminderBudget: budget, MaxRetriesPerMove: -1}, soft, hard)
		ctx, m := eng.BeginMove(context.Background(), "c")
		if v := m.CheckAnswer(ctx, "bad"); v.Discard {
			t.Fatalf("budget %d: discarded without retries: %+v", budget, v)
		}
		got := m.ToolReminders(ctx, "shell", "{}")
		if len(got) != 2 || got[0].Rule != "a_hard" || got[1].Rule != "b_soft" {
			t.Fatalf("budget %d: reminders %+v, want a_hard then b_soft", budget, got)
		}
		for _, r := range got {
			if r.Delivery == streamrules.DeliveryManifest {
				t.Errorf("budget %d: %s in manifest form though everything fits", budget, r.Rule)
			}
		}
	}
}
