package rulesdb_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/seeds"
)

// rawInsertRate is the box's single-row autocommit INSERT rate at 64 workers, measured by
// the raw_insert sub-benchmark earlier in the same run: the moves sub-benchmarks report
// their rate as a multiple of it (x_raw_insert).
var rawInsertRate atomic.Uint64 // math.Float64bits would do; inserts/s rounded is plenty

// BenchmarkThroughput is the scale benchmark (docs/scale.md), on the throw-away PostgreSQL
// cluster:
//
//	go test -run '^$' -bench Throughput ./rulesdb
//
// raw_insert: 64 workers each INSERT one row per statement (autocommit) into a scratch
// table: the box's floor. moves/N: N workers play moves (BeginMove, one tool call that
// fires a rule, End) over 10 chats each; the rate counts the moves in the database after
// Close flushed (durable), over the time from the first move to the end of Close. It
// reports statements per move (Stats.RoundTrips; write_statements: those of the write
// path), the 99th percentile of End, and moves_ended/s: the rate at which the workers
// ended moves (queued), before Close waited for the last of them to be written. The
// queue holds b.N records: moves come faster than any model makes them, and the rate is
// that of moves durable, not of moves queued.
func BenchmarkThroughput(b *testing.B) {
	b.Run("raw_insert/64", func(b *testing.B) {
		dsn := pgtest.DSN(b)
		db, err := sqlx.Open("postgres", dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		db.SetMaxOpenConns(64)
		db.SetMaxIdleConns(64)
		if _, err := db.Exec(`CREATE TABLE raw_insert (id bigserial PRIMARY KEY, chat_id text NOT NULL, n bigint NOT NULL)`); err != nil {
			b.Fatal(err)
		}
		var next atomic.Int64
		b.ResetTimer()
		start := time.Now()
		var wg sync.WaitGroup
		for w := range 64 {
			wg.Go(func() {
				for {
					i := next.Add(1)
					if i > int64(b.N) {
						return
					}
					if _, err := db.Exec(`INSERT INTO raw_insert (chat_id, n) VALUES ($1, $2)`, fmt.Sprintf("w%d", w), i); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		rate := float64(b.N) / time.Since(start).Seconds()
		rawInsertRate.Store(uint64(rate))
		b.ReportMetric(rate, "inserts/s")
	})
	for _, workers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("moves/%d", workers), func(b *testing.B) { benchMoves(b, workers, 0) })
	}
	// With Config.ChatCacheTTL, BeginMove reads a chat once per minute, not once per move.
	b.Run("moves_cached/64", func(b *testing.B) { benchMoves(b, 64, time.Minute) })
}

func benchMoves(b *testing.B, workers int, ttl time.Duration) {
	ctx := context.Background()
	dsn := pgtest.DSN(b)
	s, err := rulesdb.Open(ctx, dsn, &rulesdb.Config{Logger: quietLogger(), ReloadInterval: -1, MaxOpenConns: 16, ChatCacheTTL: ttl, QueueSize: b.N + 1})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.CreateRule(ctx, streamrules.Rule{Name: "every_shell", Scope: "tool:shell", Text: "Mind the shell."}); err != nil {
		b.Fatal(err)
	}
	eng, err := streamrules.New(ctx, s, &streamrules.Config{Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	lat := make([][]time.Duration, workers)
	var next atomic.Int64
	trips, wtrips := s.Stats().RoundTrips, s.Stats().WriteStatements
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				chat := fmt.Sprintf("w%d-c%d", w, i%10)
				mctx, move := eng.BeginMove(ctx, chat, seeds.EnvTelegram)
				if got := move.ToolReminders(mctx, "shell", `{"cmd":"ls"}`); len(got) != 1 {
					b.Errorf("reminders %v, want every_shell", got)
					return
				}
				t0 := time.Now()
				if err := move.End(mctx, nil); err != nil {
					b.Error(err)
					return
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	produced := time.Since(start)
	eng.Close()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var moves int64
	if err := db.Get(&moves, `SELECT COALESCE(SUM(moves), 0) FROM stream_chat`); err != nil {
		b.Fatal(err)
	}
	if moves != int64(b.N) || s.Stats().DroppedMoves != 0 {
		b.Fatalf("%d moves in the database, %d dropped; want %d", moves, s.Stats().DroppedMoves, b.N)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	rate := float64(moves) / elapsed.Seconds()
	b.ReportMetric(rate, "moves/s")
	b.ReportMetric(float64(b.N)/produced.Seconds(), "moves_ended/s")
	b.ReportMetric(float64(s.Stats().RoundTrips-trips)/float64(b.N), "statements/move")
	b.ReportMetric(float64(s.Stats().WriteStatements-wtrips)/float64(b.N), "write_statements/move")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99_end_µs")
	if raw := rawInsertRate.Load(); raw > 0 {
		b.ReportMetric(rate/float64(raw), "x_raw_insert")
	}
}
