package rulesdb

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"time"

	"github.com/lib/pq"

	"github.com/streamrules/streamrules"
)

// Shared reads: fewer statements per move. Without Config.ChatCacheTTL every
// BeginMove reads its chat: one statement per move, which bounds a busy replica by the
// database's statement rate. On PostgreSQL, concurrent LoadChats share statements the way
// the flusher's batches share writes, without waiting for company:
//
//   - a LoadChat that must read joins the open read, a set of chats not sent yet;
//   - if no read is running (fewer than maxReads), it sends the open read at once (alone:
//     loadChat, the single-chat statement; with others: loadChats, one statement for all
//     of them); otherwise the open read grows until a running one returns, and that
//     goroutine sends it next, or until it holds readShare chats, and goes then. So a
//     lone move reads as before, and under load one statement serves the chats of every
//     move that began while the last one ran;
//   - each chat's rows are merged into its entry as a single read would be
//     (mergeReadLocked: the writer's seq guards against a stale read), under one lock
//     for the whole read;
//   - each LoadChat waits within its own ctx (the engine's StoreTimeout): on its end it
//     answers as a failed read does (from memory for a chat seen before, else an error).
//     The statement itself is bounded by the latest deadline among its chats (WriteTimeout
//     when one has none).
//
// On Citus loadChats names many chat ids: a multi-shard read (docs/scale.md says how to
// split it per shard). SQLite reads in process and does not share.

// maxReads is how many read statements of LoadChat run at once on PostgreSQL, unless the
// open read gathered readShare chats: then it goes at once too, so that a busy replica
// does not wait for a running read to end to send the next one, and each statement still
// serves readShare chats at least: past maxReads, reads add at most 1/readShare statements
// per move. One: a lone move reads at once, as before; with two, under load, the second
// read went out with the first chat that arrived and served few (measured at 64 workers:
// 1 and 32 gave the most moves/s at under 0.1 statements a move; 16 gave more than 0.1).
const (
	maxReads  = 1
	readShare = 32
)

type readQueue struct {
	open    *readBatch // chats waiting for the next read; nil: none
	running int        // read statements under way (goroutines serving them)
}

type readBatch struct {
	chats    []string
	index    map[string]int // chats' positions
	res      []readResult   // per chat, set before done is closed
	done     chan struct{}
	deadline time.Time // the latest of the members'
	forever  bool      // a member has no deadline: bound by WriteTimeout
}

type readResult struct {
	st  streamrules.ChatState
	err error
}

// loadChatShared reads chatID in the next shared read and waits for it within ctx.
func (s *Store) loadChatShared(ctx context.Context, chatID string) (streamrules.ChatState, error) {
	s.rmu.Lock()
	b := s.reads.open
	if b == nil {
		b = &readBatch{index: map[string]int{}, done: make(chan struct{})}
		s.reads.open = b
	}
	i, ok := b.index[chatID]
	if !ok {
		i = len(b.chats)
		b.index[chatID] = i
		b.chats = append(b.chats, chatID)
	}
	if d, ok := ctx.Deadline(); !ok {
		b.forever = true
	} else if d.After(b.deadline) {
		b.deadline = d
	}
	start := s.reads.running < maxReads || len(b.chats) >= readShare
	if start {
		s.reads.running++
		s.reads.open = nil
	}
	s.rmu.Unlock()
	if start {
		go s.serveReads(b)
	} else if s.readJoined != nil {
		s.readJoined()
	}
	select {
	case <-b.done:
		r := b.res[i]
		if ok { // another move of the chat shares the result: each gets its own map
			r.st.LastFired = maps.Clone(r.st.LastFired)
		}
		return r.st, r.err
	case <-ctx.Done():
	}
	err := fmt.Errorf("rulesdb: load chat %q: %w", chatID, ctx.Err())
	s.dropIdle(err)
	s.lockQueue()
	defer s.wq.mu.Unlock()
	return s.mergeReadLocked(chatID, streamrules.ChatState{}, 0, err)
}

// serveReads sends b, then the reads that gathered meanwhile, until none is open.
func (s *Store) serveReads(b *readBatch) {
	for {
		s.readShared(b)
		s.rmu.Lock()
		b = s.reads.open
		if b == nil {
			s.reads.running--
			s.rmu.Unlock()
			return
		}
		s.reads.open = nil
		s.rmu.Unlock()
	}
}

// readShared sends one read for b's chats, merges each chat's state, and closes b.done.
func (s *Store) readShared(b *readBatch) {
	if s.readHook != nil {
		s.readHook(b.chats)
	}
	deadline := b.deadline
	if b.forever || deadline.IsZero() {
		deadline = time.Now().Add(s.wq.writeTimeout)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	var (
		got map[string]loadedChat
		err error
	)
	if len(b.chats) == 1 {
		var st streamrules.ChatState
		var seq int64
		st, seq, err = s.loadChat(ctx, b.chats[0])
		got = map[string]loadedChat{b.chats[0]: {st, seq}}
	} else {
		got, err = s.loadChats(ctx, b.chats)
	}
	cancel()
	if err != nil && retryable(err) {
		s.dropIdle(err)
	}
	b.res = make([]readResult, len(b.chats))
	s.lockQueue()
	for i, id := range b.chats {
		e := err
		if e != nil && len(b.chats) > 1 {
			e = fmt.Errorf("rulesdb: load chat %q: %w", id, err)
		}
		r := got[id]
		b.res[i].st, b.res[i].err = s.mergeReadLocked(id, r.st, r.seq, e)
	}
	s.wq.mu.Unlock()
	close(b.done)
}

type loadedChat struct {
	st  streamrules.ChatState
	seq int64
}

// loadChats reads many chats in one statement: loadChat's rows for each, with its id.
// A chat never seen has the zero state (its row of k joins nothing).
func (s *Store) loadChats(ctx context.Context, chats []string) (map[string]loadedChat, error) {
	out, err := bounded(s, ctx, func() (map[string]loadedChat, error) {
		rows, err := s.query(ctx, s.db, loadChatsPG, pq.StringArray(chats), s.writer)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		out := make(map[string]loadedChat, len(chats))
		for rows.Next() {
			var (
				id                string
				moves, last, wseq sql.NullInt64
				rule              sql.NullString
			)
			if err := rows.Scan(&id, &moves, &rule, &last, &wseq); err != nil {
				return nil, err
			}
			l := out[id]
			l.st.Moves, l.seq = moves.Int64, wseq.Int64
			if rule.Valid {
				if l.st.LastFired == nil {
					l.st.LastFired = map[string]int64{}
				}
				l.st.LastFired[rule.String] = last.Int64
			}
			out[id] = l
		}
		return out, rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("rulesdb: load %d chats: %w", len(chats), err)
	}
	return out, nil
}

// loadChatsPG is loadChat for many chats (PostgreSQL): one row at least per chat id in $1.
const loadChatsPG = `SELECT k.chat_id, c.moves, r.rule, r.last_fired_move, w.seq
FROM unnest($1::text[]) AS k(chat_id)
LEFT JOIN stream_chat c ON c.chat_id = k.chat_id
LEFT JOIN stream_chat_rule r ON r.chat_id = k.chat_id
LEFT JOIN stream_chat_writer w ON w.chat_id = k.chat_id AND w.writer = $2`
