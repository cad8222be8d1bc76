package rulesdb_test

import (
	"context"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulesdb"
)

// TestWriteStatementsCount: WriteStatements, the figure the throughput benchmark divides
// into statements per move, counts exactly the statements a batch sends. Three queued
// moves of two chats, one with a firing, go out in one batch at Close: on PostgreSQL one
// statement; on SQLite BEGIN and COMMIT, a guard per chat, a chat upsert per move, the
// last-fired and stat rows of the move with a firing, one outcome counter delta and one
// delivery counter delta: 11. No write fails on the way (the flusher, woken by Close in
// its wait for the batch, once drained on the ended life and counted a failure).
func TestWriteStatementsCount(t *testing.T) {
	want := map[string]int64{"postgres": 1, "sqlite": 11}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, err := rulesdb.Open(ctx, b.dsn(t), &rulesdb.Config{Logger: quietLogger(), BatchDelay: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			before := s.Stats().WriteStatements
			fired := streamrules.Firing{Rule: "alpha", ChatID: "count-a", Move: 1, Mode: streamrules.ModeRemind, Tool: "shell",
				At: time.Now(), Outcome: streamrules.OutcomeComplied, Delivery: streamrules.DeliveryFull}
			for _, rec := range []streamrules.MoveRecord{
				{ChatID: "count-a", Move: 1, Answered: true, Firings: []streamrules.Firing{fired}},
				{ChatID: "count-a", Move: 2, Answered: true},
				{ChatID: "count-b", Move: 1, Answered: true},
			} {
				if err := s.QueueMove(rec); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if got := s.Stats().Batches; got != 1 {
				t.Fatalf("%d batches, want the three moves in one", got)
			}
			if got := s.Stats().WriteStatements - before; got != want[b.name] {
				t.Errorf("%d write statements for the batch, want %d", got, want[b.name])
			}
			// Close cut the batch's wait short: its flush writes the batch, and nothing fails.
			if f := s.Stats().MoveWriteFailures; f != 0 {
				t.Errorf("%d write failures at Close", f)
			}
			if got := s.Stats().WrittenMoves; got != 3 {
				t.Errorf("%d moves written, want 3", got)
			}
		})
	}
}
