package rulesdb_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/rulesdb"
)

// BenchmarkQueuedRecord measures what a move record costs while the database is down:
// the heap it holds in the write queue (bytes/record, after a GC) and the time SaveMove
// takes to queue it. Each record is a typical answered move with two firings (a tool rule
// and a text rule), over 100 chats.
func BenchmarkQueuedRecord(b *testing.B) {
	cl := pgtest.NewCluster(b)
	dsn := cl.DSN(b)
	s, err := rulesdb.Open(context.Background(), dsn, &rulesdb.Config{Logger: quietLogger(), QueueSize: b.N + 1, FlushTimeout: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	cl.Stop(b)
	chats := make([]string, 100)
	for i := range chats {
		chats[i] = fmt.Sprintf("telegram:%d", 100000+i)
	}
	// The first record finds the database gone (one failed try); the rest queue at once.
	if err := s.SaveMove(context.Background(), streamrules.MoveRecord{ChatID: "first", Move: 1, Answered: true}); err != nil {
		b.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := range b.N {
		chat := chats[i%len(chats)]
		move := int64(i/len(chats) + 1)
		rec := streamrules.MoveRecord{ChatID: chat, Move: move, Answered: true, Firings: []streamrules.Firing{
			{Rule: "local_shell_for_his_machine", Mode: streamrules.ModeRemind, Tool: "shell"},
			{Rule: "telegram_reply_tail", Mode: streamrules.ModeInterrupt, Retry: true},
		}}
		if err := s.SaveMove(context.Background(), rec); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if got := s.Stats().QueuedMoves; got != b.N+1 {
		b.Fatalf("%d queued, want %d", got, b.N+1)
	}
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(b.N), "bytes/record")
}
