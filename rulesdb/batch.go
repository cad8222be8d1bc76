package rulesdb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/streamrules/streamrules"
)

var _ streamrules.MoveQueuer = (*Store)(nil)

// Group commit: many chats' moves cost one statement, not one each. QueueMove puts a move record in the write queue (queue.go)
// without trying the database; the flusher writes what is queued in batches: the head
// records of many chats, up to Config.BatchSize, in one statement on PostgreSQL (one transaction
// on SQLite), after waiting Config.BatchDelay for more to come. So:
//
//   - order per chat: a batch takes a chat's oldest records, in order, up to maxPerChat,
//     and a chat is busy (takes no other write) until the batch ended;
//   - idempotent retries: the per-(chat, writer) guard row of migration 0003 admits a
//     chat's records of a batch together, with the seq of the last one, if it holds less.
//     A batch is all or nothing, and a retry tries the same group of records again
//     (pendingMove.group), so the row holds either less than the group's first seq (not
//     written) or its last (written): the guard admits the group exactly once;
//   - drop-oldest when full, counted (Stats.DroppedMoves), flush at Close, and retries through
//     an outage with backoff are the queue's, unchanged;
//   - no hot rows: a batch touches each chat's rows once, and each (rule, outcome)
//     counter row and (rule, delivery) delivery counter row once, with the batch's
//     firings aggregated into one delta.
//   - a batch writes exactly what saveMovePG/saveMoveSQLite write for its records: the
//     stat rows with every column (delivery and manifest_read included) and every
//     counter (TestBatchDelivery).
//
// A batch the database refuses for good (a constraint) is split: each record is then
// written alone, so one bad record does not take the others with it.

// flushers is how many batches are written at once (queue.go, flush): two on
// PostgreSQL, whose server writes them on two cores; one on SQLite, whose writers take
// turns anyway.
func flushers(d dialect) int {
	if d == dialectPostgres {
		return 2
	}
	return 1
}

const (
	defaultBatchSize  = 512
	defaultBatchDelay = 2 * time.Millisecond
)

// QueueMove implements streamrules.MoveQueuer: the record joins the write queue and is
// written with the next batch. It never waits; it fails only when the store is closed.
// LoadChat sees the record at once.
func (s *Store) QueueMove(rec streamrules.MoveRecord) error {
	rec = s.stampMove(rec)
	p := &pendingMove{rec: rec, done: make(chan struct{})}
	s.wq.inboxMu.Lock()
	if s.wq.inboxClosed {
		s.wq.inboxMu.Unlock()
		return errors.New("rulesdb: queue move: store closed")
	}
	s.wq.inbox = append(s.wq.inbox, p)
	full := len(s.wq.inbox) >= s.wq.max
	s.wq.inboxMu.Unlock()
	if full {
		// Nothing took the inbox for a while (an outage, no reads): move it into the queue
		// now, where a full queue drops its oldest, so memory stays bounded by QueueSize.
		s.lockQueue()
		s.wq.mu.Unlock()
	}
	s.wq.kick()
	return nil
}

// Flush waits until every record queued before it is written (or dropped or refused),
// or ctx ends. The stats read after a Flush are exact.
func (s *Store) Flush(ctx context.Context) error {
	s.lockQueue()
	waits := make([]chan struct{}, 0, s.wq.fifo.Len())
	for e := s.wq.fifo.Front(); e != nil; e = e.Next() {
		waits = append(waits, e.Value.(*pendingMove).done)
	}
	s.wq.mu.Unlock()
	if len(waits) == 0 {
		return nil
	}
	s.wq.kick()
	for _, w := range waits {
		select {
		case <-w:
		case <-ctx.Done():
			return fmt.Errorf("rulesdb: flush: %w", ctx.Err())
		}
	}
	return nil
}

// maxPerChat caps the records of one chat in a batch.
const maxPerChat = 64

// nextBatchLocked takes, for each chat without a write in flight (oldest head first), the
// chat's oldest records: the group it was tried in before, or up to maxPerChat records
// never tried, which become a group. Up to the batch size; a chat's records are
// consecutive and in order. It marks their chats busy.
func (s *Store) nextBatchLocked() []*pendingMove {
	var out []*pendingMove
	for e := s.wq.fifo.Front(); e != nil && len(out) < s.wq.batchSize; e = e.Next() {
		p := e.Value.(*pendingMove)
		c := p.chat
		if c.busy || c.pending[0] != p {
			continue
		}
		s.markBusyLocked(c)
		n := 0
		for _, q := range c.pending {
			if q.group != p.group || p.group == 0 && n == maxPerChat {
				break
			}
			n++
		}
		grp := c.pending[:n]
		if p.group == 0 {
			for _, q := range grp {
				q.group = grp[n-1].seq
			}
		}
		out = append(out, grp...)
	}
	return out
}

// attemptBatch writes ps once, within ctx, as one statement (PostgreSQL) or transaction.
func (s *Store) attemptBatch(ctx context.Context, ps []*pendingMove) error {
	if len(ps) == 1 {
		return s.attempt(ctx, ps[0])
	}
	for _, p := range ps {
		p.running.Add(1)
	}
	s.wq.inflight.Add(1)
	_, err := bounded(s, ctx, func() (struct{}, error) {
		defer func() {
			for _, p := range ps {
				p.running.Add(-1)
			}
			s.wq.inflight.Add(-1)
		}()
		if s.dialect == dialectPostgres {
			return struct{}{}, s.saveBatchPG(ctx, ps)
		}
		return struct{}{}, s.saveBatchSQLite(ctx, ps)
	})
	if err != nil {
		return fmt.Errorf("rulesdb: save %d move records: %w", len(ps), err)
	}
	s.wq.batches.Add(1)
	return nil
}

// saveBatchPG writes a batch in one statement: saveMovePG for many chats. The guard CTE
// admits each chat's record only if its seq is new for (chat, writer); every other CTE
// takes its rows from the admitted chats. Rows are upserted in key order, so two
// replicas' batches over the same chats cannot deadlock.
func (s *Store) saveBatchPG(ctx context.Context, ps []*pendingMove) error {
	now := s.now()
	var (
		gChats                                           []string
		gSeqs, gIncs                                     []int64
		rules, chats, modes, tools, ats, outcomes, diffs []string
		moves, cuts                                      []int64
		retries, earlies                                 []bool
		deliveries                                       []string // migration 0008
		reads                                            []bool
	)
	for i, p := range ps {
		inc := p.carry // the moves of records dropped before it (pendingMove.carry)
		if p.rec.Answered {
			inc++
		}
		if i > 0 && ps[i-1].chat == p.chat { // the chat's group: one guard row, last seq
			gSeqs[len(gSeqs)-1], gIncs[len(gIncs)-1] = p.seq, gIncs[len(gIncs)-1]+inc
		} else {
			gChats, gSeqs, gIncs = append(gChats, p.rec.ChatID), append(gSeqs, p.seq), append(gIncs, inc)
		}
		for _, f := range p.rec.Firings {
			rules, chats, modes, tools, diffs = append(rules, f.Rule), append(chats, p.rec.ChatID), append(modes, string(f.Mode)), append(tools, f.Tool), append(diffs, diffText(f.Diff))
			moves, retries, outcomes = append(moves, f.Move), append(retries, f.Retry), append(outcomes, string(f.Outcome))
			earlies, cuts = append(earlies, f.Early), append(cuts, int64(f.CutAtBytes))
			ats = append(ats, f.At.Format(time.RFC3339Nano))
			deliveries, reads = append(deliveries, string(f.Delivery)), append(reads, f.Read)
		}
	}
	s.wtrips.Add(1)
	_, err := s.exec(ctx, s.db, saveBatchPG, pq.StringArray(gChats), pq.Int64Array(gSeqs), pq.Int64Array(gIncs), now, s.writer,
		pq.StringArray(rules), pq.Int64Array(moves), pq.StringArray(chats), pq.StringArray(modes),
		pq.BoolArray(retries), pq.StringArray(tools), pq.StringArray(ats), pq.StringArray(outcomes), pq.StringArray(diffs),
		pq.BoolArray(earlies), pq.Int64Array(cuts), pq.StringArray(deliveries), pq.BoolArray(reads))
	return err
}

// saveBatchPG's statement. Firings carry the chat_id they belong to ($8), which the chat
// of their record is (stampMove); only those of admitted chats are kept (f). The counters
// get one delta per (rule, outcome) for the whole batch, and the delivery counters
// (migration 0008) one per (rule, delivery), counting what saveMovePG's "delivered" does
// (deliveriesOf: live firings with a delivery).
//
// Order of the CTEs: PostgreSQL runs the writing CTEs no other one reads last to first
// (stat, fired, chat, delivered, counted; guard and f run when first read). So the
// per-rule counter rows, which every batch of every replica updates, are locked last and
// held only from the end of the statement to its commit: the flushers' batches (and other
// replicas') do not wait on each other for the whole statement. saveMovePG keeps the same
// order, so a batch and a single write lock rows table by table in one order.
const saveBatchPG = `WITH guard AS (
	INSERT INTO stream_chat_writer (chat_id, writer, seq, updated_at)
	SELECT g.chat_id, $5, g.seq, $4 FROM unnest($1::text[], $2::bigint[]) AS g(chat_id, seq) ORDER BY g.chat_id
	ON CONFLICT (chat_id, writer) DO UPDATE SET seq = EXCLUDED.seq, updated_at = EXCLUDED.updated_at
	WHERE stream_chat_writer.seq < EXCLUDED.seq
	RETURNING chat_id
), f AS (
	SELECT * FROM unnest($6::text[], $8::text[], $7::bigint[], $9::text[], $10::boolean[], $11::text[], $12::timestamptz[], $13::text[], $14::text[], $15::boolean[], $16::bigint[],
		$17::text[], $18::boolean[])
		AS f(rule, chat_id, move, mode, retry, tool, fired_at, outcome, diff, early, cut_at_bytes, delivery, manifest_read)
	WHERE f.chat_id IN (SELECT chat_id FROM guard)
), counted AS (
	INSERT INTO stream_rule_counter (rule, outcome, fired, last_fired_at)
	SELECT rule, outcome, COUNT(*), MAX(fired_at) FROM f GROUP BY rule, outcome ORDER BY rule, outcome
	ON CONFLICT (rule, outcome) DO UPDATE SET fired = stream_rule_counter.fired + EXCLUDED.fired,
		last_fired_at = GREATEST(stream_rule_counter.last_fired_at, EXCLUDED.last_fired_at)
), delivered AS (
	INSERT INTO stream_rule_delivery_counter (rule, delivery, fired, manifest_read)
	SELECT rule, delivery, COUNT(*), COUNT(*) FILTER (WHERE manifest_read) FROM f
	WHERE delivery <> '' AND outcome <> 'shadow'
	GROUP BY rule, delivery ORDER BY rule, delivery
	ON CONFLICT (rule, delivery) DO UPDATE SET fired = stream_rule_delivery_counter.fired + EXCLUDED.fired,
		manifest_read = stream_rule_delivery_counter.manifest_read + EXCLUDED.manifest_read
), chat AS (
	INSERT INTO stream_chat (chat_id, moves, updated_at)
	SELECT g.chat_id, g.inc, $4 FROM unnest($1::text[], $3::bigint[]) AS g(chat_id, inc)
	WHERE g.chat_id IN (SELECT chat_id FROM guard) ORDER BY g.chat_id
	ON CONFLICT (chat_id) DO UPDATE SET moves = stream_chat.moves + EXCLUDED.moves, updated_at = EXCLUDED.updated_at
), fired AS (
	INSERT INTO stream_chat_rule (chat_id, rule, last_fired_move)
	SELECT chat_id, rule, MAX(move) FROM f GROUP BY chat_id, rule ORDER BY chat_id, rule
	ON CONFLICT (chat_id, rule) DO UPDATE SET last_fired_move = GREATEST(stream_chat_rule.last_fired_move, EXCLUDED.last_fired_move)
), stat AS (
	INSERT INTO stream_rule_stat (rule, chat_id, move, mode, retry, tool, fired_at, outcome, diff, early, cut_at_bytes, delivery, manifest_read)
	SELECT rule, chat_id, move, mode, retry, tool, fired_at, outcome, diff, early, cut_at_bytes, delivery, manifest_read FROM f
)
SELECT 1`

// saveBatchSQLite writes a batch in one transaction: each record's guard, chat counter,
// last-fired and stat rows as saveMoveSQLite does, then one counter delta per (rule,
// outcome), and one delivery counter delta per (rule, delivery), for the records the
// guards admitted.
func (s *Store) saveBatchSQLite(ctx context.Context, ps []*pendingMove) error {
	now := s.now()
	s.wtrips.Add(2) // BEGIN, COMMIT
	return s.withTx(ctx, func(tx *sqlx.Tx) error {
		var admitted []streamrules.Firing
		skip := false
		for i, p := range ps {
			rec := p.rec
			if i == 0 || ps[i-1].chat != p.chat {
				// The chat's group: one guard for all its records, with the last seq.
				last := p.seq
				for _, q := range ps[i:] {
					if q.chat != p.chat {
						break
					}
					last = q.seq
				}
				s.wtrips.Add(1)
				res, err := s.exec(ctx, tx, s.q.guardMove, rec.ChatID, s.writer, last, now)
				if err != nil {
					return err
				}
				n, err := res.RowsAffected()
				if err != nil {
					return err
				}
				skip = n == 0 // written before
			}
			if skip {
				continue
			}
			inc := p.carry // as in saveBatchPG
			if rec.Answered {
				inc++
			}
			s.wtrips.Add(1)
			if _, err := s.exec(ctx, tx, s.q.upsertChat, rec.ChatID, inc, now); err != nil {
				return err
			}
			if len(rec.Firings) == 0 {
				continue
			}
			last := map[string]int64{}
			for _, f := range rec.Firings {
				last[f.Rule] = max(last[f.Rule], f.Move)
			}
			var b strings.Builder
			b.WriteString(s.q.upsertFired)
			args := make([]any, 0, 11*len(rec.Firings))
			for i, rule := range slices.Sorted(maps.Keys(last)) {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString("(?, ?, ?)")
				args = append(args, rec.ChatID, rule, last[rule])
			}
			b.WriteString(` ON CONFLICT (chat_id, rule) DO UPDATE SET last_fired_move = max(stream_chat_rule.last_fired_move, excluded.last_fired_move)`)
			s.wtrips.Add(1)
			if _, err := s.exec(ctx, tx, b.String(), args...); err != nil {
				return err
			}
			b.Reset()
			b.WriteString(s.q.insertStatPre)
			args = args[:0]
			for i, f := range rec.Firings {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
				args = append(args, f.Rule, f.ChatID, f.Move, string(f.Mode), f.Retry, f.Tool, f.At, string(f.Outcome), diffText(f.Diff), f.Early, f.CutAtBytes,
					string(f.Delivery), f.Read)
			}
			s.wtrips.Add(1)
			if _, err := s.exec(ctx, tx, b.String(), args...); err != nil {
				return err
			}
			admitted = append(admitted, rec.Firings...)
		}
		if len(admitted) == 0 {
			return nil
		}
		query, args := s.counterUpsert(admitted)
		s.wtrips.Add(1)
		if _, err := s.exec(ctx, tx, query, args...); err != nil {
			return err
		}
		// Migration 0008: the delivery counters, one delta per (rule, delivery).
		if query, args := deliveryUpsert(admitted); query != "" {
			s.wtrips.Add(1)
			if _, err := s.exec(ctx, tx, query, args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// flushForRead makes the store's own stat reads exact: records queued before the read
// are written first, within ctx and WriteTimeout. While the database is down it does not
// wait (the read fails or answers without them).
func (s *Store) flushForRead(ctx context.Context) {
	s.lockQueue()
	skip := s.wq.down || s.wq.fifo.Len() == 0
	s.wq.mu.Unlock()
	if skip {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.wq.writeTimeout)
	defer cancel()
	_ = s.Flush(ctx)
}
