package rulesdb_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/rulesdb"
)

var claimRules = []streamrules.Rule{
	{Name: "every_shell", Scope: "tool:shell", Text: "Mind the shell."},
	{Name: "once_shell", Scope: "tool:shell", Repeat: "once", Text: "Once per chat."},
}

func createRules(t *testing.T, s *rulesdb.Store, rules []streamrules.Rule) {
	t.Helper()
	for _, r := range rules {
		if _, err := s.CreateRule(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
}

// fireTogether begins a move of chat on each engine, then has them all make a shell call
// at the same moment; it returns how many got the once_shell reminder.
func fireTogether(t *testing.T, chat string, engines ...*streamrules.Engine) int {
	t.Helper()
	ctx := context.Background()
	moves := make([]*streamrules.Move, len(engines))
	ctxs := make([]context.Context, len(engines))
	for i, e := range engines {
		ctxs[i], moves[i] = e.BeginMove(ctx, chat)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		once int
	)
	start := make(chan struct{})
	for i, m := range moves {
		wg.Go(func() {
			<-start
			for _, r := range m.ToolReminders(ctxs[i], "shell", "{}") {
				if r.Rule == "once_shell" {
					mu.Lock()
					once++
					mu.Unlock()
				}
			}
		})
	}
	close(start)
	wg.Wait()
	for i, m := range moves {
		if err := m.End(ctxs[i], nil); err != nil {
			t.Fatal(err)
		}
	}
	return once
}

// TestOnceAcrossReplicas: two replicas (two stores, two engines) on one database run one
// move of the same chat at the same moment: the `once` rule fires exactly once, 200 of 200.
// Before the claims it fired twice in 200 of 200 trials.
func TestOnceAcrossReplicas(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		a := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
		createRules(t, a, claimRules)
		b := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
		onceEveryTrial(t, 200, newEngine(t, a, nil), newEngine(t, b, nil))
	})
}

// TestOverlappingMovesOneChat: a second move of a chat begins while the first still runs
// (one engine): `once` fires once, 50 of 50.
func TestOverlappingMovesOneChat(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
		createRules(t, s, claimRules)
		e := newEngine(t, s, nil)
		onceEveryTrial(t, 50, e, e)
	})
}

// onceEveryTrial runs trials moves of a new chat each on a and b at once, and fails
// unless once_shell fired exactly once in every one.
func onceEveryTrial(t *testing.T, trials int, a, b *streamrules.Engine) {
	t.Helper()
	wrong := 0
	for i := range trials {
		if n := fireTogether(t, fmt.Sprintf("chat-%d", i), a, b); n != 1 {
			wrong++
		}
	}
	if wrong != 0 {
		t.Fatalf("once_shell fired other than once in %d of %d trials", wrong, trials)
	}
}

// TestClaimAfterN: after:2 fires in moves 1, 3, 5 of a chat, and a second store (another
// replica) claiming the same move loses.
func TestClaimAfterN(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		a := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
		b := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
		p, err := streamrules.ParseRepeat("after:2")
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for move := int64(1); move <= 5; move++ {
			won, err := a.ClaimFiring(ctx, "c", "r", move, p)
			if err != nil {
				t.Fatal(err)
			}
			lost, err := b.ClaimFiring(ctx, "c", "r", move, p)
			if err != nil {
				t.Fatal(err)
			}
			if lost {
				t.Fatalf("move %d claimed twice", move)
			}
			if won {
				got = append(got, move)
			}
		}
		if fmt.Sprint(got) != "[1 3 5]" {
			t.Fatalf("claimed in moves %v, want [1 3 5]", got)
		}
	})
}

// TestFaultClaimFailsClosed: with the database down, a `once` rule of a chat the process
// knows stays silent (the claim cannot be made: fail closed) and says so; a rule without
// a repeat limit still fires and pays no claim. After the restart, `once` fires again for a
// new chat.
func TestFaultClaimFailsClosed(t *testing.T) {
	cl := pgtest.NewCluster(t)
	dsn := cl.DSN(t)
	log, buf := capture()
	s := open(t, dsn, &rulesdb.Config{Logger: log, ReloadInterval: -1, WriteTimeout: time.Second, FlushTimeout: 30 * time.Second})
	createRules(t, s, claimRules)
	eng, err := streamrules.New(context.Background(), s, &streamrules.Config{Logger: log, StoreTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	ctx := context.Background()
	mctx, move := eng.BeginMove(ctx, "known") // the chat's state is read while the database is up
	cl.Stop(t)
	got := move.ToolReminders(mctx, "shell", "{}")
	if len(got) != 1 || got[0].Rule != "every_shell" {
		t.Fatalf("reminders during the outage %+v, want every_shell alone", got)
	}
	if err := move.End(mctx, nil); err != nil {
		t.Fatal(err)
	}
	if lines := buf.Lines("level=WARN", "not claimed", "rule=once_shell"); len(lines) != 1 {
		t.Fatalf("want one warning on the claim, log:\n%s", buf)
	}
	cl.Start(t)
	mctx, move = eng.BeginMove(ctx, "fresh")
	if got := move.ToolReminders(mctx, "shell", "{}"); len(got) != 2 {
		t.Fatalf("reminders after the restart %+v, want both", got)
	}
	if err := move.End(mctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Stats().DroppedMoves != 0 || s.Stats().QueuedMoves != 0 {
		t.Fatalf("dropped %d, queued %d", s.Stats().DroppedMoves, s.Stats().QueuedMoves)
	}
}
