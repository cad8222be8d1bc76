package main

import (
	"context"
	"fmt"
	"net/http"
	"text/tabwriter"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/streamrules/streamrules"
)

// metricsHandler serves the engine's Prometheus metrics, plus the Go runtime's, from a
// registry of the demo's own (never the global one).
func (r *rig) metricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(r.metrics, collectors.NewGoCollector())
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// statColumns are the outcome columns of the closing table; "-" where the rule's scope
// cannot have the outcome.
var statColumns = []streamrules.Outcome{
	streamrules.OutcomeCorrected, streamrules.OutcomeMissedAgain, streamrules.OutcomeKept, streamrules.OutcomeFixed,
	streamrules.OutcomeComplied, streamrules.OutcomeRepeated, streamrules.OutcomeRefused,
}

// printStats prints every loaded rule with its firings, their outcomes, its would-fires
// (shadow) and its latest firing, from the store's counters: every run on this database.
func (r *rig) printStats(ctx context.Context) error {
	stats, err := r.eng.Stats(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.w, "\nstream rule stats — every run on this database (GET /v1/stats serves the same):\n")
	// Numbers align right; the rule names are padded to one width, so they read left-aligned.
	width := len("rule")
	for _, s := range stats.Rules {
		width = max(width, len(s.Rule))
	}
	tw := tabwriter.NewWriter(r.w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  %-*s\tfired\t", width, "rule")
	for _, o := range statColumns {
		fmt.Fprintf(tw, "%s\t", o)
	}
	fmt.Fprint(tw, "would-fire\tlast fired\t\n")
	for _, s := range stats.Rules {
		fmt.Fprintf(tw, "  %-*s\t%d\t", width, s.Rule, s.Fired)
		for _, o := range statColumns {
			if n, ok := s.Outcomes[o]; ok {
				fmt.Fprintf(tw, "%d\t", n)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		last := "never"
		if !s.LastFiredAt.IsZero() {
			last = s.LastFiredAt.Local().Format("2006-01-02 15:04:05")
		}
		fmt.Fprintf(tw, "%d\t%s\t\n", s.Shadow, last)
	}
	return tw.Flush()
}
