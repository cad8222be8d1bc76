package rulesdb

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamrules/streamrules"
)

// The write queue keeps the move records the database did not take, and writes them, in
// order per chat, once it answers again. A move never waits on it: SaveMove tries the
// database once, within its context, and queues what it could not write; a chat with
// records queued queues its new ones behind them without trying, and so does every chat
// while the database is known to be down. One goroutine (flush) retries, with backoff and
// jitter. Each record carries a seq that the database keeps per (chat, writer), so a retry
// after an unknown outcome is a no-op there (see saveMovePG).
//
// The queue also keeps the chat state this process has seen (chatstate.go): the state last read for a
// chat, with its own records applied as they are written. LoadChat adds the records not
// written yet, and answers from it when the database is down, so a `once` rule stays
// fired and move numbers keep growing through an outage.

const (
	defaultQueueSize    = 10000
	defaultWriteTimeout = 5 * time.Second
	defaultFlushTimeout = 10 * time.Second
	// chatCacheSize bounds the chats whose state is kept without records queued.
	chatCacheSize = 10000
	retryMin      = 50 * time.Millisecond
	retryMax      = 5 * time.Second
)

// writeQueue is the write queue: the records, the chat state beside them, the inbox
// QueueMove feeds, and the flushers that write them (flush.go). The Store writes through it
// and Close closes it: Start starts the flushers once the database is ready, Close stops
// them and writes what is left, within FlushTimeout.
//
// Its locks, in the order they nest:
//
//   - mu guards the records (fifo, each chat's pending list), the chat entries (chats,
//     lru and what each *chatEntry holds), the flags (down, unanswered, closed, late,
//     writing, firstsDone), nextSeq and spare. Take it with Store.lockQueue, which also
//     moves the inbox in: whatever reads the records or a chat's state must see every
//     record taken so far. Taking mu bare (mu.Lock) is safe in two cases only, each
//     marked where it is done: the section reads or sets only the flags, which moving
//     the inbox in never touches; or it settles records it took from the queue under
//     lockQueue (the end of a write attempt). Those are older than anything in the
//     inbox, which is pushed behind them when it is next moved in, so each chat's order
//     holds.
//   - inboxMu guards inbox and inboxClosed, held for an append (QueueMove) or a swap
//     (absorbLocked). It is taken alone, or inside mu; never mu inside it.
//
// The counters are atomics, read without a lock.
type writeQueue struct {
	store *Store // writes the batches (drain) and keeps the chat state

	// Set by init, read-only after.
	max          int           // records queued at most (Config.QueueSize)
	writeTimeout time.Duration // one write attempt (Config.WriteTimeout)
	flushTimeout time.Duration // Close's final flush (Config.FlushTimeout)
	batchSize    int           // group commit (batch.go)
	batchDelay   time.Duration // group commit: the wait for a batch to fill
	flushers     int           // batches written at once (flushers)

	mu    sync.Mutex
	chats map[string]*chatEntry
	lru   list.List // chats without records queued, least recently used first (*chatEntry)
	fifo  list.List // records queued, oldest first (*pendingMove)
	down  bool      // the last call on the database failed: queue without trying
	// unanswered: no call has found the database answering since one found it down;
	// claims fail at once meanwhile. Unlike down it ends at any answer (a read, a claim,
	// a probe), not only once the queue is written: a claim has nothing queued to wait for.
	unanswered bool
	closed     bool // Close began: SaveMove refuses
	nextSeq    int64
	// writing counts the SaveMove calls writing their record themselves: Close lets them
	// finish (within a bound) before it flushes, so that a record whose first write
	// fails meanwhile is queued in time to be flushed. firstsDone, made by Close when some
	// are under way, is closed when the last one is done. late: Close waits no more; a
	// first write that fails now is not queued (nothing would write it) but reported.
	writing    int
	firstsDone chan struct{}
	late       bool
	spare      []*pendingMove // the inbox's other buffer

	inboxMu     sync.Mutex
	inbox       []*pendingMove // taken by QueueMove, not yet in fifo (inbox.go)
	inboxClosed bool           // Close began: QueueMove refuses

	wake chan struct{} // capacity 1: the flusher has work
	// retry (capacity 1) passes a kick to the primary flusher: another flusher that takes
	// a kick while the database is down leaves the retry to it, and must not swallow it.
	retry chan struct{}

	// The flushers' lifecycle (Start, Close).
	life      context.Context    // ends when Close begins: the flushers' writes stop
	endLife   context.CancelFunc // ends life
	done      chan struct{}      // closed when Close begins: the flushers return
	wg        sync.WaitGroup     // the flushers
	closeOnce sync.Once

	dropped, rejected, failures, written, batches atomic.Int64
	// inflight counts write attempts still running, including those their caller stopped
	// waiting for (see pendingMove.running): Close keeps the idempotency rows while one
	// may still commit.
	inflight atomic.Int64
}

// init readies an empty queue for s with cfg's sizes and timeouts; cfg has its defaults.
func (q *writeQueue) init(s *Store, cfg *Config) {
	q.store = s
	q.max = cfg.QueueSize
	q.writeTimeout = cfg.WriteTimeout
	q.flushTimeout = cfg.FlushTimeout
	q.batchSize = cfg.BatchSize
	q.batchDelay = cfg.BatchDelay
	q.flushers = flushers(s.dialect)
	q.chats = map[string]*chatEntry{}
	q.wake = make(chan struct{}, 1)
	q.retry = make(chan struct{}, 1)
	q.done = make(chan struct{})
	q.life, q.endLife = context.WithCancel(context.Background())
}

// Start starts the flushers. Records queued before it wait for them; Open calls it once
// the database is migrated.
func (q *writeQueue) Start() {
	for i := range q.flushers {
		q.wg.Add(1)
		go q.flush(i == 0)
	}
}

// Close stops the flushers, then refuses new records, writes what is queued within
// flushTimeout and logs what it could not write (closeQueue). Safe to call twice, and
// without Start.
func (q *writeQueue) Close() {
	q.closeOnce.Do(func() {
		close(q.done)
		q.endLife()
		q.wg.Wait()
		q.closeQueue()
	})
}

type pendingMove struct {
	rec  streamrules.MoveRecord
	seq  int64
	chat *chatEntry
	elem *list.Element // in fifo
	done chan struct{} // closed when the record leaves the queue: written, refused or dropped
	err  error         // why it left unwritten; set before done is closed
	// running counts this record's write attempts still running, including one its caller
	// stopped waiting for (see bounded): such an attempt may still commit, so the record
	// must not be dropped meanwhile and counted as lost.
	running atomic.Int32
	// group is the seq of the last record of the group this record was first tried in
	// (0: never tried). A retry tries the same group again, so that the chat's guard row
	// holds either less than the group's first seq or its last (batch.go).
	group int64
	// carry counts the answered moves of the chat's records that left the queue unwritten
	// before this one (dropped by a full queue, refused by the database): its write adds
	// them to the chat's move counter with its own, so that the counter, and the move
	// numbers read from it, never fall back for what was dropped (see carryLocked).
	carry int64
}

// attempt writes p once, within ctx.
func (s *Store) attempt(ctx context.Context, p *pendingMove) error {
	p.running.Add(1)
	s.wq.inflight.Add(1)
	return s.writeMove(ctx, p.rec, p.seq, p.carry, func() {
		p.running.Add(-1)
		s.wq.inflight.Add(-1)
	})
}

// SaveMove implements streamrules.Store. It writes the record within ctx; if the database
// does not take it (down, too slow, an unknown outcome), the record is queued and written
// later, in order per chat, and SaveMove returns nil. A chat with records queued, or any
// chat while the database is known to be down, queues without waiting. An error means the
// record is lost: the database refused it for good, or the store is closed.
func (s *Store) SaveMove(ctx context.Context, rec streamrules.MoveRecord) error {
	rec = s.stampMove(rec)
	s.lockQueue()
	if s.wq.closed {
		s.wq.mu.Unlock()
		return errors.New("rulesdb: save move: store closed")
	}
	c := s.entryLocked(rec.ChatID)
	s.wq.nextSeq++
	p := &pendingMove{rec: rec, seq: s.wq.nextSeq, chat: c, done: make(chan struct{})}
	if s.wq.down || c.busy || len(c.pending) > 0 {
		down := s.wq.down
		s.pushLocked(p, false)
		s.wq.mu.Unlock()
		s.wq.kick()
		if down {
			return nil // no wait: the database is down, the record keeps its place
		}
		// Another move of this chat is being written: this one goes right after it, and the
		// caller waits for it as it would for its own write, within ctx and WriteTimeout
		// (a caller without a deadline must not wait out an outage that begins now).
		wait := time.NewTimer(s.wq.writeTimeout)
		defer wait.Stop()
		select {
		case <-p.done:
			return p.err
		case <-ctx.Done():
		case <-wait.C:
		}
		return nil
	}
	s.markBusyLocked(c)
	s.wq.writing++
	if c.carry > 0 {
		p.carry, c.carry = c.carry, 0 // written with p now: the state shows it once p is
		c.tipOK = false
	}
	s.wq.mu.Unlock()

	err := s.attempt(ctx, p)

	lost := "stream rules: move record refused by the database; not retried"
	s.wq.mu.Lock() // bare: settles the record taken under lockQueue above
	c.busy = false
	if s.wq.writing--; s.wq.writing == 0 && s.wq.firstsDone != nil {
		close(s.wq.firstsDone)
		s.wq.firstsDone = nil
	}
	switch {
	case err == nil:
		s.appliedLocked(p, false)
		close(p.done)
	case !retryable(err):
		s.wq.rejected.Add(1)
		s.carryLocked(p)
		s.settleLocked(c)
	case s.wq.late:
		// Close gave up waiting for this write: the flush may be over, and nothing would
		// write the record. Say so rather than queue it to be lost in silence.
		s.settleLocked(c)
		lost = "stream rules: move record not written before the store closed; it is lost"
		err = fmt.Errorf("rulesdb: save move: not written before the store closed: %w", err)
	default:
		s.wq.failures.Add(1)
		defer s.dropIdle(err) // after wq.mu is released: closing connections writes to them
		p.group = p.seq       // tried alone: retried alone
		s.pushLocked(p, true)
		wasDown := s.wq.down
		s.wq.down, s.wq.unanswered = true, true
		if !wasDown {
			s.log.Warn("stream rules: the database did not take a move record; queued, written when it answers",
				"db", s.target.about, "chat", rec.ChatID, "move", rec.Move, "err", s.target.scrub(err))
		}
		err = nil
	}
	more := len(c.pending) > 0
	s.wq.mu.Unlock()
	if more {
		s.wq.kick()
	}
	if err != nil {
		s.log.Error(lost, "db", s.target.about, "chat", rec.ChatID, "move", rec.Move, "err", s.target.scrub(err))
	}
	return err
}

// pushLocked queues p: at the back, or at the front of its chat when a first try of it
// failed (records of the chat queued meanwhile are younger). A full queue drops its
// oldest record that is not being written.
func (s *Store) pushLocked(p *pendingMove, first bool) {
	q := &s.wq
	if q.fifo.Len() >= q.max {
		s.dropOldestLocked()
	}
	c := p.chat
	if c.elem != nil {
		q.lru.Remove(c.elem)
		c.elem = nil
	}
	if c.carry > 0 {
		p.carry, c.carry = p.carry+c.carry, 0
		c.tipOK = false
	}
	if first {
		c.pending = append([]*pendingMove{p}, c.pending...)
		p.elem = q.fifo.PushFront(p)
	} else {
		c.pending = append(c.pending, p)
		p.elem = q.fifo.PushBack(p)
	}
	c.queuedLocked(p)
}

func (s *Store) dropOldestLocked() {
	q := &s.wq
	for e := q.fifo.Front(); e != nil; e = e.Next() {
		p := e.Value.(*pendingMove)
		if p.chat.busy && (p.chat.pending[0] == p || p.group != 0 && p.group == p.chat.pending[0].group) || p.running.Load() > 0 {
			continue // being written now (alone, or in its group of a batch)
		}
		s.carryLocked(p)
		s.removeLocked(p)
		p.err = errors.New("rulesdb: save move: dropped, the write queue was full")
		close(p.done)
		n := q.dropped.Add(1)
		// The first drop of an outage is a warning; the rest are counted (Stats.DroppedMoves)
		// and summed up when the queue drains.
		level := "debug"
		if n == 1 || n%1000 == 0 {
			level = "warn"
		}
		attrs := []any{"db", s.target.about, "chat", p.rec.ChatID, "move", p.rec.Move, "firings", len(p.rec.Firings), "dropped_so_far", n, "queue_size", q.max}
		if level == "warn" {
			s.log.Warn("stream rules: write queue full; oldest move record dropped", attrs...)
		} else {
			s.log.Debug("stream rules: write queue full; oldest move record dropped", attrs...)
		}
		return
	}
}

// carryLocked keeps the answered moves p adds to its chat's counter, p leaving the queue
// unwritten: the chat's next record queued adds them (pendingMove.carry), or, if it has
// none yet, the chat's entry holds them for the next one (chatEntry.carry). Moves stay
// counted, so move numbers keep growing through drops and no later move reuses the
// number of one whose record went; only the dropped record's stat rows are lost.
// Caller holds wq.mu, before p leaves c.pending.
func (s *Store) carryLocked(p *pendingMove) {
	n := p.carry
	if p.rec.Answered {
		n++
	}
	p.carry = 0
	c := p.chat
	c.tipOK = false // its firings leave the state, its moves stay
	if n == 0 {
		return
	}
	if i := slices.Index(c.pending, p); i >= 0 && i+1 < len(c.pending) {
		c.pending[i+1].carry += n
		return
	}
	c.carry += n
}

func (s *Store) removeLocked(p *pendingMove) {
	s.wq.fifo.Remove(p.elem)
	c := p.chat
	for i, x := range c.pending {
		if x == p {
			c.pending = append(c.pending[:i], c.pending[i+1:]...)
			break
		}
	}
	s.settleLocked(c)
}

// errDown: the database is known to be down (writeQueue.down); the call was not tried.
var errDown = errors.New("the database is down; not tried until it answers again")

// markDown marks the database down after a failed read or claim, and has the flusher find
// out when it answers again (drain probes it when nothing is queued).
func (s *Store) markDown() {
	s.wq.mu.Lock() // bare: sets flags only
	s.wq.down, s.wq.unanswered = true, true
	s.wq.mu.Unlock()
	s.wq.kick()
}

func (q *writeQueue) kick() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}
