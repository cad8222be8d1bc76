package rulesdb

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/streamrules/streamrules"
)

// loadChat reads a chat's state in one query: the chat's move counter, the move each rule
// last fired in, and seq, the last move record this Store wrote for the chat (0: none).
// A chat never seen has the zero state. LoadChat (queue.go) adds what is not written yet.
func (s *Store) loadChat(ctx context.Context, chatID string) (streamrules.ChatState, int64, error) {
	type loaded struct {
		st  streamrules.ChatState
		seq int64
	}
	r, err := bounded(s, ctx, func() (loaded, error) {
		st, seq, err := s.loadChatRows(ctx, chatID)
		return loaded{st, seq}, err
	})
	if err != nil {
		return streamrules.ChatState{}, 0, fmt.Errorf("rulesdb: load chat %q: %w", chatID, err)
	}
	return r.st, r.seq, nil
}

func (s *Store) loadChatRows(ctx context.Context, chatID string) (streamrules.ChatState, int64, error) {
	rows, err := s.query(ctx, s.db, s.q.loadChat, chatID, s.writer)
	if err != nil {
		return streamrules.ChatState{}, 0, err
	}
	defer rows.Close()
	var (
		st  streamrules.ChatState
		seq int64
	)
	for rows.Next() {
		var (
			moves, last, wseq sql.NullInt64
			rule              sql.NullString
		)
		if err := rows.Scan(&moves, &rule, &last, &wseq); err != nil {
			return streamrules.ChatState{}, 0, err
		}
		st.Moves, seq = moves.Int64, wseq.Int64
		if rule.Valid {
			if st.LastFired == nil {
				st.LastFired = map[string]int64{}
			}
			st.LastFired[rule.String] = last.Int64
		}
	}
	if err := rows.Err(); err != nil {
		return streamrules.ChatState{}, 0, err
	}
	return st, seq, nil
}

// stampMove fills in what a record's firings leave empty (chat, move, time) and copies
// them: a queued record must not share the caller's slice.
func (s *Store) stampMove(rec streamrules.MoveRecord) streamrules.MoveRecord {
	now := s.now()
	firings := slices.Clone(rec.Firings)
	for i := range firings {
		f := &firings[i]
		if f.ChatID == "" {
			f.ChatID = rec.ChatID
		}
		if f.Move == 0 {
			f.Move = rec.Move
		}
		if f.At.IsZero() {
			f.At = now
		}
		f.At = f.At.UTC().Truncate(time.Microsecond)
	}
	rec.Firings = firings
	return rec
}

// writeMove writes one stamped record: in one transaction the chat's move counter grows
// by one if the move answered, each fired rule's last-fired move is raised, and the
// firings are appended to stream_rule_stat. On PostgreSQL that is a single statement: one
// round trip. seq makes it idempotent: a record whose seq was written for this chat
// before changes nothing (see saveMovePG). carry more moves join the counter: those of
// the chat's records dropped before this one (pendingMove.carry). It returns when ctx
// is done.
//
// ended, if not nil, is called when the write has really ended, which may be after
// writeMove returned on ctx (see bounded).
func (s *Store) writeMove(ctx context.Context, rec streamrules.MoveRecord, seq, carry int64, ended func()) error {
	inc := carry
	if rec.Answered {
		inc++
	}
	now := s.now()
	_, err := bounded(s, ctx, func() (struct{}, error) {
		if ended != nil {
			defer ended()
		}
		s.wtrips.Add(1)
		if s.dialect == dialectPostgres {
			return struct{}{}, s.saveMovePG(ctx, rec.ChatID, inc, now, rec.Firings, seq)
		}
		return struct{}{}, s.saveMoveSQLite(ctx, rec.ChatID, inc, now, rec.Firings, seq)
	})
	if err != nil {
		return fmt.Errorf("rulesdb: save move %d of chat %q: %w", rec.Move, rec.ChatID, err)
	}
	return nil
}

func (s *Store) saveMovePG(ctx context.Context, chatID string, inc int64, now time.Time, firings []streamrules.Firing, seq int64) error {
	n := len(firings)
	rules, chats, modes, tools, ats := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	moves, retries, outcomes, diffs := make([]int64, n), make([]bool, n), make([]string, n), make([]string, n)
	earlies, cuts := make([]bool, n), make([]int64, n)
	deliveries, reads := make([]string, n), make([]bool, n) // migration 0008
	for i, f := range firings {
		deliveries[i], reads[i] = string(f.Delivery), f.Read
		rules[i], chats[i], modes[i], tools[i], diffs[i] = f.Rule, f.ChatID, string(f.Mode), f.Tool, diffText(f.Diff)
		moves[i], retries[i], outcomes[i] = f.Move, f.Retry, string(f.Outcome)
		earlies[i], cuts[i] = f.Early, int64(f.CutAtBytes)
		ats[i] = f.At.Format(time.RFC3339Nano)
	}
	cRules, cOutcomes, cN, cLast := counterArrays(firings)
	dRules, dDeliveries, dN, dRead := deliveryArrays(firings)
	_, err := s.exec(ctx, s.db, s.q.saveMovePG, chatID, inc, now,
		pq.StringArray(rules), pq.Int64Array(moves), pq.StringArray(chats), pq.StringArray(modes),
		pq.BoolArray(retries), pq.StringArray(tools), pq.StringArray(ats), pq.StringArray(outcomes), pq.StringArray(diffs),
		pq.BoolArray(earlies), pq.Int64Array(cuts),
		pq.StringArray(cRules), pq.StringArray(cOutcomes), pq.Int64Array(cN), pq.StringArray(cLast), s.writer, seq,
		pq.StringArray(deliveries), pq.BoolArray(reads),
		pq.StringArray(dRules), pq.StringArray(dDeliveries), pq.Int64Array(dN), pq.Int64Array(dRead))
	return err
}

func (s *Store) saveMoveSQLite(ctx context.Context, chatID string, inc int64, now time.Time, firings []streamrules.Firing, seq int64) error {
	return s.withTx(ctx, func(tx *sqlx.Tx) error {
		// The idempotency guard first (see saveMovePG): no row changed, written before.
		res, err := s.exec(ctx, tx, s.q.guardMove, chatID, s.writer, seq, now)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		if _, err := s.exec(ctx, tx, s.q.upsertChat, chatID, inc, now); err != nil {
			return err
		}
		if len(firings) == 0 {
			return nil
		}
		last := map[string]int64{}
		for _, f := range firings {
			last[f.Rule] = max(last[f.Rule], f.Move)
		}
		var b strings.Builder
		b.WriteString(s.q.upsertFired)
		args := make([]any, 0, 3*len(last))
		for i, rule := range slices.Sorted(maps.Keys(last)) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?)")
			args = append(args, chatID, rule, last[rule])
		}
		b.WriteString(` ON CONFLICT (chat_id, rule) DO UPDATE SET last_fired_move = max(stream_chat_rule.last_fired_move, excluded.last_fired_move)`)
		if _, err := s.exec(ctx, tx, b.String(), args...); err != nil {
			return err
		}
		b.Reset()
		b.WriteString(s.q.insertStatPre)
		args = args[:0]
		for i, f := range firings {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
			args = append(args, f.Rule, f.ChatID, f.Move, string(f.Mode), f.Retry, f.Tool, f.At, string(f.Outcome), diffText(f.Diff), f.Early, f.CutAtBytes,
				string(f.Delivery), f.Read)
		}
		if _, err := s.exec(ctx, tx, b.String(), args...); err != nil {
			return err
		}
		// The per-rule counters grow in the same transaction as the stat rows (stats.go), so a
		// counter never disagrees with the rows it counts.
		query, args := s.counterUpsert(firings)
		if _, err := s.exec(ctx, tx, query, args...); err != nil {
			return err
		}
		// Migration 0008: the delivery counters too (delivery.go).
		if query, args := deliveryUpsert(firings); query != "" {
			_, err = s.exec(ctx, tx, query, args...)
		}
		return err
	})
}

// CountFirings implements streamrules.FiringCounter: live firings per rule name (would-fires
// not counted), deleted rules included, read from the counters (they outlive the rule and
// the raw rows).
func (s *Store) CountFirings(ctx context.Context) (map[string]int64, error) {
	s.flushForRead(ctx) // group commit: what End queued is counted (batch.go)
	rows, err := s.query(ctx, s.db, s.q.countFirings)
	if err != nil {
		return nil, fmt.Errorf("rulesdb: count firings: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var (
			rule string
			n    int64
		)
		if err := rows.Scan(&rule, &n); err != nil {
			return nil, fmt.Errorf("rulesdb: count firings: %w", err)
		}
		out[rule] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("rulesdb: count firings: %w", err)
	}
	return out, nil
}

// Firings returns the stat rows of a chat (every chat for ""), oldest first: for tests
// and for the host's own reports.
func (s *Store) Firings(ctx context.Context, chatID string) ([]streamrules.Firing, error) {
	s.flushForRead(ctx) // group commit: what End queued is counted (batch.go)
	q := `SELECT rule, chat_id, move, mode, retry, tool, fired_at, outcome, diff, early, cut_at_bytes, delivery, manifest_read FROM stream_rule_stat`
	var args []any
	if chatID != "" {
		q += ` WHERE chat_id = ?`
		args = append(args, chatID)
	}
	q += ` ORDER BY id`
	rows, err := s.query(ctx, s.db, s.db.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("rulesdb: firings: %w", err)
	}
	defer rows.Close()
	var out []streamrules.Firing
	for rows.Next() {
		var (
			f     streamrules.Firing
			mode  string
			retry any
			at    any
			diff  any
			early any
			read  any
		)
		if err := rows.Scan(&f.Rule, &f.ChatID, &f.Move, &mode, &retry, &f.Tool, &at, &f.Outcome, &diff, &early, &f.CutAtBytes,
			&f.Delivery, &read); err != nil {
			return nil, fmt.Errorf("rulesdb: firings: %w", err)
		}
		f.Mode = streamrules.Mode(mode)
		f.Retry, _ = asBool(retry)
		f.At, _ = asTime(at)
		f.Diff = readDiff(diff)
		f.Early, _ = asBool(early)
		f.Read, _ = asBool(read)
		out = append(out, f)
	}
	return out, rows.Err()
}
