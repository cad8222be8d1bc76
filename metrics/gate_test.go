package metrics_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/metrics"
	"github.com/streamrules/streamrules/seeds"
	_ "github.com/streamrules/streamrules/shellcmd" // the shell reader: the gate reads shell
)

// TestGateOutcomes: a gate's firings are counted with their outcomes: a discard whose
// replay passes (corrected), a call refused after the ceiling (refused), a would-fire in
// shadow.
func TestGateOutcomes(t *testing.T) {
	t.Parallel()
	gate := streamrules.Rule{Name: "no_rm", Scope: "tool:shell", Mode: streamrules.ModeInterrupt, Shell: true, Field: "cmd",
		Condition: `^rm\s(?:.*\s)?-r\s(?:.*\s)?-f(?:\s|$)`, Text: "No forced recursive rm."}
	watched := gate
	watched.Name, watched.Scope, watched.Shadow = "watched_rm", "tool:sh", true
	mem, err := streamrules.NewMemoryStore([]streamrules.Rule{gate, watched}, seeds.Environments()...)
	if err != nil {
		t.Fatal(err)
	}
	col := metrics.NewCollector(nil)
	eng := newEngine(t, mem, col)
	ctx := context.Background()
	rm := []streamrules.DeclaredCall{{Tool: "shell", Input: `{"cmd":"sudo rm -rf /srv"}`}}

	mctx, m := eng.BeginMove(ctx, "c1") // discarded, then the replay only lists
	m.CheckResponse(mctx, "", rm)
	m.CheckResponse(mctx, "", []streamrules.DeclaredCall{{Tool: "shell", Input: `{"cmd":"ls /srv"}`}})
	_ = m.End(mctx, nil)

	mctx, m = eng.BeginMove(ctx, "c2") // discarded, declared again after the ceiling, refused
	m.CheckResponse(mctx, "", rm)
	m.CheckResponse(mctx, "", rm)
	if m.GateCall(mctx, "shell", rm[0].Input) == nil {
		t.Fatal("not refused after the ceiling")
	}
	if m.GateCall(mctx, "sh", rm[0].Input) != nil {
		t.Fatal("a shadowed gate refused")
	}
	_ = m.End(mctx, nil)

	want := `
# HELP streamrules_engine_firings_total Rule firings by rule, mode, outcome and delivery, counted when their move ends; outcome shadow is a would-fire, none a discard whose replay never came; delivery full, manifest (over the reminder budget) or none (nothing reached the model).
# TYPE streamrules_engine_firings_total counter
streamrules_engine_firings_total{delivery="full",mode="interrupt",outcome="corrected",rule="no_rm"} 1
streamrules_engine_firings_total{delivery="full",mode="interrupt",outcome="refused",rule="no_rm"} 1
streamrules_engine_firings_total{delivery="none",mode="interrupt",outcome="shadow",rule="watched_rm"} 1
`
	if err := testutil.CollectAndCompare(col, strings.NewReader(want), "streamrules_engine_firings_total"); err != nil {
		t.Fatal(err)
	}
	// Two responses discarded by the gate (one per move), whose answers the text rules
	// accepted: each counts once.
	discards := `
# HELP streamrules_engine_answers_discarded_total Answers (responses) a text rule or a gate discarded and whose tour was replayed.
# TYPE streamrules_engine_answers_discarded_total counter
streamrules_engine_answers_discarded_total 2
`
	if err := testutil.CollectAndCompare(col, strings.NewReader(discards), "streamrules_engine_answers_discarded_total"); err != nil {
		t.Error(err)
	}
	stats, err := eng.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stats.Rules {
		if st.Rule == "no_rm" && (st.Fired != 2 || st.Outcomes[streamrules.OutcomeRefused] != 1 || st.Outcomes[streamrules.OutcomeCorrected] != 1) {
			t.Errorf("stats %+v", st)
		}
		if st.Rule == "watched_rm" && st.Shadow != 1 {
			t.Errorf("stats %+v", st)
		}
	}
}
