package rulesdb

// The inbox keeps the p99 of End low. QueueMove, which End calls for every move, does
// not take the write queue's lock (writeQueue.mu): the flusher holds it while it takes and
// settles batches, and every LoadChat takes it. QueueMove appends its record to the inbox
// under a lock of its own (writeQueue.inboxMu), held for an append, and kicks the flusher.
// Whoever takes mu to look at the queue takes the inbox first (lockQueue): it swaps the
// inbox's buffer in O(1) and queues its records in the order QueueMove took them,
// assigning their seqs then. So:
//
//   - order per chat: the inbox is one FIFO, absorbed before anything reads or writes a
//     chat's records (a SaveMove of the chat included: it queues behind them);
//   - LoadChat sees a queued record at once: it absorbs before it reads the chat;
//   - drop-oldest when full: the records are pushed as they were (pushLocked), and
//     QueueMove absorbs itself when the inbox alone holds QueueSize records;
//   - flush at Close: closeQueue closes the inbox (QueueMove refuses from then on) and
//     absorbs what it holds before it flushes.
//
// Where mu may be taken without absorbing, see writeQueue.

// lockQueue takes the write queue's mu and moves the inbox into the queue: the way in for
// anything that reads the records or a chat's state. The caller unlocks s.wq.mu.
func (s *Store) lockQueue() {
	s.wq.mu.Lock()
	s.absorbLocked()
}

// absorbLocked moves the inbox's records into the queue. Caller holds wq.mu.
func (s *Store) absorbLocked() {
	s.wq.inboxMu.Lock()
	in := s.wq.inbox
	s.wq.inbox = s.wq.spare[:0]
	s.wq.inboxMu.Unlock()
	for _, p := range in {
		p.chat = s.entryLocked(p.rec.ChatID)
		s.wq.nextSeq++
		p.seq = s.wq.nextSeq
		s.pushLocked(p, false)
	}
	clear(in)
	s.wq.spare = in[:0]
}
