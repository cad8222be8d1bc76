package rulesdb_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulesdb"
)

// TestBatchBounds: a batch (Batches counts those of two records or more) never holds more than BatchSize records, nor more than 64 of
// one chat, however many are queued at once; every record is written, in order, its firings with it.
func TestBatchBounds(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, &rulesdb.Config{BatchSize: 2})
		for i := range 6 {
			if err := s.QueueMove(streamrules.MoveRecord{ChatID: fmt.Sprint("chat", i), Move: 1, Answered: true}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if n := s.Stats().Batches; n < 3 {
			t.Errorf("6 records of 6 chats in %d batches of at most 2 (a batch of one is not counted)", n)
		}

		one := open(t, dsn, nil)
		const moves = 130
		for move := int64(1); move <= moves; move++ {
			f := streamrules.Firing{Rule: "r", ChatID: "busy", Move: move, Mode: streamrules.ModeRemind, Tool: "shell", Outcome: streamrules.OutcomeComplied, At: time.Now()}
			if err := one.QueueMove(streamrules.MoveRecord{ChatID: "busy", Move: move, Answered: true, Firings: []streamrules.Firing{f}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := one.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if n := one.Stats().Batches; n < 3 {
			t.Errorf("%d records of one chat in %d batches of at most 64", moves, n)
		}
		if st, err := one.LoadChat(ctx, "busy"); err != nil || st.Moves != moves || st.LastFired["r"] != moves {
			t.Errorf("LoadChat = %+v, %v; want %d moves", st, err, moves)
		}
	})
}
