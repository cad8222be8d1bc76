package rulesdb_test

import (
	"context"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/rulesdb"
)

// answered is a move record of chat with one firing of rule.
func answered(chat string, move int64, rule string) streamrules.MoveRecord {
	return streamrules.MoveRecord{ChatID: chat, Move: move, Answered: true,
		Firings: []streamrules.Firing{{Rule: rule, Mode: streamrules.ModeRemind, Tool: "shell"}}}
}

// loadChat is LoadChat that fails the test on an error.
func loadChat(t *testing.T, s *rulesdb.Store, chat string) streamrules.ChatState {
	t.Helper()
	st, err := s.LoadChat(context.Background(), chat)
	if err != nil {
		t.Fatalf("LoadChat(%q): %v", chat, err)
	}
	return st
}

// wantChat fails unless st has moves moves and rule last fired at move at.
func wantChat(t *testing.T, who string, st streamrules.ChatState, moves int64, rule string, at int64) {
	t.Helper()
	if st.Moves != moves || st.LastFired[rule] != at {
		t.Errorf("%s: chat state %+v, want %d moves and %s last fired at move %d", who, st, moves, rule, at)
	}
}

// TestLoadChatSeesOtherWriters: while the database is up, LoadChat reads it, so a chat a
// replica has seen still shows the moves another replica wrote since (a `once` rule
// another replica fired stays fired here).
func TestLoadChatSeesOtherWriters(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		a := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
		b := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
		wantChat(t, "a, new chat", loadChat(t, a, "c"), 0, "r1", 0)
		if err := a.SaveMove(ctx, answered("c", 1, "r1")); err != nil {
			t.Fatal(err)
		}
		wantChat(t, "a after its move", loadChat(t, a, "c"), 1, "r1", 1)
		if err := b.SaveMove(ctx, answered("c", 2, "r2")); err != nil {
			t.Fatal(err)
		}
		st := loadChat(t, a, "c")
		wantChat(t, "a after b's move", st, 2, "r2", 2)
		wantChat(t, "a after b's move", st, 2, "r1", 1)
	})
}

// TestStoreRecoversAfterOutage: once the queue of an outage is written, the store is up
// again: SaveMove writes before it returns, and LoadChat reads the database (another
// replica's moves show) instead of answering from memory.
func TestStoreRecoversAfterOutage(t *testing.T) {
	cl := pgtest.NewCluster(t)
	dsn := cl.DSN(t)
	ctx := context.Background()
	cfg := func() *rulesdb.Config {
		return &rulesdb.Config{ReloadInterval: -1, WriteTimeout: time.Second, FlushTimeout: 30 * time.Second}
	}
	a, b := open(t, dsn, cfg()), open(t, dsn, cfg())
	wantChat(t, "before the outage", loadChat(t, a, "c"), 0, "r1", 0)

	cl.Stop(t)
	if err := a.SaveMove(ctx, answered("c", 1, "r1")); err != nil {
		t.Fatalf("SaveMove in the outage: %v", err)
	}
	if a.Stats().QueuedMoves != 1 {
		t.Fatalf("%d records queued in the outage, want 1", a.Stats().QueuedMoves)
	}
	wantChat(t, "a in the outage, from memory", loadChat(t, a, "c"), 1, "r1", 1)
	cl.Start(t)
	waitUntil(t, "the queue written after the outage", func() bool { return a.Stats().QueuedMoves == 0 && a.Stats().WrittenMoves == 1 })

	if err := b.SaveMove(ctx, answered("c", 2, "r2")); err != nil {
		t.Fatal(err)
	}
	wantChat(t, "a after the outage and b's move", loadChat(t, a, "c"), 2, "r2", 2)

	// Written before SaveMove returns: b reads it at once.
	if err := a.SaveMove(ctx, answered("c", 3, "r3")); err != nil {
		t.Fatal(err)
	}
	if q := a.Stats().QueuedMoves; q != 0 {
		t.Errorf("%d records queued with the database up", q)
	}
	wantChat(t, "b after a's move", loadChat(t, b, "c"), 3, "r3", 3)
}
