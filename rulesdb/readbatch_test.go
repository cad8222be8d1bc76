package rulesdb_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/rulesdb"
)

// TestSharedRead holds the reads under way (rulesdb.MaxReads of them) while more
// LoadChats of other chats begin: those share one statement, loadChats, that names their
// chats once each (a chat asked for twice is read once), and each gets its own chat's
// state, as a read of its own would give it.
func TestSharedRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := open(t, pgtest.DSN(t), &rulesdb.Config{ReloadInterval: -1})
	fire := func(chat, rule string, move int64) streamrules.Firing {
		return streamrules.Firing{Rule: rule, ChatID: chat, Move: move, Mode: streamrules.ModeRemind, Outcome: streamrules.OutcomeComplied}
	}
	for _, rec := range []streamrules.MoveRecord{
		{ChatID: "shr-a", Move: 1, Answered: true},
		{ChatID: "shr-a", Move: 2, Answered: true, Firings: []streamrules.Firing{fire("shr-a", "r1", 2)}},
		{ChatID: "shr-b", Move: 1, Answered: true, Firings: []streamrules.Firing{fire("shr-b", "r1", 1), fire("shr-b", "r2", 1)}},
		{ChatID: "shr-d", Move: 1, Answered: true},
		{ChatID: "shr-d", Move: 2, Answered: true},
		{ChatID: "shr-d", Move: 3, Answered: false},
	} {
		if err := s.SaveMove(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]streamrules.ChatState{
		"shr-a": {Moves: 2, LastFired: map[string]int64{"r1": 2}},
		"shr-b": {Moves: 1, LastFired: map[string]int64{"r1": 1, "r2": 1}},
		"shr-c": {}, // never seen
		"shr-d": {Moves: 2},
	}

	entered, release, joined := make(chan []string, 8), make(chan struct{}), make(chan struct{}, 8)
	rulesdb.SetReadHooks(s, func(chats []string) {
		entered <- slices.Clone(chats)
		<-release
	}, func() { joined <- struct{}{} })
	var (
		mu   sync.Mutex
		sent [][]string // the chats each loadChats named
	)
	rulesdb.SetTrace(s, func(q string, args []any) {
		if strings.Contains(q, "unnest($1::text[]) AS k(chat_id)") {
			mu.Lock()
			sent = append(sent, slices.Clone([]string(args[0].(pq.StringArray))))
			mu.Unlock()
		}
	})
	type got struct {
		chat string
		st   streamrules.ChatState
		err  error
	}
	out := make(chan got, 16)
	load := func(chat string) {
		go func() {
			st, err := s.LoadChat(ctx, chat)
			out <- got{chat, st, err}
		}()
	}
	// The reads under way: each waits in the hook.
	for i := range rulesdb.MaxReads {
		load([]string{"shr-x", "shr-y", "shr-z"}[i])
		<-entered
	}
	// These join the open read.
	joins := []string{"shr-a", "shr-b", "shr-c", "shr-d", "shr-a"}
	for _, chat := range joins {
		load(chat)
		<-joined
	}
	trips := s.Stats().RoundTrips
	close(release)
	states := map[string][]streamrules.ChatState{}
	for range rulesdb.MaxReads + len(joins) {
		g := <-out
		if g.err != nil {
			t.Fatalf("LoadChat(%s): %v", g.chat, g.err)
		}
		states[g.chat] = append(states[g.chat], g.st)
	}
	shared := <-entered
	if d := s.Stats().RoundTrips - trips; d != rulesdb.MaxReads+1 {
		t.Errorf("%d statements sent; want %d: the reads held, and one for the chats that joined", d, rulesdb.MaxReads+1)
	}
	slices.Sort(shared)
	if !slices.Equal(shared, []string{"shr-a", "shr-b", "shr-c", "shr-d"}) {
		t.Errorf("the shared read asked for %v; want each joined chat once", shared)
	}
	mu.Lock()
	if len(sent) != 1 || len(sent[0]) != 4 {
		t.Errorf("loadChats sent with %v; want once, with 4 chats", sent)
	}
	mu.Unlock()
	for chat, w := range want {
		for _, st := range states[chat] {
			if st.Moves != w.Moves || !maps.Equal(st.LastFired, w.LastFired) {
				t.Errorf("%s: got %+v, want %+v", chat, st, w)
			}
		}
	}
	if a := states["shr-a"]; len(a) != 2 {
		t.Fatalf("shr-a answered %d times, want 2", len(a))
	} else if a[0].LastFired["r1"] = 99; a[1].LastFired["r1"] != 2 {
		t.Error("two moves of one chat share the map of their state: a move may change its own")
	}
}

// TestSharedReadBounded: a LoadChat waiting for a shared read returns when its context
// ends (the engine's StoreTimeout), as a read of its own would: a chat never seen is an
// error, and the move fails closed.
func TestSharedReadBounded(t *testing.T) {
	t.Parallel()
	s := open(t, pgtest.DSN(t), &rulesdb.Config{ReloadInterval: -1})
	entered, release := make(chan struct{}, 8), make(chan struct{})
	rulesdb.SetReadHooks(s, func([]string) {
		entered <- struct{}{}
		<-release
	}, nil)
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.LoadChat(ctx, "bounded-a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("LoadChat past its deadline: %v; want context.DeadlineExceeded", err)
	}
	<-entered
}
