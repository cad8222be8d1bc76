package metrics_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/metrics"
	"github.com/streamrules/streamrules/seeds"
)

// A rule watched in shadow: the collector counts its would-fires.
func ExampleNewCollector() {
	ctx := context.Background()
	store, err := streamrules.NewMemoryStore([]streamrules.Rule{{
		Name: "no_apologies", Scope: "text", Condition: `(?i)\bsorry\b`, Text: "Do not apologise.", Shadow: true,
	}}, seeds.Environments()...)

	if err != nil {
		panic(err)
	}
	col := metrics.NewCollector(nil) // a MemoryStore has no write queue to export
	eng, err := streamrules.New(ctx, store, col.Instrument(&streamrules.Config{Logger: slog.New(slog.DiscardHandler)}))
	if err != nil {
		panic(err)
	}
	defer eng.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(col)

	mctx, move := eng.BeginMove(ctx, "chat-1")
	verdict := move.CheckAnswer(mctx, "Sorry, done.")
	fmt.Println("discard:", verdict.Discard) // shadow: the answer stays
	if err := move.End(mctx, nil); err != nil {
		panic(err)
	}

	mfs, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	var out strings.Builder
	for _, mf := range mfs {
		if mf.GetName() == "streamrules_engine_firings_total" || mf.GetName() == "streamrules_engine_rules_loaded" {
			if _, err := expfmt.MetricFamilyToText(&out, mf); err != nil {
				panic(err)
			}
		}
	}
	fmt.Print(out.String())
	// Output:
	// discard: false
	// # HELP streamrules_engine_firings_total Rule firings by rule, mode, outcome and delivery, counted when their move ends; outcome shadow is a would-fire, none a discard whose replay never came; delivery full, manifest (over the reminder budget) or none (nothing reached the model).
	// # TYPE streamrules_engine_firings_total counter
	// streamrules_engine_firings_total{delivery="none",mode="interrupt",outcome="shadow",rule="no_apologies"} 1
	// # HELP streamrules_engine_rules_loaded Rules in force: enabled and valid.
	// # TYPE streamrules_engine_rules_loaded gauge
	// streamrules_engine_rules_loaded 1
}
