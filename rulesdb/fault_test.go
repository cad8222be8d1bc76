package rulesdb_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"go.uber.org/goleak"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/rulesdb"
)

// Fault tests: a real PostgreSQL stopped and started under a running store (its own
// pgtest.Cluster), and a server that accepts connections and never answers. Afterwards
// the database must hold every firing and every answered move, each once.
//
// STREAMRULES_FAULT_OUTAGE sets the outage of TestFaultOutage (default 2s); the README's
// figures come from 5s and 20s.

// faultRules: a tool rule that fires on every move, a `once` tool rule, and a text rule
// that discards the first answer of every move.
var faultRules = []streamrules.Rule{
	{Name: "every_shell", Scope: "tool:shell", Text: "Mind the shell."},
	{Name: "once_shell", Scope: "tool:shell", Repeat: "once", Text: "Once per chat."},
	{Name: "no_bad", Scope: "text", Condition: `\bbad\b`, Text: "Say it well."},
}

// tally is what the engine did, as the process saw it: the truth the database must hold.
type tally struct {
	mu       sync.Mutex
	fired    map[string]map[string]int // chat -> rule -> firings
	answered map[string]int            // chat -> answered moves
	slowest  time.Duration             // the longest move, BeginMove to End
}

func newTally() *tally {
	return &tally{fired: map[string]map[string]int{}, answered: map[string]int{}}
}

func (t *tally) onFire(_ context.Context, f streamrules.Firing) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fired[f.ChatID] == nil {
		t.fired[f.ChatID] = map[string]int{}
	}
	t.fired[f.ChatID][f.Rule]++
}

// play runs one move of chat: one shell call, a bad answer (discarded), a good one.
func (t *tally) play(eng *streamrules.Engine, chat string) error {
	begin := time.Now()
	ctx, m := eng.BeginMove(context.Background(), chat)
	m.ToolReminders(ctx, "shell", `{"cmd":"ls"}`)
	if v := m.CheckAnswer(ctx, "a bad answer"); v.Discard {
		m.CheckAnswer(ctx, "a good answer")
	}
	err := m.End(ctx, nil)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.slowest = max(t.slowest, time.Since(begin))
	if err == nil {
		t.answered[chat]++
	}
	return err
}

func (t *tally) total() (firings, moves int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, rules := range t.fired {
		for _, n := range rules {
			firings += n
		}
	}
	for _, n := range t.answered {
		moves += n
	}
	return firings, moves
}

// checkHeld compares the database with the tally (checkStored), and checks that
// `once_shell` fired once per chat, and every_shell (one per move) is numbered 1..N in
// each chat: move numbers never went back.
func checkHeld(t *testing.T, dsn string, tl *tally) {
	t.Helper()
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkStored(t, db, tl)
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for chat, want := range tl.answered {
		rows, err := db.Query(`SELECT move FROM stream_rule_stat WHERE chat_id = $1 AND rule = 'every_shell' ORDER BY move`, chat)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for rows.Next() {
			var n int
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			got = append(got, n)
		}
		rows.Close()
		for i, n := range got {
			if n != i+1 {
				t.Errorf("chat %s: every_shell fired in moves %v, want 1..%d once each", chat, got, want)
				break
			}
		}
	}
	for chat, rules := range tl.fired {
		if rules["once_shell"] != 1 {
			t.Errorf("chat %s: once_shell fired %d times, want once", chat, rules["once_shell"])
		}
	}
}

// checkStored compares the database with the tally: every answered move counted once,
// every firing stored once, per chat and rule.
func checkStored(t *testing.T, db *sql.DB, tl *tally) {
	t.Helper()
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for chat, want := range tl.answered {
		var moves int
		if err := db.QueryRow(`SELECT moves FROM stream_chat WHERE chat_id = $1`, chat).Scan(&moves); err != nil || moves != want {
			t.Errorf("chat %s: %d moves stored (%v), %d answered", chat, moves, err, want)
		}
	}
	for chat, rules := range tl.fired {
		for rule, want := range rules {
			var n int
			if err := db.QueryRow(`SELECT COUNT(*) FROM stream_rule_stat WHERE chat_id = $1 AND rule = $2`, chat, rule).Scan(&n); err != nil || n != want {
				t.Errorf("chat %s rule %s: %d firings stored (%v), %d fired", chat, rule, n, err, want)
			}
		}
	}
}

// faultBound is the engine's StoreTimeout in the fault tests.
const faultBound = 300 * time.Millisecond

// faultEngine opens a store on dsn with cfg, creates faultRules in it, and starts an
// engine on it whose firings tl counts. stop closes the engine, then the store (Close is
// idempotent: a test may close the store before).
func faultEngine(t *testing.T, dsn string, cfg *rulesdb.Config) (s *rulesdb.Store, eng *streamrules.Engine, tl *tally, stop func()) {
	t.Helper()
	s, err := rulesdb.Open(context.Background(), dsn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range faultRules {
		if _, err := s.CreateRule(context.Background(), r); err != nil {
			s.Close()
			t.Fatal(err)
		}
	}
	tl = newTally()
	eng, err = streamrules.New(context.Background(), s, &streamrules.Config{Logger: quietLogger(), StoreTimeout: faultBound, OnFire: tl.onFire})
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	return s, eng, tl, func() {
		eng.Close()
		s.Close()
	}
}

// TestFaultOutage: four chats play moves in a loop; the server is stopped hard, stays
// down for the outage, and comes back. Nothing is lost and nothing counts twice.
func TestFaultOutage(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // Close waits for everything it started
	outage := 2 * time.Second
	if v := os.Getenv("STREAMRULES_FAULT_OUTAGE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("STREAMRULES_FAULT_OUTAGE: %v", err)
		}
		outage = d
	}
	cl := pgtest.NewCluster(t)
	dsn := cl.DSN(t)
	log, buf := capture()
	s, eng, tl, stop := faultEngine(t, dsn, &rulesdb.Config{Logger: log, WriteTimeout: time.Second, FlushTimeout: 30 * time.Second})
	defer stop()

	// The case: a move begins with the database up, fires `once`, and ends during
	// the outage.
	sctx, straddle := eng.BeginMove(context.Background(), "straddle")
	if got := straddle.ToolReminders(sctx, "shell", "{}"); len(got) != 2 {
		t.Fatalf("straddle: reminders %+v, want every_shell and once_shell", got)
	}

	chats := []string{"c1", "c2", "c3", "c4"}
	halt := make(chan struct{})
	errs := make(chan error, len(chats))
	var loops sync.WaitGroup
	// phase counts moves per loop so the test can wait for "every chat moved since X".
	var phaseMu sync.Mutex
	phase := map[string]int{}
	moved := make(chan string, 1024)
	for _, chat := range chats {
		loops.Add(1)
		go func() {
			defer loops.Done()
			// A model takes time; 10 ms a move keeps 20 s of records within the queue.
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-halt:
					return
				case <-tick.C:
				}
				if err := tl.play(eng, chat); err != nil {
					errs <- fmt.Errorf("chat %s: %w", chat, err)
					return
				}
				phaseMu.Lock()
				phase[chat]++
				phaseMu.Unlock()
				select {
				case moved <- chat:
				default:
				}
			}
		}()
	}
	// waitMoves waits until every chat has made n more moves.
	waitMoves := func(n int, what string) {
		t.Helper()
		phaseMu.Lock()
		start := cloneCounts(phase)
		phaseMu.Unlock()
		deadline := time.After(60 * time.Second)
		for {
			phaseMu.Lock()
			done := true
			for _, c := range chats {
				if phase[c]-start[c] < n {
					done = false
				}
			}
			phaseMu.Unlock()
			if done {
				return
			}
			select {
			case <-moved:
			case err := <-errs:
				t.Fatal(err)
			case <-deadline:
				t.Fatalf("chats did not make %d moves %s", n, what)
			}
		}
	}
	waitMoves(5, "before the outage")

	cl.Stop(t)
	if err := straddle.End(sctx, nil); err != nil {
		t.Fatalf("straddle End during the outage = %v, want nil (queued)", err)
	}
	tl.mu.Lock()
	tl.answered["straddle"]++
	tl.fired["straddle"] = map[string]int{"every_shell": 1, "once_shell": 1}
	tl.mu.Unlock()
	waitMoves(5, "during the outage")
	// The next move of the straddling chat, still in the outage: numbered 2, `once` silent.
	if err := tl.play(eng, "straddle"); err != nil {
		t.Fatal(err)
	}
	// The outage itself is wall time: the point is how long the database is away.
	time.Sleep(outage)
	queued := s.Stats().QueuedMoves
	cl.Start(t)
	waitMoves(5, "after the restart")
	if err := tl.play(eng, "straddle"); err != nil {
		t.Fatal(err)
	}
	close(halt)
	loops.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	failures := s.Stats().MoveWriteFailures
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if lines := buf.Lines("not written at close"); len(lines) != 0 {
		t.Fatalf("records lost at close: %v", lines)
	}
	if failures == 0 || queued == 0 {
		t.Fatalf("the outage was not felt: %d write failures, %d queued", failures, queued)
	}
	if s.Stats().DroppedMoves != 0 || s.Stats().RejectedMoves != 0 {
		t.Fatalf("dropped %d, rejected %d", s.Stats().DroppedMoves, s.Stats().RejectedMoves)
	}
	checkHeld(t, dsn, tl)
	firings, moves := tl.total()
	t.Logf("outage %s: %d firings and %d answered moves, all stored once (%d were queued at the restart, %d write attempts failed); once_shell fired once per chat; slowest move %s (StoreTimeout %s)",
		outage, firings, moves, queued, failures, tl.slowest.Round(time.Millisecond), faultBound)
}

func cloneCounts(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestQueueDropsOldest: with the database down and the queue full, the oldest record goes,
// counted and logged, and SaveMove never waits; the rest are written after the restart.
func TestQueueDropsOldest(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // Close waits for everything it started
	cl := pgtest.NewCluster(t)
	dsn := cl.DSN(t)
	log, buf := capture()
	s, err := rulesdb.Open(context.Background(), dsn, &rulesdb.Config{Logger: log, QueueSize: 3, WriteTimeout: time.Second, FlushTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cl.Stop(t)
	for move := int64(1); move <= 6; move++ {
		rec := streamrules.MoveRecord{ChatID: "c", Move: move, Answered: true,
			Firings: []streamrules.Firing{{Rule: "r", Mode: streamrules.ModeRemind, Tool: "shell"}}}
		if err := s.SaveMove(context.Background(), rec); err != nil {
			t.Fatalf("SaveMove %d: %v", move, err)
		}
	}
	if s.Stats().QueuedMoves != 3 || s.Stats().DroppedMoves != 3 {
		t.Fatalf("queued %d, dropped %d; want 3 and 3", s.Stats().QueuedMoves, s.Stats().DroppedMoves)
	}
	if lines := buf.Lines("level=WARN", "write queue full", "dropped_so_far=1"); len(lines) != 1 {
		t.Fatalf("want one warning for the first drop, log:\n%s", buf)
	}
	cl.Start(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var moves int
	var all []int64
	if err := db.Select(&all, `SELECT move FROM stream_rule_stat ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	if !slices.IsSorted(all) {
		t.Fatalf("stat rows' moves in write order %v: the chat's records were written out of order", all)
	}
	// The counter counts every answered move, the dropped ones too: the kept records carry
	// them, so that move numbers never fall back for a drop.
	if err := db.QueryRow(`SELECT moves FROM stream_chat WHERE chat_id = 'c'`).Scan(&moves); err != nil || moves != 6 {
		t.Fatalf("moves %d (%v), want all 6; stat rows for moves %v; log:\n%s", moves, err, all, buf)
	}
	// The oldest records went, except one the queue was retrying at that moment (a record
	// being written is never dropped): the newest two are always kept, each once.
	var kept []int64
	if err := db.Select(&kept, `SELECT move FROM stream_rule_stat ORDER BY move`); err != nil || len(kept) != 3 || kept[0] >= 5 || kept[1] != 5 || kept[2] != 6 {
		t.Fatalf("stat moves %v (%v), want 3 distinct ending with 5, 6", kept, err)
	}
}

// TestQueueCloseLogsWhatIsLost: Close waits FlushTimeout at most, and says what it could
// not write.
func TestQueueCloseLogsWhatIsLost(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // Close waits for everything it started
	cl := pgtest.NewCluster(t)
	dsn := cl.DSN(t)
	log, buf := capture()
	s, err := rulesdb.Open(context.Background(), dsn, &rulesdb.Config{Logger: log, FlushTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cl.Stop(t)
	for _, chat := range []string{"a", "b"} {
		rec := streamrules.MoveRecord{ChatID: chat, Move: 1, Answered: true,
			Firings: []streamrules.Firing{{Rule: "r", Mode: streamrules.ModeRemind}}}
		if err := s.SaveMove(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	begin := time.Now()
	s.Close()
	// Not a benchmark: without the bound Close would retry for ever. The margin absorbs a
	// loaded machine.
	if took := time.Since(begin); took > 300*time.Millisecond+2*time.Second {
		t.Fatalf("Close took %s with FlushTimeout 300ms", took)
	}
	if lines := buf.Lines("level=ERROR", "not written at close", "records=2", "chats=2", "firings=2"); len(lines) != 1 {
		t.Fatalf("want one line on the lost records, log:\n%s", buf)
	}
	if err := s.SaveMove(context.Background(), streamrules.MoveRecord{ChatID: "a", Move: 2}); err == nil {
		t.Fatal("SaveMove after Close succeeded")
	}
}

// TestQueueRetryIsIdempotent: a record written a second time with its seq (a retry whose
// first try committed but whose answer was lost) changes nothing.
func TestQueueRetryIsIdempotent(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, nil)
		rec := streamrules.MoveRecord{ChatID: "c", Move: 1, Answered: true, Firings: []streamrules.Firing{
			{Rule: "r_a", Mode: streamrules.ModeRemind, Tool: "shell"},
			{Rule: "r_b", Mode: streamrules.ModeInterrupt, Retry: true},
		}}
		if err := s.SaveMove(ctx, rec); err != nil {
			t.Fatal(err)
		}
		seq := rulesdb.LastSeq(s)
		for range 3 {
			if err := rulesdb.WriteMoveAgain(ctx, s, rec, seq); err != nil {
				t.Fatal(err)
			}
		}
		// A record with a seq this writer never wrote counts (the guard is per record).
		rec.Move = 2
		if err := s.SaveMove(ctx, rec); err != nil {
			t.Fatal(err)
		}
		st, err := s.LoadChat(ctx, "c")
		if err != nil || st.Moves != 2 {
			t.Fatalf("state %+v, %v; want 2 moves", st, err)
		}
		counts, err := s.CountFirings(ctx)
		if err != nil || counts["r_a"] != 2 || counts["r_b"] != 2 {
			t.Fatalf("counts %v, %v; want 2 each", counts, err)
		}
		// The raw stat rows too: one per firing of the two records.
		rows, err := s.Firings(ctx, "c")
		if err != nil || len(rows) != 4 {
			t.Fatalf("stat rows %+v, %v; want 4", rows, err)
		}
	})
}

// TestCloseWaitsForSaveMove: a SaveMove whose first write is still running when Close
// begins, and then fails (the database is busy), queues its record before Close flushes
// the queue, so the flush writes it. Before, Close flushed an empty queue at once, and
// the record, queued after, was lost without a word.
func TestCloseWaitsForSaveMove(t *testing.T) {
	verifyNoLeaks(t)
	ctx := context.Background()
	path := t.TempDir() + "/close.db"
	log, buf := capture()
	// The store's first write waits 50 ms for the lock another connection holds, then
	// fails with SQLITE_BUSY.
	s := open(t, "sqlite:"+path+"?_pragma=busy_timeout(50)", &rulesdb.Config{Logger: log, FlushTimeout: 10 * time.Second, ReloadInterval: -1})
	conn := holdWriteLock(t, path)
	saved := make(chan error, 1)
	go func() {
		saved <- s.SaveMove(ctx, streamrules.MoveRecord{ChatID: "c", Move: 1, Answered: true,
			Firings: []streamrules.Firing{{Rule: "r", Mode: streamrules.ModeRemind}}})
	}()
	waitUntil(t, "the first write has begun", func() bool { return rulesdb.WritesInFlight(s) > 0 })
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	waitUntil(t, "Close has begun", func() bool { return rulesdb.Closing(s) })
	if err := <-saved; err != nil { // queued after the busy write: not lost, so no error
		t.Fatalf("SaveMove: %v", err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil { // the flush can write now
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if lines := buf.Lines("not written at close"); len(lines) != 0 {
		t.Fatalf("Close lost records:\n%s", buf)
	}
	if st := chatState(t, path, "c"); st.Moves != 1 {
		t.Fatalf("after Close: chat state %+v; want the move written", st)
	}
}

// TestSaveMoveFailingAfterCloseGaveUp: a first write that fails after Close stopped
// waiting for it (at most half of FlushTimeout) is not queued, where nothing would write
// it: SaveMove says the record is lost, and the log does.
func TestSaveMoveFailingAfterCloseGaveUp(t *testing.T) {
	verifyNoLeaks(t)
	ctx := context.Background()
	path := t.TempDir() + "/late.db"
	log, buf := capture()
	// The first write waits 3 s for the lock, far past Close's wait of 100 ms.
	s := open(t, "sqlite:"+path+"?_pragma=busy_timeout(3000)", &rulesdb.Config{Logger: log, FlushTimeout: 200 * time.Millisecond, ReloadInterval: -1})
	conn := holdWriteLock(t, path)
	saved := make(chan error, 1)
	go func() {
		saved <- s.SaveMove(ctx, streamrules.MoveRecord{ChatID: "c", Move: 1, Answered: true})
	}()
	waitUntil(t, "the first write has begun", func() bool { return rulesdb.WritesInFlight(s) > 0 })
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	err := <-saved
	if err == nil || !strings.Contains(err.Error(), "not written before the store closed") {
		t.Fatalf("SaveMove: %v; want the record said lost", err)
	}
	<-closed
	if lines := buf.Lines("level=ERROR", "not written before the store closed", "chat=c"); len(lines) != 1 {
		t.Fatalf("want one line on the lost record, log:\n%s", buf)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if st := chatState(t, path, "c"); st.Moves != 0 {
		t.Fatalf("chat state %+v: the record said lost was written", st)
	}
}

// verifyNoLeaks checks, once the test and its cleanups are done, that no goroutine it
// started is left (the stores' Close waits for everything they started).
func verifyNoLeaks(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) }) // registered first: runs last
}

// holdWriteLock takes SQLite's write lock on the file from another connection, until
// the test commits on the connection returned (or ends).
func holdWriteLock(t *testing.T, path string) *sql.Conn {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	return conn
}

// chatState reads a chat's state from the SQLite file through a store of its own.
func chatState(t *testing.T, path, chat string) streamrules.ChatState {
	t.Helper()
	s := open(t, "sqlite:"+path, &rulesdb.Config{ReloadInterval: -1})
	st, err := s.LoadChat(context.Background(), chat)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// waitUntil waits for cond, which a goroutine of the test makes true soon, and fails
// the test after a generous deadline rather than hang it.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 30 s", what)
		}
		runtime.Gosched()
	}
}
