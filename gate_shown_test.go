package streamrules_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/internal/streamrulestest"
	"github.com/streamrules/streamrules/seeds"

	"github.com/streamrules/streamrules"
)

// TestGateShownResponse: a response whose text the client has seen in part is never
// discarded by a gate. The verdict goes on with the gate named in Refused, no retry is
// spent (a text miss later in the move still gets its replay), GateCall refuses the call
// with the refusal block, and the refusal is one firing. A gate discard whose replay is
// then shown with the call again is refused, not missed again, and records no second
// firing.
func TestGateShownResponse(t *testing.T) {
	t.Parallel()
	sorry := streamrules.Rule{Name: "no_sorry", Scope: "text", Condition: `^(?i)\s*sorry`, Text: "Do not apologise."}
	eng := quietEngine(t, nil, deploy, sorry)
	ctx := context.Background()
	prod := []streamrules.DeclaredCall{{Tool: "deploy", Input: `{"target":"prod"}`}}

	mctx, m := eng.BeginMove(ctx, "shown", seeds.EnvClientOps)
	if !m.Armed() {
		t.Fatal("the gate is not armed")
	}
	s := m.HeldScanner()
	if got := string(s.Release([]byte("Deploying to prod now, as you asked."))); got == "" {
		t.Fatal("an armed gate held the text")
	}
	v := m.CheckShownResponse(mctx, "Deploying to prod now, as you asked.", prod)
	if v.Discard || !slices.Equal(v.Refused, []string{"no_prod_deploy"}) || v.Interrupt != "" {
		t.Fatalf("verdict %+v: want the response kept, the gate refusing", v)
	}
	rem := m.GateCall(mctx, "deploy", prod[0].Input)
	if len(rem) != 1 || rem[0].Text != streamrulestest.RefusalLead+deploy.Text {
		t.Fatalf("refusal %v", rem)
	}
	if v := m.CheckAnswer(mctx, "Sorry, it did not go."); !v.Discard {
		t.Errorf("the refusal spent the move's retry: %+v", v)
	}
	if err := m.End(mctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := outcomesOf(m); strings.Count(got, "refused") != 1 {
		t.Errorf("outcomes %q, want the refusal once", got)
	}

	// Discarded unseen first; the replay is shown and declares the call again.
	eng2 := quietEngine(t, &streamrules.Config{MaxRetriesPerMove: 2}, deploy)
	mctx2, m2 := eng2.BeginMove(ctx, "replay2", seeds.EnvClientOps)
	if v := m2.CheckResponse(mctx2, "", prod); !v.Discard {
		t.Fatalf("unseen response not discarded: %+v", v)
	}
	if v := m2.CheckShownResponse(mctx2, "Deploying.", prod); v.Discard || len(v.Refused) != 1 {
		t.Fatalf("shown replay: %+v, want kept and refused with a retry still left", v)
	}
	if rem := m2.GateCall(mctx2, "deploy", prod[0].Input); len(rem) != 1 {
		t.Fatalf("refusal %v", rem)
	}
	if err := m2.End(mctx2, nil); err != nil {
		t.Fatal(err)
	}
	if got := outcomesOf(m2); got != "refused" {
		t.Errorf("outcomes %q, want one firing, refused", got)
	}
}
