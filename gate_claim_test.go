package streamrules_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/streamrules/streamrules"
)

// onceGate is a `once` gate on deploy: it stops prod deploys in one move of a chat.
var onceGate = streamrules.Rule{Name: "once_deploy_gate", Scope: "tool:deploy", Mode: streamrules.ModeInterrupt,
	Condition: `"target":"prod"`, Repeat: "once", Text: "Ask before the first prod deploy."}

var prodCall = []streamrules.DeclaredCall{{Tool: "deploy", Input: `{"target":"prod"}`}}

// TestGateClaimOverlappingMoves: a repeat-limited gate fires only after its claim, as the
// other repeat-limited rules (claim.go). Two moves of one chat running at once on the
// memory store, with a retry (CheckResponse discards) and without (GateCall refuses): the
// `once` gate fires in exactly one of them, 50 of 50; the winner stops every matching call
// of its move (a gate is not silenced by its own claim), the loser lets them through, and
// a later move of the chat is not gated.
func TestGateClaimOverlappingMoves(t *testing.T) {
	t.Parallel()
	for _, retries := range []int{1, -1} {
		t.Run(fmt.Sprintf("retries=%d", retries), func(t *testing.T) {
			t.Parallel()
			eng := quietEngine(t, &streamrules.Config{MaxRetriesPerMove: retries}, onceGate)
			ctx := context.Background()
			// gated fires the gate as the model wrapper (a discard) or the tool wrapper (a
			// refusal) would.
			gated := func(mctx context.Context, m *streamrules.Move) bool {
				if retries > 0 {
					return m.CheckResponse(mctx, "Deploying.", prodCall).Discard
				}
				return m.GateCall(mctx, "deploy", prodCall[0].Input) != nil
			}
			for trial := range 50 {
				chat := fmt.Sprintf("chat-%d", trial)
				ctxs, moves := make([]context.Context, 2), make([]*streamrules.Move, 2)
				for i := range moves {
					ctxs[i], moves[i] = eng.BeginMove(ctx, chat)
				}
				got := make([]bool, 2)
				var wg sync.WaitGroup
				start := make(chan struct{})
				for i := range moves {
					wg.Go(func() { <-start; got[i] = gated(ctxs[i], moves[i]) })
				}
				close(start)
				wg.Wait()
				if got[0] == got[1] {
					t.Fatalf("trial %d: gated %v: want exactly one move", trial, got)
				}
				for i, m := range moves {
					// The winner's later calls are refused still, the loser's run.
					if refused := m.GateCall(ctxs[i], "deploy", prodCall[0].Input) != nil; refused != got[i] {
						t.Fatalf("trial %d, move %d: gated %v, later call refused %v", trial, i, got[i], refused)
					}
					if err := m.End(ctxs[i], nil); err != nil {
						t.Fatal(err)
					}
				}
				mctx, m := eng.BeginMove(ctx, chat)
				if m.Armed() || gated(mctx, m) {
					t.Fatalf("trial %d: the once gate acted in a later move", trial)
				}
				_ = m.End(mctx, nil)
			}
		})
	}
}
