package rulesdb

import (
	"context"
	"fmt"
	"time"

	"github.com/streamrules/streamrules"
)

// Reads for the rules console (package console): firings per rule and day, and the latest
// firings. Both are bounded by the stat rows' fired_at index (migration 0004), so they
// cost what the window holds, not what the table holds.

// DayCount is how often a rule fired on one UTC day.
type DayCount struct {
	Rule string
	Day  time.Time // midnight UTC
	N    int64
}

// FiringsByDay returns, per rule and UTC day, the raw stat rows fired at or after since,
// by rule and day. Rows pruned by retention (retention.go) are not counted: the window
// should be shorter than Config.StatsRetention.
func (s *Store) FiringsByDay(ctx context.Context, since time.Time) ([]DayCount, error) {
	s.flushForRead(ctx) // group commit: what End queued is counted (batch.go)
	q := `SELECT rule, substr(fired_at, 1, 10) AS day, COUNT(*) FROM stream_rule_stat WHERE fired_at >= ? GROUP BY rule, day ORDER BY rule, day`
	if s.dialect == dialectPostgres {
		q = `SELECT rule, to_char(fired_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, COUNT(*) FROM stream_rule_stat WHERE fired_at >= $1 GROUP BY rule, day ORDER BY rule, day`
	}
	rows, err := s.query(ctx, s.db, q, since.UTC().Truncate(time.Microsecond))
	if err != nil {
		return nil, fmt.Errorf("rulesdb: firings by day: %w", err)
	}
	defer rows.Close()
	var out []DayCount
	for rows.Next() {
		var (
			d   DayCount
			day string
		)
		if err := rows.Scan(&d.Rule, &day, &d.N); err != nil {
			return nil, fmt.Errorf("rulesdb: firings by day: %w", err)
		}
		if d.Day, err = time.Parse(time.DateOnly, day); err != nil {
			return nil, fmt.Errorf("rulesdb: firings by day: day %q: %w", day, err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("rulesdb: firings by day: %w", err)
	}
	return out, nil
}

// LatestFirings returns at most limit stat rows, the last written first: by id, whose
// index reads the newest rows without a sort (fired_at with a tie-break cannot). Diff is
// read; Span is never stored.
func (s *Store) LatestFirings(ctx context.Context, limit int) ([]streamrules.Firing, error) {
	if limit <= 0 {
		return nil, nil
	}
	s.flushForRead(ctx)
	q := s.db.Rebind(`SELECT rule, chat_id, move, mode, retry, tool, fired_at, outcome, diff, early, cut_at_bytes, delivery, manifest_read
FROM stream_rule_stat ORDER BY id DESC LIMIT ?`)
	rows, err := s.query(ctx, s.db, q, limit)
	if err != nil {
		return nil, fmt.Errorf("rulesdb: latest firings: %w", err)
	}
	defer rows.Close()
	out := make([]streamrules.Firing, 0, limit)
	for rows.Next() {
		var (
			f                      streamrules.Firing
			mode                   string
			retry, at, diff, early any
			read                   any
		)
		if err := rows.Scan(&f.Rule, &f.ChatID, &f.Move, &mode, &retry, &f.Tool, &at, &f.Outcome, &diff, &early, &f.CutAtBytes,
			&f.Delivery, &read); err != nil {
			return nil, fmt.Errorf("rulesdb: latest firings: %w", err)
		}
		f.Mode = streamrules.Mode(mode)
		f.Retry, _ = asBool(retry)
		f.At, _ = asTime(at)
		f.Diff = readDiff(diff)
		f.Early, _ = asBool(early)
		f.Read, _ = asBool(read)
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("rulesdb: latest firings: %w", err)
	}
	return out, nil
}
