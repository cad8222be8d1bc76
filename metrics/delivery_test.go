package metrics_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/metrics"
	"github.com/streamrules/streamrules/seeds"
)

// TestDeliveryLabels: under a reminder budget, the firing counter says which reminders
// went whole and which in manifest form, and the read counter which manifests were read.
func TestDeliveryLabels(t *testing.T) {
	t.Parallel()
	var rules []streamrules.Rule
	for _, name := range []string{"alpha", "bravo"} {
		rules = append(rules, streamrules.Rule{Name: name, Scope: "tool:shell", Text: name + ". " + strings.Repeat("x", 200)})
	}
	mem, err := streamrules.NewMemoryStore(rules, seeds.Environments()...)
	if err != nil {
		t.Fatal(err)
	}
	col := metrics.NewCollector(nil)
	cfg := col.Instrument(&streamrules.Config{Logger: slog.New(slog.DiscardHandler), ReminderBudget: 300})
	eng, err := streamrules.New(context.Background(), mem, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	for i := range 2 {
		ctx, m := eng.BeginMove(context.Background(), "c")
		m.ToolReminders(ctx, "shell", "{}")
		if i == 0 {
			if _, err := m.ReadRule(ctx, "bravo"); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.End(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	want := `
# HELP streamrules_engine_firings_total Rule firings by rule, mode, outcome and delivery, counted when their move ends; outcome shadow is a would-fire, none a discard whose replay never came; delivery full, manifest (over the reminder budget) or none (nothing reached the model).
# TYPE streamrules_engine_firings_total counter
streamrules_engine_firings_total{delivery="full",mode="remind",outcome="complied",rule="alpha"} 2
streamrules_engine_firings_total{delivery="manifest",mode="remind",outcome="complied",rule="bravo"} 2
# HELP streamrules_engine_manifest_reads_total Reminders delivered in manifest form that the model read with stream_rule_read in the same move, counted when the move ends.
# TYPE streamrules_engine_manifest_reads_total counter
streamrules_engine_manifest_reads_total{rule="bravo"} 1
`
	if err := testutil.CollectAndCompare(col, strings.NewReader(want), "streamrules_engine_firings_total", "streamrules_engine_manifest_reads_total"); err != nil {
		t.Fatal(err)
	}
	if problems, err := testutil.CollectAndLint(col); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %v", problems, err)
	}
}
