package ruletools_test

import (
	"context"
	"testing"

	"github.com/streamrules/streamrules/seeds"
)

// TestGateThroughTools: the master creates a gate with shell reading from the chat, the
// engine stops the matching call at once, an edit to remind takes the gate away, and
// shell on a text rule is refused with the field named.
func TestGateThroughTools(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			_, eng, tl := setup(t, st.make)
			ctx, _ := eng.BeginMove(context.Background(), "master-chat", seeds.EnvMaster)
			res := call(t, ctx, tl["stream_rule_create"], `{"name":"no_forced_rm","scope":"tool:shell","mode":"interrupt","field":"cmd","shell":true,`+
				`"condition":"^rm\\s(?:.*\\s)?-r\\s(?:.*\\s)?-f(?:\\s|$)","text":"No forced recursive rm."}`)
			if !res.OK {
				t.Fatalf("create: %+v", res)
			}
			in := `{"cmd":"x=1 sudo \"rm\" -r -f /srv"}`
			mctx, m := eng.BeginMove(context.Background(), "c1")
			if rem := m.GateCall(mctx, "shell", in); len(rem) != 1 || rem[0].Rule != "no_forced_rm" {
				t.Errorf("the created gate did not refuse: %v", rem)
			}
			if res := call(t, ctx, tl["stream_rule_edit"], `{"name":"no_forced_rm","mode":"remind"}`); !res.OK {
				t.Fatalf("edit: %+v", res)
			}
			mctx, m = eng.BeginMove(context.Background(), "c2")
			if rem := m.GateCall(mctx, "shell", in); rem != nil {
				t.Errorf("a remind rule refused: %v", rem)
			}
			if rem := m.ToolReminders(mctx, "shell", in); len(rem) != 1 {
				t.Errorf("the remind rule, still reading shell, did not remind: %v", rem)
			}
			res = call(t, ctx, tl["stream_rule_create"], `{"name":"bad_shell","scope":"text","shell":true,"text":"x"}`)
			if res.OK || res.Field != "shell" {
				t.Errorf("shell on a text rule: %+v", res)
			}
		})
	}
}
