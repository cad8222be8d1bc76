package streamrules

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// barrierClaimer is the memory store whose claims each wait until n claims are under way
// at once (or their context ends): claims made in series never get there.
type barrierClaimer struct {
	*MemoryStore
	n       int
	mu      sync.Mutex
	arrived int
	all     chan struct{}
}

func (b *barrierClaimer) ClaimFiring(ctx context.Context, chatID, rule string, move int64, policy Repeat) (bool, error) {
	b.mu.Lock()
	if b.arrived++; b.arrived == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return b.MemoryStore.ClaimFiring(ctx, chatID, rule, move, policy)
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// TestClaimsOfOneCallAtOnce: the repeat-limited rules that fire in one call claim at
// once, under one StoreTimeout, on a tool call and on an answer: each claim waits for all
// the others to be under way, and every rule fires. Claims in series (the first waiting
// out its bound before the second is tried) fired none.
func TestClaimsOfOneCallAtOnce(t *testing.T) {
	const n = 8
	var rules []Rule
	for i := range n {
		r := softRule(fmt.Sprintf("once_tool_%d", i), "shell", "")
		r.Repeat = "once"
		rules = append(rules, r,
			Rule{Name: fmt.Sprintf("once_text_%d", i), Scope: "text", Condition: `bad`, Repeat: "once", Text: "Say it well."},
			Rule{Name: fmt.Sprintf("once_gate_%d", i), Scope: "tool:deploy", Mode: ModeInterrupt, Repeat: "once", Text: "Not to prod."})
	}
	mem, err := NewMemoryStore(rules, testEnvs...)
	if err != nil {
		t.Fatal(err)
	}
	st := &barrierClaimer{MemoryStore: mem, n: n, all: make(chan struct{})}
	// Generous: all eight claims start within microseconds; in series they took 8 bounds.
	eng, err := New(context.Background(), st, &Config{Logger: slog.New(slog.DiscardHandler), StoreTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()

	ctx, m := eng.BeginMove(context.Background(), "c")
	if got := m.ToolReminders(ctx, "shell", "{}"); len(got) != n {
		t.Fatalf("tool call: %d reminders %+v, want all %d once rules", len(got), got, n)
	}
	st.mu.Lock()
	st.n, st.arrived, st.all = n, 0, make(chan struct{})
	st.mu.Unlock()
	if v := m.CheckAnswer(ctx, "a bad answer"); !v.Discard || len(v.Rules) != n {
		t.Fatalf("answer: %+v, want a discard naming all %d once text rules", v, n)
	}
	if err := m.End(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// Gates: on a response that declares the call, and on the call itself (GateCall, as
	// the tool wrapper asks after the ceiling).
	st.mu.Lock()
	st.n, st.arrived, st.all = n, 0, make(chan struct{})
	st.mu.Unlock()
	ctx, m = eng.BeginMove(context.Background(), "d")
	if v := m.CheckResponse(ctx, "", []DeclaredCall{{Tool: "deploy", Input: "{}"}}); !v.Discard || len(v.Rules) != n {
		t.Fatalf("response: %+v, want a discard naming all %d once gates", v, n)
	}
	if err := m.End(ctx, nil); err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	st.n, st.arrived, st.all = n, 0, make(chan struct{})
	st.mu.Unlock()
	ctx, m = eng.BeginMove(context.Background(), "e")
	if got := m.GateCall(ctx, "deploy", "{}"); len(got) != n {
		t.Fatalf("gated call: %d refusals %+v, want all %d once gates", len(got), got, n)
	}
	if err := m.End(ctx, nil); err != nil {
		t.Fatal(err)
	}
}
