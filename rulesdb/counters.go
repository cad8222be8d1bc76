package rulesdb

// Stats is what a Store has counted since Open: its statements and its write queue. All
// of it is kept in memory; reading it sends nothing to the database.
type Stats struct {
	// RoundTrips is the statements (queries, execs, BEGINs, COMMITs and ROLLBACKs) sent
	// to the database. A test or benchmark asserts with it that tool calls and answers cost
	// none, and a move at most two (LoadChat, SaveMove). On PostgreSQL each counts as one
	// network round trip (binary_parameters is on unless the DSN says otherwise, so a
	// statement with parameters is not parsed in a separate trip).
	RoundTrips int64
	// WriteStatements is the part of RoundTrips the write path (move records, single or
	// batched) sent: the benchmark's statements per move.
	WriteStatements int64
	// QueuedMoves is the move records waiting in the write queue now: the database did
	// not take them yet.
	QueuedMoves int
	// WrittenMoves is the move records written, first try or retry.
	WrittenMoves int64
	// DroppedMoves is the move records dropped because the write queue was full
	// (Config.QueueSize): the oldest goes, a move never waits.
	DroppedMoves int64
	// RejectedMoves is the move records the database refused with an error a retry cannot
	// cure (a constraint or a value it will not store). They are logged and not retried.
	RejectedMoves int64
	// MoveWriteFailures is the attempts to write a move record that failed and were kept
	// for a retry (each retry of one record counts): a sick database.
	MoveWriteFailures int64
	// Batches is the batches the flushers wrote.
	Batches int64
}

// Stats returns the store's counters, as sql.DB.Stats does the pool's. It takes the write
// queue's lock for a moment (for QueuedMoves) and sends no statement; safe for concurrent
// use. The counters are read one by one, not as one snapshot.
func (s *Store) Stats() Stats {
	s.lockQueue()
	queued := s.wq.fifo.Len()
	s.wq.mu.Unlock()
	return Stats{
		RoundTrips:        s.trips.Load(),
		WriteStatements:   s.wtrips.Load(),
		QueuedMoves:       queued,
		WrittenMoves:      s.wq.written.Load(),
		DroppedMoves:      s.wq.dropped.Load(),
		RejectedMoves:     s.wq.rejected.Load(),
		MoveWriteFailures: s.wq.failures.Load(),
		Batches:           s.wq.batches.Load(),
	}
}
