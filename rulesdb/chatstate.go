package rulesdb

import (
	"container/list"
	"context"
	"maps"
	"time"

	"github.com/streamrules/streamrules"
)

// The chat state this process has seen (see "The write queue" in queue.go): the state
// last read for each chat, with this Store's records applied as they are written, and the
// records not written yet. Guarded by writeQueue.mu with the queue.

type chatEntry struct {
	id      string
	known   bool                  // base holds the chat's state as read, with this writer's records after it
	base    streamrules.ChatState // the chat in the database, as far as this process knows
	baseSeq int64                 // the last record of this writer that base holds
	pending []*pendingMove        // written after base, in order
	busy    bool                  // a write of this chat is in flight: its next one waits
	elem    *list.Element         // in lru, when pending is empty and !busy
	readAt  time.Time             // when base was read (Config.ChatCacheTTL)
	// tip is base with pending's records after baseSeq applied, kept as records are
	// queued and written, so that LoadChat does not apply a chat's whole backlog on every
	// read; valid while tipOK (anything else, a read, a drop or a refusal, clears it).
	tip   streamrules.ChatState
	tipOK bool
	// carry counts answered moves of records dropped or refused when none of the chat's
	// was queued after them: the next record queued takes them (pendingMove.carry).
	carry int64
}

// LoadChat implements streamrules.Store in one query, plus the records of the chat this
// process has not written yet. While the database is down (or when it fails now), a chat
// this process has seen is answered from memory; one it has not is an error, and the
// engine fails closed. It returns when ctx is done. On PostgreSQL concurrent LoadChats of
// different chats share one statement (readbatch.go).
func (s *Store) LoadChat(ctx context.Context, chatID string) (streamrules.ChatState, error) {
	s.lockQueue()
	if c := s.wq.chats[chatID]; c != nil && c.known && (s.wq.down || s.chatTTL > 0 && time.Since(c.readAt) < s.chatTTL) {
		st := c.stateLocked()
		s.wq.mu.Unlock()
		return st, nil
	}
	s.wq.mu.Unlock()
	if s.dialect == dialectPostgres {
		return s.loadChatShared(ctx, chatID)
	}
	st, seq, err := s.loadChat(ctx, chatID)
	if err != nil && retryable(err) {
		s.dropIdle(err)
	}
	s.lockQueue()
	defer s.wq.mu.Unlock()
	return s.mergeReadLocked(chatID, st, seq, err)
}

// mergeReadLocked takes what a read of the chat returned (its state and the last record
// of this writer it holds, or err) into the chat's entry, and returns the chat's state
// with the records not written yet. A retryable err marks the database down; a chat
// seen before is then answered from memory. Caller holds wq.mu.
func (s *Store) mergeReadLocked(chatID string, st streamrules.ChatState, seq int64, err error) (streamrules.ChatState, error) {
	if err != nil {
		if retryable(err) {
			s.wq.down, s.wq.unanswered = true, true
			s.wq.kick() // drain probes the database when nothing is queued
		}
		if c := s.wq.chats[chatID]; c != nil && c.known {
			return c.stateLocked(), nil
		}
		return streamrules.ChatState{}, err
	}
	s.wq.unanswered = false // it answered: claims are tried again
	c := s.entryLocked(chatID)
	// A read older than a record this process wrote since (seq below baseSeq) would lose
	// that record from view: keep what this process knows then.
	if !c.known || seq >= c.baseSeq {
		c.base, c.baseSeq, c.known = st, seq, true
		c.readAt = time.Now()
		c.tipOK = false
	}
	return c.stateLocked(), nil
}

// stateLocked is the chat's state with the records not written yet applied.
func (c *chatEntry) stateLocked() streamrules.ChatState {
	if !c.tipOK {
		c.tip = streamrules.ChatState{Moves: c.base.Moves, LastFired: maps.Clone(c.base.LastFired)}
		for _, p := range c.pending {
			if p.seq > c.baseSeq {
				apply(&c.tip, p.rec, p.carry)
			}
		}
		c.tip.Moves += c.carry
		c.tipOK = true
	}
	return streamrules.ChatState{Moves: c.tip.Moves, LastFired: maps.Clone(c.tip.LastFired)}
}

// queuedLocked keeps tip as p joins the chat's pending records.
func (c *chatEntry) queuedLocked(p *pendingMove) {
	if c.tipOK && p.seq > c.baseSeq {
		apply(&c.tip, p.rec, p.carry)
	}
}

// apply adds a record to a chat's state: its move, if answered, and carry more (the
// moves of records dropped before it, pendingMove.carry), and its firings.
func apply(st *streamrules.ChatState, rec streamrules.MoveRecord, carry int64) {
	st.Moves += carry
	if rec.Answered {
		st.Moves++
	}
	for _, f := range rec.Firings {
		if st.LastFired == nil {
			st.LastFired = map[string]int64{}
		}
		st.LastFired[f.Rule] = max(st.LastFired[f.Rule], f.Move)
	}
}

// entryLocked returns the chat's entry, made if new, and marks it recently used. A chat
// with nothing queued is forgotten when chatCacheSize others were used since.
func (s *Store) entryLocked(chatID string) *chatEntry {
	q := &s.wq
	if c := q.chats[chatID]; c != nil {
		if c.elem != nil {
			q.lru.MoveToBack(c.elem)
		}
		return c
	}
	c := &chatEntry{id: chatID}
	q.chats[chatID] = c
	c.elem = q.lru.PushBack(c)
	for q.lru.Len() > chatCacheSize {
		old := q.lru.Remove(q.lru.Front()).(*chatEntry)
		old.elem = nil
		delete(q.chats, old.id)
	}
	return c
}

// markBusyLocked marks a write of c in flight; a busy chat is never forgotten.
func (s *Store) markBusyLocked(c *chatEntry) {
	c.busy = true
	if c.elem != nil {
		s.wq.lru.Remove(c.elem)
		c.elem = nil
	}
}

// settleLocked puts a chat with nothing queued or in flight back among the forgettable.
func (s *Store) settleLocked(c *chatEntry) {
	if len(c.pending) == 0 && !c.busy && c.elem == nil {
		c.elem = s.wq.lru.PushBack(c)
	}
}

// appliedLocked records that p is in the database. queued: p was among the chat's
// pending records (the caller removed it), and tip holds it already.
func (s *Store) appliedLocked(p *pendingMove, queued bool) {
	s.wq.written.Add(1)
	c := p.chat
	if c.known && p.seq > c.baseSeq {
		apply(&c.base, p.rec, p.carry)
		c.baseSeq = p.seq
		if !queued {
			c.tipOK = false
		}
	} else if !c.known {
		c.tipOK = false
	}
	s.settleLocked(c)
}
