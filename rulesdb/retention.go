package rulesdb

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Retention is how long raw stat rows (stream_rule_stat) are kept. Zero keeps them
// forever. Pruning deletes raw rows only: the per-rule counters (stats.go) keep counting,
// so /v1/stats and history outlive the rows.
//
// As text (STREAMRULES_STAT_RETENTION) it is a number of days, "90d", or a Go duration,
// "36h"; "" and "0" mean forever. time.ParseDuration has no unit for days, and a
// retention is spoken of in days.
type Retention time.Duration

// UnmarshalText parses "90d", a Go duration ("36h"), or "" / "0" for forever.
func (r *Retention) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "" || s == "0" {
		*r = 0
		return nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 64)
		if err != nil || n < 0 || n > int64(time.Duration(1<<63-1)/(24*time.Hour)) {
			return fmt.Errorf("rulesdb: retention %q: want a number of days (90d), a duration (36h) or 0", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil || d < 0 {
			return fmt.Errorf("rulesdb: retention %q: want a number of days (90d), a duration (36h) or 0", s)
		}
	}
	*r = Retention(d)
	return nil
}

// MarshalText writes whole days as "90d", anything else as a Go duration, 0 as "0".
func (r Retention) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

func (r Retention) String() string {
	d := time.Duration(r)
	switch {
	case d == 0:
		return "0"
	case d%(24*time.Hour) == 0:
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return d.String()
}

// pruneBatch bounds one DELETE: a first prune of a large table holds no long lock and
// leaves room to concurrent SaveMoves between batches.
const pruneBatch = 10_000

// PruneStats deletes the raw stat rows fired before before, in batches, and returns how
// many it deleted. The per-rule counters are not touched. With Config.StatRetention set
// the store calls it itself, at Open and then hourly; a host or a CLI may call it too.
func (s *Store) PruneStats(ctx context.Context, before time.Time) (int64, error) {
	before = before.UTC().Truncate(time.Microsecond)
	var total int64
	for {
		unlock := s.lockWrites()
		res, err := s.exec(ctx, s.db, s.q.pruneStats, before, pruneBatch)
		unlock()
		if err != nil {
			return total, fmt.Errorf("rulesdb: prune stats: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("rulesdb: prune stats: %w", err)
		}
		total += n
		if n < pruneBatch {
			return total, nil
		}
	}
}

// pruneLoop prunes at once and then at every tick, until Close.
func (s *Store) pruneLoop(keep time.Duration, tick <-chan time.Time) {
	defer s.wg.Done()
	for {
		ctx, cancel := context.WithTimeout(s.life, 10*time.Minute) // Close cancels a prune under way
		n, err := s.PruneStats(ctx, s.now().Add(-keep))
		cancel()
		switch {
		case err != nil:
			s.log.Warn("stream rules: stat rows not pruned", "retention", Retention(keep).String(), "err", err)
		case n > 0:
			s.log.Info("stream rules: stat rows pruned", "rows", n, "retention", Retention(keep).String())
		}
		if s.onPrune != nil {
			s.onPrune(n, err)
		}
		select {
		case <-s.done:
			return
		case <-tick:
		}
	}
}
