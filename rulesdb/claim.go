package rulesdb

import (
	"context"
	"errors"
	"fmt"

	"github.com/streamrules/streamrules"
)

var _ streamrules.Claimer = (*Store)(nil)

// Claims (streamrules.Claimer): repeat limits stay exact across replicas. A repeat-limited firing is claimed on the chat's
// stream_chat_rule row in one statement before the engine emits it: `once` inserts the row
// and does nothing if it exists; `after:N` inserts it or raises last_fired_move only if
// the last firing is N moves back or more. Whoever's statement changed the row holds the
// claim: the row lock makes it exact across replicas, and on SQLite the write lock does.
// The move record written later raises the same row to the same move (GREATEST), so the
// claim and the record agree; a claim whose move is never written (a move lost in an
// outage) still counts as fired, the safe side for a repeat limit.
//
// Through an outage: a claim is tried within StoreTimeout (bounded, as every call of the
// store), a failure drops the pool's dead connections as a failed write does (dial.go),
// and the engine keeps the rule silent (fail closed). A claim does not queue: it is only
// worth something before the reminder goes out. A failure the database may get over
// marks it down, as a failed write or read does, and while it is down a claim fails at
// once, without a wait: a black hole would otherwise cost every later call its
// StoreTimeout again. Any call that finds it answering again (a read of a chat, a written
// record, or with nothing queued the flusher's probe, queue.go) has claims tried again.

const (
	claimOnce = `INSERT INTO stream_chat_rule (chat_id, rule, last_fired_move) VALUES (?, ?, ?)
ON CONFLICT (chat_id, rule) DO NOTHING`
	claimAfter = `INSERT INTO stream_chat_rule (chat_id, rule, last_fired_move) VALUES (?, ?, ?)
ON CONFLICT (chat_id, rule) DO UPDATE SET last_fired_move = excluded.last_fired_move
WHERE excluded.last_fired_move - stream_chat_rule.last_fired_move >= ?`
)

// ClaimFiring implements streamrules.Claimer in one statement, within ctx.
func (s *Store) ClaimFiring(ctx context.Context, chatID, rule string, move int64, policy streamrules.Repeat) (bool, error) {
	query, args := s.q.claimOnce, []any{chatID, rule, move}
	switch policy.Kind {
	case streamrules.RepeatOnce:
	case streamrules.RepeatAfter:
		query, args = s.q.claimAfter, append(args, policy.Moves)
	default:
		return true, nil
	}
	s.wq.mu.Lock() // bare: reads a flag only
	down := s.wq.unanswered
	s.wq.mu.Unlock()
	if down {
		return false, fmt.Errorf("rulesdb: claim %q in chat %q: %w", rule, chatID, errDown)
	}
	won, err := bounded(s, ctx, func() (bool, error) {
		unlock := s.lockWrites()
		defer unlock()
		res, err := s.exec(ctx, s.db, query, args...)
		if err != nil {
			return false, err
		}
		n, err := res.RowsAffected()
		return n == 1, err
	})
	if err != nil {
		if retryable(err) {
			s.dropIdle(err) // as a failed write does: the pool's dead connections go
			if !errors.Is(ctx.Err(), context.Canceled) {
				s.markDown() // no answer within the bound: not the caller giving up
			}
		}
		return false, fmt.Errorf("rulesdb: claim %q in chat %q: %w", rule, chatID, err)
	}
	s.wq.mu.Lock() // bare: sets a flag only
	s.wq.unanswered = false
	s.wq.mu.Unlock()
	return won, nil
}
