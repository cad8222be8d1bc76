package rulesdb_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulesdb"
)

// TestOnceGateAcrossReplicas: a `once` gate (a tool rule in mode interrupt) is claimed
// like the other repeat-limited rules (claim.go, gate.go). Two replicas (two stores, two
// engines) on one database judge a response of the same chat declaring a prod deploy at
// the same moment: exactly one discards it, 100 of 100; that one still refuses the call
// after the ceiling, the other lets it run, and a later move of the chat is not gated.
func TestOnceGateAcrossReplicas(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		a := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
		createRules(t, a, []streamrules.Rule{{Name: "once_deploy_gate", Scope: "tool:deploy", Mode: streamrules.ModeInterrupt,
			Condition: `"target":"prod"`, Repeat: "once", Text: "Ask before the first prod deploy."}})
		b := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
		engines := []*streamrules.Engine{newEngine(t, a, nil), newEngine(t, b, nil)}
		prod := []streamrules.DeclaredCall{{Tool: "deploy", Input: `{"target":"prod"}`}}
		for trial := range 100 {
			chat := fmt.Sprintf("gate-%d", trial)
			ctxs, moves := make([]context.Context, 2), make([]*streamrules.Move, 2)
			for i, e := range engines {
				ctxs[i], moves[i] = e.BeginMove(ctx, chat)
			}
			got := make([]bool, 2)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, m := range moves {
				wg.Go(func() { <-start; got[i] = m.CheckResponse(ctxs[i], "Deploying.", prod).Discard })
			}
			close(start)
			wg.Wait()
			if got[0] == got[1] {
				t.Fatalf("trial %d: discarded %v: want exactly one replica", trial, got)
			}
			for i, m := range moves {
				if refused := m.GateCall(ctxs[i], "deploy", prod[0].Input) != nil; refused != got[i] {
					t.Fatalf("trial %d, replica %d: discarded %v, call refused after the ceiling %v", trial, i, got[i], refused)
				}
				if err := m.End(ctxs[i], nil); err != nil {
					t.Fatal(err)
				}
			}
			mctx, m := engines[trial%2].BeginMove(ctx, chat)
			if m.CheckResponse(mctx, "Deploying.", prod).Discard || m.GateCall(mctx, "deploy", prod[0].Input) != nil {
				t.Fatalf("trial %d: the once gate acted in a later move", trial)
			}
			if err := m.End(mctx, nil); err != nil {
				t.Fatal(err)
			}
		}
	})
}
