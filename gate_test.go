package streamrules_test

import (
	"context"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/internal/streamrulestest"
	"github.com/streamrules/streamrules/seeds"

	"github.com/streamrules/streamrules"
)

var deploy = streamrules.Rule{Name: "no_prod_deploy", Scope: "tool:deploy", Mode: streamrules.ModeInterrupt,
	Condition: `"target":"prod"`, When: []string{seeds.EnvClientOps}, Text: "No deploys to prod while a client is on."}

// TestGateRetries: with two retries, a call declared again is discarded again (the first
// discard missed_again), then refused after the ceiling (that discard's outcome, with no
// second firing for the refusal); the gate is never silenced by having fired, its `when`
// arms it, the tool name is matched as the executor looks tools up, and a gate never
// reminds.
func TestGateRetries(t *testing.T) {
	t.Parallel()
	eng := quietEngine(t, &streamrules.Config{MaxRetriesPerMove: 2}, deploy)
	ctx := context.Background()
	prod := []streamrules.DeclaredCall{{Tool: "Deploy", Input: `{"target": "prod"}`}}

	mctx, m := eng.BeginMove(ctx, "quiet")
	if m.Armed() || m.CheckResponse(mctx, "", prod).Discard || m.GateCall(mctx, "deploy", prod[0].Input) != nil {
		t.Fatal("the gate acted outside client_ops")
	}

	mctx, m = eng.BeginMove(ctx, "ops", seeds.EnvClientOps)
	if !m.Armed() {
		t.Fatal("gatesArmed is false with a retry left")
	}
	for i := range 2 {
		if v := m.CheckResponse(mctx, "Deploying.", prod); !v.Discard || !strings.Contains(v.Interrupt, `rule="no_prod_deploy"`) {
			t.Fatalf("declaration %d not discarded: %+v", i+1, v)
		}
	}
	if m.Armed() {
		t.Error("gatesArmed with no retry left: the response need not be held")
	}
	if v := m.CheckResponse(mctx, "Deploying.", prod); v.Discard {
		t.Fatalf("discarded past the ceiling: %+v", v)
	}
	if rem := m.ToolReminders(mctx, "deploy", prod[0].Input); rem != nil {
		t.Errorf("a gate reminded: %v", rem)
	}
	for range 2 { // every matching call, not only the first
		rem := m.GateCall(mctx, "deploy", prod[0].Input)
		if len(rem) != 1 || rem[0].Text != streamrulestest.RefusalLead+deploy.Text {
			t.Fatalf("refusal %v", rem)
		}
	}
	if got := outcomesOf(m); got != "missed_again,refused,refused" {
		t.Errorf("outcomes %s, want missed_again,refused,refused (the first refusal is the discard's)", got)
	}
	calls, total := m.ToolCalls()
	if total != 3 || len(calls) != 2 || calls[0].Index != 1 || calls[0].Reminders[0].Rule != "no_prod_deploy" { // the ToolReminders call above is call 0
		t.Errorf("refused calls recorded %+v of %d", calls, total)
	}
	if v := m.CheckResponse(mctx, "", []streamrules.DeclaredCall{{Tool: "deploy", Input: `{"target":"staging"}`}}); v.Discard {
		t.Errorf("staging discarded: %+v", v)
	}
}

// TestGateValidation: a tool rule may interrupt; a text rule may not remind; shell is for
// tool rules.
func TestGateValidation(t *testing.T) {
	t.Parallel()
	ok := deploy
	ok.Normalize()
	if err := streamrules.Validate(&ok, seeds.Environments()); err != nil {
		t.Errorf("a gate: %v", err)
	}
	text := streamrules.Rule{Name: "t", Scope: "text", Mode: streamrules.ModeRemind, Text: "x"}
	if err := streamrules.Validate(&text, seeds.Environments()); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Errorf("a reminding text rule: %v", err)
	}
}
