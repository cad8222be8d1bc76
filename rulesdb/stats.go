package rulesdb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/streamrules/streamrules"
)

var _ streamrules.StatsCounter = (*Store)(nil)

// Per-rule counters (migration 0004): stream_rule_counter holds one row per rule and
// outcome, with the number of firings and the latest one's time. SaveMove keeps it up to
// date in the statement (PostgreSQL) or transaction (SQLite) that appends the raw rows, so
// the stats read a few rows per rule however many firings there were, and pruning the raw
// rows (retention.go) loses no history.

// RuleCounters implements streamrules.StatsCounter: every rule that ever fired, deleted
// rules included, with its firings by outcome ("" for rows written before outcomes
// existed) and the time of its latest firing. One query over the counters.
func (s *Store) RuleCounters(ctx context.Context) (map[string]streamrules.RuleCounter, error) {
	s.flushForRead(ctx) // group commit: what End queued is counted (batch.go)
	rows, err := s.query(ctx, s.db, s.q.ruleCounters)
	if err != nil {
		return nil, fmt.Errorf("rulesdb: rule counters: %w", err)
	}
	defer rows.Close()
	out := map[string]streamrules.RuleCounter{}
	for rows.Next() {
		var (
			rule, outcome string
			n             int64
			last          any
		)
		if err := rows.Scan(&rule, &outcome, &n, &last); err != nil {
			return nil, fmt.Errorf("rulesdb: rule counters: %w", err)
		}
		c, ok := out[rule]
		if !ok {
			c.ByOutcome = map[streamrules.Outcome]int64{}
		}
		c.ByOutcome[streamrules.Outcome(outcome)] += n
		if at, err := asTime(last); err == nil && at.After(c.LastFiredAt) {
			c.LastFiredAt = at
		}
		out[rule] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("rulesdb: rule counters: %w", err)
	}
	if err := s.readDeliveryCounters(ctx, out); err != nil { // migration 0008
		return nil, fmt.Errorf("rulesdb: rule counters: %w", err)
	}
	return out, nil
}

// counterUpsert builds SQLite's counter statement for a move's firings: one row per
// (rule, outcome), in that order (as PostgreSQL's "counted" CTE does).
func (s *Store) counterUpsert(firings []streamrules.Firing) (string, []any) {
	rows := countersOf(firings)
	var b strings.Builder
	b.WriteString(s.q.upsertCounter)
	args := make([]any, 0, 4*len(rows))
	for i, c := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?)")
		args = append(args, c.rule, c.outcome, c.n, c.last)
	}
	// Times are stored as UTC text of one layout, which sorts as the instants do.
	b.WriteString(` ON CONFLICT (rule, outcome) DO UPDATE SET fired = stream_rule_counter.fired + excluded.fired,
last_fired_at = max(stream_rule_counter.last_fired_at, excluded.last_fired_at)`)
	return b.String(), args
}

// counterArrays is countersOf as PostgreSQL's arrays.
func counterArrays(firings []streamrules.Firing) (rules, outcomes []string, n []int64, last []string) {
	for _, k := range countersOf(firings) {
		rules, outcomes = append(rules, k.rule), append(outcomes, k.outcome)
		n, last = append(n, k.n), append(last, k.last.Format(time.RFC3339Nano))
	}
	return
}

// counterRow is a move's firings of one rule with one outcome.
type counterRow struct {
	rule, outcome string
	n             int64
	last          time.Time
}

// countersOf aggregates a move's firings per (rule, outcome), in that order. A move has a
// handful of firings: a linear search beats a map.
func countersOf(firings []streamrules.Firing) []counterRow {
	var out []counterRow
	for _, f := range firings {
		i := slices.IndexFunc(out, func(c counterRow) bool { return c.rule == f.Rule && c.outcome == string(f.Outcome) })
		if i < 0 {
			out = append(out, counterRow{rule: f.Rule, outcome: string(f.Outcome)})
			i = len(out) - 1
		}
		out[i].n++
		if f.At.After(out[i].last) {
			out[i].last = f.At
		}
	}
	slices.SortFunc(out, func(a, b counterRow) int {
		if c := strings.Compare(a.rule, b.rule); c != 0 {
			return c
		}
		return strings.Compare(a.outcome, b.outcome)
	})
	return out
}
