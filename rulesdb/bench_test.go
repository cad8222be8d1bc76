package rulesdb_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/seeds"
)

// BenchmarkMove plays whole moves (begin, ten tool calls, an answer that fires, end) and
// reports the statements each sends to the database.
func BenchmarkMove(b *testing.B) {
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			dsn := "sqlite:" + filepath.Join(b.TempDir(), "bench.db")
			if name == "postgres" {
				dsn = pgtest.DSN(b)
			}
			set, _ := seeds.Default()
			s, err := rulesdb.Open(context.Background(), dsn, &rulesdb.Config{Seed: &set, Logger: quietLogger()})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			eng, err := streamrules.New(context.Background(), s, &streamrules.Config{Logger: quietLogger()})
			if err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			ctx := context.Background()
			start := s.Stats().RoundTrips
			b.ResetTimer()
			for i := range b.N {
				mctx, move := eng.BeginMove(ctx, fmt.Sprintf("chat-%d", i%64), seeds.EnvTelegram, seeds.EnvClientOps)
				for range 10 {
					move.ToolReminders(mctx, "shell", `{"cmd":"ls"}`)
				}
				move.CheckAnswer(mctx, "done")
				if err := move.End(mctx, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(s.Stats().RoundTrips-start)/float64(b.N), "statements/move")
		})
	}
}
