package streamrules_test

import (
	"context"
	"errors"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/enginetest"
	"github.com/streamrules/streamrules/seeds"
)

// hostStore is a host's own store: a Store and nothing more (not a Claimer).
type hostStore struct{ streamrules.Store }

// claimErrStore is a Claimer that answers every claim with an error, even when it says won.
type claimErrStore struct{ *streamrules.MemoryStore }

func (claimErrStore) ClaimFiring(context.Context, string, string, int64, streamrules.Repeat) (bool, error) {
	return true, errors.New("claim: connection reset")
}

var onceShell = streamrules.Rule{Name: "once_shell", Scope: "tool:shell", Mode: streamrules.ModeRemind,
	Repeat: "once", Text: "Mind the shell."}

func claimEngine(t *testing.T, wrap func(*streamrules.MemoryStore) streamrules.Store) *streamrules.Engine {
	t.Helper()
	return enginetest.New(t, wrap(enginetest.Store(t, onceShell)), nil)
}

func remindsOnce(t *testing.T, eng *streamrules.Engine, chat string) int {
	t.Helper()
	ctx, m := eng.BeginMove(context.Background(), chat)
	defer func() {
		if err := m.End(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}()
	n := 0
	for range 2 {
		for _, r := range m.ToolReminders(ctx, "shell", "ls") {
			if r.Rule == onceShell.Name {
				n++
			}
		}
	}
	return n
}

// TestRepeatLimitWithoutClaimer: on a host's store that cannot claim, a `once` rule fires
// once, decided by the chat state read at BeginMove, and not in the chat's next move.
func TestRepeatLimitWithoutClaimer(t *testing.T) {
	t.Parallel()
	eng := claimEngine(t, func(m *streamrules.MemoryStore) streamrules.Store { return hostStore{m} })
	if n := remindsOnce(t, eng, "c"); n != 1 {
		t.Fatalf("first move: %d reminders of the once rule, want 1", n)
	}
	if n := remindsOnce(t, eng, "c"); n != 0 {
		t.Fatalf("second move: %d reminders of the once rule, want 0", n)
	}
}

// TestClaimErrorIsNoClaim: a claim that comes back with an error is no claim, whatever
// else it says: the rule stays silent (fail closed).
func TestClaimErrorIsNoClaim(t *testing.T) {
	t.Parallel()
	eng := claimEngine(t, func(m *streamrules.MemoryStore) streamrules.Store { return claimErrStore{m} })
	if n := remindsOnce(t, eng, "c"); n != 0 {
		t.Fatalf("%d reminders of the once rule after a failed claim, want 0", n)
	}
}

// TestMemoryStoreClaimFiring: the memory store's claims follow the policy against the move
// the rule last fired in: one claim per move, a `once` rule never again, an `after:N` rule
// again N moves later.
func TestMemoryStoreClaimFiring(t *testing.T) {
	t.Parallel()
	mem, err := streamrules.NewMemoryStore(nil, seeds.Environments()...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	once := streamrules.Repeat{Kind: streamrules.RepeatOnce}
	after2 := streamrules.Repeat{Kind: streamrules.RepeatAfter, Moves: 2}
	for _, step := range []struct {
		rule   string
		move   int64
		policy streamrules.Repeat
		want   bool
	}{
		{"o", 1, once, true}, {"o", 1, once, false}, {"o", 2, once, false}, {"o", 9, once, false},
		{"a", 1, after2, true}, {"a", 2, after2, false}, {"a", 3, after2, true}, {"a", 3, after2, false}, {"a", 4, after2, false},
	} {
		won, err := mem.ClaimFiring(ctx, "c", step.rule, step.move, step.policy)
		if err != nil || won != step.want {
			t.Fatalf("claim %s in move %d: %v, %v; want %v", step.rule, step.move, won, err, step.want)
		}
	}
}
