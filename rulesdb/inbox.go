package rulesdb

// The inbox (issue 22: p99 of End). QueueMove, which End calls for every move, does not
// take the write queue's lock (qmu): the flusher holds it while it takes and settles
// batches, and every LoadChat takes it. QueueMove appends its record to the inbox under
// a lock of its own (imu), held for an append, and kicks the flusher. Whoever takes qmu to
// look at the queue takes the inbox first (lockQueue): it swaps the inbox's buffer in
// O(1) and queues its records in the order QueueMove took them, assigning their seqs
// then. So, as before:
//
//   - order per chat: the inbox is one FIFO, absorbed before anything reads or writes a
//     chat's records (a SaveMove of the chat included: it queues behind them);
//   - LoadChat sees a queued record at once: it absorbs before it reads the chat;
//   - drop-oldest when full: the records are pushed as they were (pushLocked), and
//     QueueMove absorbs itself when the inbox alone holds QueueSize records;
//   - flush at Close: closeQueue closes the inbox (QueueMove refuses from then on) and
//     absorbs what it holds before it flushes.

// lockQueue takes qmu and moves the inbox into the queue. The caller unlocks qmu.
func (s *Store) lockQueue() {
	s.qmu.Lock()
	s.absorbLocked()
}

// absorbLocked moves the inbox's records into the queue. Caller holds qmu.
func (s *Store) absorbLocked() {
	s.imu.Lock()
	in := s.inbox
	s.inbox = s.spare[:0]
	s.imu.Unlock()
	for _, p := range in {
		p.chat = s.entryLocked(p.rec.ChatID)
		s.wq.nextSeq++
		p.seq = s.wq.nextSeq
		s.pushLocked(p, false)
	}
	clear(in)
	s.spare = in[:0]
}
