package streamrules

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// RuleStat is one rule's line in the stats summary.
type RuleStat struct {
	Rule  string `json:"rule"`
	Fired int64  `json:"fired"`
}

// Stats is the summary served at GET /v1/stats.
type Stats struct {
	Rules []RuleStat `json:"rules"`
}

// Stats lists every loaded rule with how many times it fired, zero included, by name.
// Zero fires is an answer too: the miss is cured, or the condition misses.
// The store must implement FiringCounter.
func (e *Engine) Stats(ctx context.Context) (Stats, error) {
	counter, ok := e.store.(FiringCounter)
	if !ok {
		return Stats{}, fmt.Errorf("streamrules: store %T does not count firings", e.store)
	}
	counts, err := counter.CountFirings(ctx)
	if err != nil {
		return Stats{}, fmt.Errorf("streamrules: count firings: %w", err)
	}
	set := e.rules.Load()
	out := Stats{Rules: make([]RuleStat, 0, len(set.all))}
	for _, r := range set.all {
		out.Rules = append(out.Rules, RuleStat{Rule: r.Name, Fired: counts[r.Name]})
	}
	return out, nil
}

// StatsHandler serves the engine's Stats as JSON on GET (and HEAD); other methods get 405.
// Mount it at /v1/stats.
func (e *Engine) StatsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		stats, err := e.Stats(r.Context())
		if err != nil {
			e.log.Error("stream rules: stats", "err", err)
			http.Error(w, "stats unavailable", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(stats)
	})
}
