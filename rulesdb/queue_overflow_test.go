package rulesdb_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/rulesdb"
)

// TestQueueOverflowKeepsMoveNumbers: a chat plays a move, the database stops, and with a
// queue of 10 the chat plays 36 moves, and 3 more after the restart while the queue still
// drains. The dropped
// records are counted, yet their moves stay counted: the move numbers run 1..40, the
// chat's counter is 40, and no two stat rows share a (chat, move, rule). (The numbers
// used to freeze at 14 once the queue overflowed, and nine rows shared move 14.)
func TestQueueOverflowKeepsMoveNumbers(t *testing.T) {
	// End queues its record (the default), or writes it and waits (ReadYourWrites:
	// SaveMove's own first try, queued when it fails).
	for _, ryw := range []bool{false, true} {
		t.Run(fmt.Sprintf("ReadYourWrites=%v", ryw), func(t *testing.T) { overflowKeepsMoveNumbers(t, ryw) })
	}
}

func overflowKeepsMoveNumbers(t *testing.T, readYourWrites bool) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // Close waits for everything it started
	cl := pgtest.NewCluster(t)
	dsn := cl.DSN(t)
	s, err := rulesdb.Open(context.Background(), dsn, &rulesdb.Config{Logger: quietLogger(), QueueSize: 10,
		WriteTimeout: time.Second, FlushTimeout: 30 * time.Second, ReloadInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	createRules(t, s, faultRules)
	eng, err := streamrules.New(context.Background(), s, &streamrules.Config{Logger: quietLogger(), StoreTimeout: faultBound, ReadYourWrites: readYourWrites})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()

	var numbers []int64
	move := func() {
		t.Helper()
		ctx, m := eng.BeginMove(context.Background(), "c")
		numbers = append(numbers, m.Number())
		if got := m.ToolReminders(ctx, "shell", "{}"); len(got) == 0 {
			t.Fatalf("move %d: no reminder", m.Number())
		}
		if err := m.End(ctx, nil); err != nil {
			t.Fatalf("End of move %d = %v, want nil (queued)", m.Number(), err)
		}
	}
	move() // the chat's state is known before the outage
	cl.Stop(t)
	for range 36 {
		move()
	}
	dropped := s.Stats().DroppedMoves
	if dropped == 0 {
		t.Fatalf("no record dropped with 36 moves in a queue of 10 (queued %d)", s.Stats().QueuedMoves)
	}
	cl.Start(t)
	for range 3 {
		move()
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for i, n := range numbers {
		if n != int64(i+1) {
			t.Fatalf("move numbers %v, want 1..40", numbers)
		}
	}
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var moves int64
	if err := db.QueryRow(`SELECT moves FROM stream_chat WHERE chat_id = 'c'`).Scan(&moves); err != nil || moves != 40 {
		t.Fatalf("chat counter %d (%v), want 40: dropped records' moves counted too", moves, err)
	}
	var shared int
	if err := db.QueryRow(`SELECT COUNT(*) FROM (SELECT chat_id, move, rule FROM stream_rule_stat
		GROUP BY chat_id, move, rule HAVING COUNT(*) > 1) d`).Scan(&shared); err != nil || shared != 0 {
		t.Fatalf("%d (chat, move, rule) keys with more than one stat row (%v)", shared, err)
	}
	// Every record kept is written; a dropped one may have been written too, by an
	// attempt whose answer was lost at the restart (its outcome unknown when it went).
	var rows int64
	if err := db.QueryRow(`SELECT COUNT(*) FROM stream_rule_stat WHERE rule = 'every_shell'`).Scan(&rows); err != nil || rows < 40-s.Stats().DroppedMoves {
		t.Fatalf("%d every_shell rows (%v), want at least one per record kept: 40 - %d dropped", rows, err, s.Stats().DroppedMoves)
	}
	// A fresh process reads the counter: its next move is 41.
	s2, err := rulesdb.Open(context.Background(), dsn, &rulesdb.Config{Logger: quietLogger(), ReloadInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if st, err := s2.LoadChat(context.Background(), "c"); err != nil || st.Moves != 40 {
		t.Fatalf("LoadChat after the outage = %+v, %v; want 40 moves", st, err)
	}
}
