package rulesdb_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"go.uber.org/goleak"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/rulesdb"
)

// The fault guarantees of the write queue, on QueueMove's path (the inbox, batch.go), the
// one End takes: the SaveMove tests (fault_test.go) do not go through the inbox.

// TestQueueMoveFlushedAtClose: records QueueMove took and the flusher has not written yet
// (it lingers for BatchDelay) are written by Close, in order per chat.
func TestQueueMoveFlushedAtClose(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s, err := rulesdb.Open(context.Background(), dsn, &rulesdb.Config{Logger: quietLogger(), BatchDelay: time.Hour, ReloadInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		for move := int64(1); move <= 5; move++ {
			for _, chat := range []string{"a", "b"} {
				rec := streamrules.MoveRecord{ChatID: chat, Move: move, Answered: true,
					Firings: []streamrules.Firing{{Rule: "r", Mode: streamrules.ModeRemind, Tool: "shell"}}}
				if err := s.QueueMove(rec); err != nil {
					t.Fatal(err)
				}
			}
		}
		if w := s.Stats().WrittenMoves; w != 0 {
			t.Fatalf("written %d before Close; the flusher should still linger", w)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.QueueMove(streamrules.MoveRecord{ChatID: "a", Move: 6, Answered: true}); err == nil {
			t.Fatal("QueueMove after Close: want an error")
		}
		if w := s.Stats().WrittenMoves; w != 10 {
			t.Fatalf("Close wrote %d of 10 records", w)
		}
		r := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
		for _, chat := range []string{"a", "b"} {
			st, err := r.LoadChat(context.Background(), chat)
			if err != nil {
				t.Fatal(err)
			}
			if st.Moves != 5 || st.LastFired["r"] != 5 {
				t.Fatalf("chat %s after Close: moves %d, r last fired in %d; want 5 and 5", chat, st.Moves, st.LastFired["r"])
			}
		}
	})
}

// TestQueueMoveOutage: QueueMove through an outage never fails; a full queue drops its
// oldest records and counts each; once the database answers, the rest is written, once
// each and in order per chat, and nothing else is lost.
func TestQueueMoveOutage(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // Close waits for everything it started
	cl := pgtest.NewCluster(t)
	dsn := cl.DSN(t)
	s, err := rulesdb.Open(context.Background(), dsn, &rulesdb.Config{Logger: quietLogger(), QueueSize: 3,
		WriteTimeout: time.Second, FlushTimeout: 30 * time.Second, ReloadInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	cl.Stop(t)
	const n = 8
	for move := int64(1); move <= n; move++ {
		rec := streamrules.MoveRecord{ChatID: "c", Move: move, Answered: true,
			Firings: []streamrules.Firing{{Rule: "r", Mode: streamrules.ModeRemind, Tool: "shell"}}}
		if err := s.QueueMove(rec); err != nil {
			t.Fatalf("QueueMove %d: %v", move, err)
		}
	}
	queued := s.Stats().QueuedMoves // takes what the inbox holds into the queue first
	dropped := s.Stats().DroppedMoves
	if dropped == 0 || int64(queued)+dropped != n {
		t.Fatalf("queued %d, dropped %d; want some dropped and the two summing to %d", queued, dropped, n)
	}
	cl.Start(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if w := s.Stats().WrittenMoves; w != n-dropped {
		t.Fatalf("written %d, want the %d kept", w, n-dropped)
	}
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var byID []int64
	if err := db.Select(&byID, `SELECT move FROM stream_rule_stat WHERE chat_id = 'c' ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	if int64(len(byID)) != n-dropped || !slices.IsSorted(byID) || byID[len(byID)-1] != n {
		t.Fatalf("stat rows' moves in write order %v; want the %d kept, in order, ending with %d", byID, n-dropped, n)
	}
	if c := slices.Compact(slices.Clone(byID)); len(c) != len(byID) {
		t.Fatalf("stat rows' moves %v: a record written twice", byID)
	}
	var moves int64
	// Every answered move counts, the dropped ones too (carried by the records kept).
	if err := db.QueryRow(`SELECT moves FROM stream_chat WHERE chat_id = 'c'`).Scan(&moves); err != nil || moves != n {
		t.Fatalf("chat moves %d (%v), want %d", moves, err, n)
	}
}
