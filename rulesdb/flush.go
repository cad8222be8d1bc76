package rulesdb

import (
	"context"
	"errors"
	"time"
)

// drain writes queued records in batches (batch.go), oldest first, until none is left
// (true) or a write fails for a reason a retry may cure (false). Each write waits at most
// timeout, and ends with parent. With nothing queued while the database is marked down
// (a read or a claim failed), the flusher's drain (probe) asks the database instead, so
// that claims are tried again once it answers; Close's does not.
func (s *Store) drain(parent context.Context, timeout time.Duration, probe bool) bool {
	for {
		s.lockQueue()
		batch := s.nextBatchLocked()
		more := s.wq.fifo.Len() > len(batch) && flushers(s.dialect) > 1
		probe := probe && len(batch) == 0 && s.wq.down && s.wq.fifo.Len() == 0
		s.wq.mu.Unlock()
		if probe {
			if !s.probe(parent, timeout) {
				return false
			}
			continue
		}
		if len(batch) == 0 {
			return true
		}
		if more {
			s.wq.kick() // another flusher may take the next batch meanwhile
		}
		ctx, cancel := context.WithTimeout(parent, timeout)
		err := s.attemptBatch(ctx, batch)
		cancel()
		ok := true
		if err != nil && !retryable(err) && len(batch) > 1 {
			// Refused for good: write the records one by one, so only the bad one goes.
			// Their chats stay busy until all are settled: none is dropped meanwhile.
			for _, p := range batch {
				ctx, cancel := context.WithTimeout(parent, timeout)
				err := s.attempt(ctx, p)
				cancel()
				s.wq.mu.Lock() // bare: settles a record taken under lockQueue
				ok = s.settleOneLocked(p, err)
				s.wq.mu.Unlock()
				if !ok {
					s.dropIdle(err)
					break
				}
			}
		} else {
			s.wq.mu.Lock() // bare: settles records taken under lockQueue
			for _, p := range batch {
				if ok = s.settleOneLocked(p, err); !ok {
					break // the rest of the batch failed the same way: kept
				}
			}
			s.wq.mu.Unlock()
			if !ok {
				s.dropIdle(err)
			}
		}
		s.wq.mu.Lock() // bare: settles records taken under lockQueue, and flags
		for _, p := range batch {
			p.chat.busy = false
			s.settleLocked(p.chat)
		}
		if ok {
			s.wq.unanswered = false
		}
		if ok && s.wq.down && s.wq.fifo.Len() == 0 {
			s.wq.down = false
			s.log.Info("stream rules: write queue drained; the database answers again",
				"db", s.target.about, "written", s.wq.written.Load(), "dropped", s.wq.dropped.Load())
		}
		s.wq.mu.Unlock()
		if !ok {
			return false
		}
	}
}

// probe asks the database for one row, within timeout, and clears the down mark if it
// answers and nothing was queued meanwhile (a record queued is written by the next drain,
// whose success clears the mark).
func (s *Store) probe(parent context.Context, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	_, err := bounded(s, ctx, func() (int, error) {
		var one int
		return one, s.get(ctx, s.db, &one, `SELECT 1`)
	})
	if err != nil {
		s.dropIdle(err)
		return false
	}
	s.lockQueue()
	defer s.wq.mu.Unlock()
	s.wq.unanswered = false
	if s.wq.down && s.wq.fifo.Len() == 0 {
		s.wq.down = false
		s.log.Info("stream rules: the database answers again", "db", s.target.about)
	}
	return true
}

// settleOneLocked ends p's write attempt with its error: written, refused (not retried)
// or failed (kept; false). The caller clears its chat's busy mark.
func (s *Store) settleOneLocked(p *pendingMove, err error) bool {
	switch {
	case err == nil:
		s.removeLocked(p)
		s.appliedLocked(p, true)
		close(p.done)
	case !retryable(err):
		s.carryLocked(p) // refused: its firings are not in the chat's state after all; its move is
		s.removeLocked(p)
		s.wq.rejected.Add(1)
		p.err = err
		close(p.done)
		s.log.Error("stream rules: move record refused by the database; not retried",
			"db", s.target.about, "chat", p.rec.ChatID, "move", p.rec.Move, "err", s.target.scrub(err))
	default:
		s.wq.failures.Add(1)
		s.wq.down, s.wq.unanswered = true, true
		return false
	}
	return true
}

// flush is a queue's goroutine: it drains on every kick, and after a failure retries
// with exponential backoff (retryMin to retryMax) and jitter, so that many
// replicas coming back at once do not hammer the database in step.
//
// On PostgreSQL flushers of them run : a batch marks its chats busy, so the
// second takes the next records of other chats while the first one's statement runs,
// and the database's cores write both. Only the first (primary) retries after a failure:
// the others stand aside while the database is down, so an outage sees one retry at a
// time, as with one flusher.
func (q *writeQueue) flush(primary bool) {
	defer q.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	attempt := 0
	// nil while backing off: new records do not cut the wait short
	wake, retry := q.wake, q.retry
	if !primary {
		retry = nil
	}
	for {
		select {
		case <-q.done:
			return
		case <-wake:
			q.linger()
		case <-retry:
		case <-timer.C:
		}
		select {
		case <-q.done:
			// Close ended the wait for a batch: its own flush writes what is queued. A drain
			// here would run on the ended life, fail, and count a write failure.
			return
		default:
		}
		if !primary {
			q.mu.Lock() // bare: reads a flag only
			down := q.down
			q.mu.Unlock()
			if down {
				q.passRetry()
				continue
			}
		}
		if q.store.drain(q.life, q.writeTimeout, true) {
			attempt, wake = 0, q.wake
			if primary {
				retry = q.retry
			}
			continue
		}
		if !primary {
			q.passRetry() // failed: the database is down now, the primary retries
			continue
		}
		attempt++
		wake, retry = nil, nil
		timer.Reset(backoff(attempt))
	}
}

// passRetry leaves a retry to the primary flusher: it may be waiting for a kick with no
// backoff timer running (the failure was another's: a SaveMove's first write or another
// flusher's batch), and the kick this flusher took would otherwise be lost.
func (q *writeQueue) passRetry() {
	select {
	case q.retry <- struct{}{}:
	default:
	}
}

// linger waits BatchDelay for more records to join the batch, unless a batch is full.
func (q *writeQueue) linger() {
	q.store.lockQueue()
	full := q.fifo.Len() >= q.batchSize
	q.mu.Unlock()
	if full || q.batchDelay <= 0 {
		return
	}
	t := time.NewTimer(q.batchDelay)
	defer t.Stop()
	select {
	case <-q.done:
	case <-t.C:
	}
}

// closeQueue stops new records, writes what is queued within flushTimeout, and logs
// what it could not write. Called by Close after the flushers stopped.
func (q *writeQueue) closeQueue() {
	ctx, cancel := context.WithTimeout(context.Background(), q.flushTimeout)
	defer cancel()
	q.mu.Lock() // bare, then the inbox is closed and moved in by hand
	q.inboxMu.Lock()
	q.inboxClosed = true // QueueMove refuses from now on; what it took is absorbed here
	q.inboxMu.Unlock()
	q.store.absorbLocked()
	q.closed = true
	var firsts chan struct{}
	if q.writing > 0 {
		firsts = make(chan struct{})
		q.firstsDone = firsts
	}
	q.mu.Unlock()
	if firsts != nil {
		// First writes under way finish first: one that fails now queues its record, and
		// the flush below writes it. The wait takes at most half of FlushTimeout, so that
		// the records queued before Close get their turn.
		t := time.NewTimer(min(q.writeTimeout, q.flushTimeout/2))
		select {
		case <-firsts:
		case <-t.C:
		}
		t.Stop()
	}
	q.mu.Lock() // bare: sets a flag only
	q.late = true
	q.mu.Unlock()
	for attempt := 1; ctx.Err() == nil; attempt++ {
		if q.store.drain(ctx, q.writeTimeout, false) {
			break
		}
		t := time.NewTimer(backoff(attempt))
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	q.store.lockQueue()
	defer q.mu.Unlock()
	if n := q.fifo.Len(); n > 0 {
		chats := map[string]bool{}
		firings := 0
		for e := q.fifo.Front(); e != nil; e = e.Next() {
			p := e.Value.(*pendingMove)
			chats[p.rec.ChatID] = true
			firings += len(p.rec.Firings)
			// A SaveMove still waiting for its record learns now that it is lost.
			p.err = errors.New("rulesdb: save move: not written before the store closed")
			close(p.done)
		}
		q.store.log.Error("stream rules: move records not written at close; they are lost",
			"db", q.store.target.about, "records", n, "chats", len(chats), "firings", firings, "waited", q.flushTimeout)
	}
}
