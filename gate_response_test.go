package streamrules_test

import (
	"context"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

var forcePush = streamrules.Rule{Name: "no_force_push", Scope: "tool:git", Mode: streamrules.ModeInterrupt,
	Condition: `--force`, Text: "Never force-push."}

// TestGateResponseOneBlockPerGate: a response declaring several calls that two gates match
// (one of them twice) is discarded once, with one interrupt block and one firing per gate.
func TestGateResponseOneBlockPerGate(t *testing.T) {
	t.Parallel()
	eng := quietEngine(t, nil, deploy, forcePush)
	ctx, m := eng.BeginMove(context.Background(), "ops", seeds.EnvClientOps)
	v := m.CheckResponse(ctx, "On it.", []streamrules.DeclaredCall{
		{Tool: "deploy", Input: `{"target":"prod"}`},
		{Tool: "git", Input: "push --force"},
		{Tool: "deploy", Input: `{"target":"prod","why":"again"}`},
		{Tool: "git", Input: "status"},
	})
	if !v.Discard {
		t.Fatalf("not discarded: %+v", v)
	}
	for _, name := range []string{deploy.Name, forcePush.Name} {
		if n := strings.Count(v.Interrupt, `rule="`+name+`"`); n != 1 {
			t.Errorf("%d blocks of %s in the interrupt:\n%s", n, name, v.Interrupt)
		}
	}
	if got := strings.Join(v.Rules, ","); got != "no_force_push,no_prod_deploy" {
		t.Errorf("rules %q", got)
	}
	var fired []string
	for _, f := range m.Firings() {
		fired = append(fired, f.Rule)
	}
	if got := strings.Join(fired, ","); got != "no_force_push,no_prod_deploy" {
		t.Errorf("firings %q, want one per gate", got)
	}
}

// TestGateAfterEnd: once the move has ended, a response is not judged (no discard, no
// interrupt, no firing) and a call is not refused.
func TestGateAfterEnd(t *testing.T) {
	t.Parallel()
	eng := quietEngine(t, nil, deploy)
	ctx, m := eng.BeginMove(context.Background(), "ops", seeds.EnvClientOps)
	if err := m.End(ctx, nil); err != nil {
		t.Fatal(err)
	}
	prod := `{"target":"prod"}`
	if v := m.CheckResponse(ctx, "Deploying.", []streamrules.DeclaredCall{{Tool: "deploy", Input: prod}}); v.Discard || v.Interrupt != "" || len(v.Rules) != 0 {
		t.Errorf("judged after End: %+v", v)
	}
	if m.Armed() {
		t.Error("gatesArmed after End")
	}
	if rem := m.GateCall(ctx, "deploy", prod); rem != nil {
		t.Errorf("refused after End: %v", rem)
	}
	if f := m.Firings(); len(f) != 0 {
		t.Errorf("firings after End: %+v", f)
	}
}

// TestGateAndTextMissRulesSorted: a response whose text misses a text rule and whose call a
// gate matches names both rules in the verdict, sorted, each once.
func TestGateAndTextMissRulesSorted(t *testing.T) {
	t.Parallel()
	shout := streamrules.Rule{Name: "z_no_shouting", Scope: "text", Mode: streamrules.ModeInterrupt, Condition: "DEPLOYING", Text: "Do not shout."}
	eng := quietEngine(t, nil, deploy, shout)
	ctx, m := eng.BeginMove(context.Background(), "ops", seeds.EnvClientOps)
	v := m.CheckResponse(ctx, "DEPLOYING NOW", []streamrules.DeclaredCall{{Tool: "deploy", Input: `{"target":"prod"}`}})
	if !v.Discard {
		t.Fatalf("not discarded: %+v", v)
	}
	if got := strings.Join(v.Rules, ","); got != "no_prod_deploy,z_no_shouting" {
		t.Errorf("rules %q, want no_prod_deploy,z_no_shouting", got)
	}
	if i, j := strings.Index(v.Interrupt, `rule="z_no_shouting"`), strings.Index(v.Interrupt, `rule="no_prod_deploy"`); i < 0 || j < i {
		t.Errorf("interrupt: the text rule's block, then the gate's:\n%s", v.Interrupt)
	}
}
