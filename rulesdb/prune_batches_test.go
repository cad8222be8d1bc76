package rulesdb_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
)

// TestPruneStatsManyBatches: PruneStats deletes in batches of 10,000 rows and goes on
// until every row older than the cut is gone, a full last batch included.
func TestPruneStatsManyBatches(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, nil)
		now := time.Now().UTC()
		const old = 2*10_000 + 3 // two full batches and a short one
		// Moves of up to 1,000 firings: SQLite caps the variables of one statement.
		for move, left := int64(1), old; left > 0; move++ {
			var firings []streamrules.Firing
			for range min(left, 1000) {
				left--
				firings = append(firings, streamrules.Firing{Rule: "r", Mode: streamrules.ModeRemind, Tool: "shell",
					Outcome: streamrules.OutcomeComplied, At: now.Add(-48*time.Hour - time.Duration(left)*time.Second)})
			}
			if left == 0 {
				firings = append(firings, streamrules.Firing{Rule: "r", Mode: streamrules.ModeRemind, Tool: "shell",
					Outcome: streamrules.OutcomeRepeated, At: now})
			}
			if err := s.SaveMove(ctx, streamrules.MoveRecord{ChatID: "c", Move: move, Answered: true, Firings: firings}); err != nil {
				t.Fatal(err)
			}
		}
		n, err := s.PruneStats(ctx, now.Add(-24*time.Hour))
		if err != nil || n != old {
			t.Fatalf("PruneStats = %d, %v; want every one of the %d old rows", n, err, old)
		}
		if got := rawCounts(t, s); !maps.Equal(got, map[string]int64{"r/repeated": 1}) {
			t.Errorf("raw rows left %v, want the recent one", got)
		}
	})
}
