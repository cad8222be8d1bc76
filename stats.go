package streamrules

import (
	"context"
	"fmt"
	"time"
)

// RuleStat is one rule's line in the stats summary.
type RuleStat struct {
	Rule string `json:"rule"`
	// Fired counts the rule's live firings (would-fires are in Shadow).
	Fired int64 `json:"fired"`
	// Outcomes splits Fired by what came of each firing. Every outcome the rule's scope can
	// have is listed, zero included: corrected, missed_again, kept and fixed for a text
	// rule; complied and repeated for a tool rule. Firings without an outcome (recorded
	// before outcomes existed, or a discard whose move failed before its replay) are in
	// Fired only.
	Outcomes map[Outcome]int64 `json:"outcomes"`
	// Shadow counts would-fires: the firings the rule would have made, had it not been in
	// shadow. Would-fires divided by the moves it watched is the would-fire rate.
	Shadow int64 `json:"shadow"`
	// LastFiredAt is the time of the rule's latest firing or would-fire; absent when none.
	LastFiredAt time.Time `json:"last_fired_at,omitzero"`
	// Severity and Explanation are the rule's metadata, when it has them (Rule.Severity).
	Severity    string `json:"severity,omitempty"`
	Explanation string `json:"explanation,omitempty"`

	// Delivery splits the live firings by how their text reached the model: full and
	// manifest for a tool rule, full for a text rule (an interrupt is never cut), zero
	// included. ManifestRead counts the manifest deliveries the model then read with
	// stream_rule_read in the same move.
	Delivery     map[Delivery]int64 `json:"delivery"`
	ManifestRead int64              `json:"manifest_read"`
}

// Stats is the summary served at GET /v1/stats.
type Stats struct {
	Rules []RuleStat `json:"rules"`
}

// RuleCounter is one rule's counters as a store keeps them, by outcome ("" for firings
// without one, OutcomeShadow for would-fires).
type RuleCounter struct {
	ByOutcome   map[Outcome]int64
	LastFiredAt time.Time
	// ByDelivery counts live firings by delivery (Firing.Delivery; firings recorded
	// before deliveries existed are not in it), Read the manifest deliveries read.
	ByDelivery map[Delivery]int64
	Read       int64
}

// StatsCounter is a store that keeps per-rule firing counters, so the stats cost a read
// of a few rows per rule, however many firings there were. Counters outlive their rule
// and the raw rows: deleting either does not rewrite history.
type StatsCounter interface {
	RuleCounters(ctx context.Context) (map[string]RuleCounter, error)
}

// outcomesFor lists the outcomes a rule of this mode can have.
func outcomesFor(mode Mode) []Outcome {
	if mode == ModeRemind {
		return []Outcome{OutcomeComplied, OutcomeRepeated}
	}
	return []Outcome{OutcomeCorrected, OutcomeMissedAgain, OutcomeKept, OutcomeFixed}
}

// Stat turns a rule's counters into its stats line.
func (c RuleCounter) Stat(rule string, mode Mode) RuleStat {
	st := RuleStat{Rule: rule, Outcomes: map[Outcome]int64{}, LastFiredAt: c.LastFiredAt}
	for _, o := range outcomesFor(mode) {
		st.Outcomes[o] = 0
	}
	st.Delivery = map[Delivery]int64{DeliveryFull: c.ByDelivery[DeliveryFull]}
	if mode == ModeRemind {
		st.Delivery[DeliveryManifest] = c.ByDelivery[DeliveryManifest]
		st.ManifestRead = c.Read
	}
	for o, n := range c.ByOutcome {
		if o == OutcomeShadow {
			st.Shadow += n
			continue
		}
		st.Fired += n
		if o != "" {
			st.Outcomes[o] += n
		}
	}
	return st
}

// Stats lists every loaded rule with its firings, outcomes and would-fires, zero
// included, by name. Zero fires is an answer too: the miss is cured, or the condition
// misses. The store must implement StatsCounter (or, for Fired alone, FiringCounter).
func (e *Engine) Stats(ctx context.Context) (Stats, error) {
	var counters map[string]RuleCounter
	switch s := e.store.(type) {
	case StatsCounter:
		var err error
		if counters, err = s.RuleCounters(ctx); err != nil {
			return Stats{}, fmt.Errorf("streamrules: count firings: %w", err)
		}
	case FiringCounter:
		counts, err := s.CountFirings(ctx)
		if err != nil {
			return Stats{}, fmt.Errorf("streamrules: count firings: %w", err)
		}
		counters = make(map[string]RuleCounter, len(counts))
		for rule, n := range counts {
			counters[rule] = RuleCounter{ByOutcome: map[Outcome]int64{"": n}}
		}
	default:
		return Stats{}, fmt.Errorf("streamrules: store %T does not count firings", e.store)
	}
	set := e.rules.Load()
	out := Stats{Rules: make([]RuleStat, 0, len(set.all))}
	for _, r := range set.all {
		st := counters[r.Name].Stat(r.Name, r.Mode)
		if r.Mode == ModeInterrupt && r.Tool() != "" {
			st.Outcomes[OutcomeRefused] += 0 // a gate's own outcome, listed at zero too
			if r.Shell {
				st.Outcomes[OutcomeUnreadable] += 0 // a shell gate's refusal of what it could not read
			}
		}
		st.Severity, st.Explanation = r.Severity, r.Explanation
		out.Rules = append(out.Rules, st)
	}
	return out, nil
}
