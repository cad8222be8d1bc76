package streamrules

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// runMove plays one move of chat: one shell call, returns the reminders, ends the move with runErr.
func runMove(t *testing.T, eng *Engine, chat string, runErr error) []string {
	t.Helper()
	ctx, m := eng.BeginMove(context.Background(), chat)
	got := reminderNames(m.ToolReminders(ctx, "shell", `{"cmd":"ls"}`))
	if err := m.End(ctx, runErr); !errors.Is(err, runErr) {
		t.Fatalf("End: %v", err)
	}
	return got
}

func TestOncePerChatForever(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{with(softRule("once_rule", "shell", ""), func(r *Rule) { r.Repeat = "once" })}, nil)
	if got := runMove(t, f.eng, "a", nil); !slices.Equal(got, []string{"once_rule"}) {
		t.Fatalf("move 1: %v, want the once rule", got)
	}
	for i := 2; i <= 4; i++ {
		if got := runMove(t, f.eng, "a", nil); len(got) != 0 {
			t.Fatalf("move %d: %v, want nothing: once means once", i, got)
		}
	}
	if got := runMove(t, f.eng, "b", nil); !slices.Equal(got, []string{"once_rule"}) {
		t.Fatalf("another chat: %v, want the once rule", got)
	}

	// Restart: a new engine on the same store remembers.
	restarted := newFixtureOn(t, f.store, f.store, nil)
	if got := runMove(t, restarted.eng, "a", nil); len(got) != 0 {
		t.Fatalf("after a restart: %v, want nothing", got)
	}
	if got := runMove(t, restarted.eng, "c", nil); !slices.Equal(got, []string{"once_rule"}) {
		t.Fatalf("new chat after a restart: %v, want the once rule", got)
	}
}

func TestOnceCountsAMoveThatFailed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{with(softRule("once_rule", "shell", ""), func(r *Rule) { r.Repeat = "once" })}, nil)
	if got := runMove(t, f.eng, "a", errors.New("model down")); !slices.Equal(got, []string{"once_rule"}) {
		t.Fatalf("move 1: %v", got)
	}
	if got := runMove(t, f.eng, "a", nil); len(got) != 0 {
		t.Fatalf("once rule fired again after a failed move: %v", got)
	}
}

func TestAfterN(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{with(softRule("every_3", "shell", ""), func(r *Rule) { r.Repeat = "after:3" })}, nil)
	boom := errors.New("boom")
	steps := []struct {
		runErr error
		number int64
		fires  bool
	}{
		{nil, 1, true},
		{nil, 2, false},
		{boom, 3, false}, // not answered: the counter stays
		{boom, 3, false},
		{nil, 3, false},
		{nil, 4, true},
		{nil, 5, false},
		{nil, 6, false},
		{nil, 7, true},
	}
	for i, s := range steps {
		ctx, m := f.eng.BeginMove(context.Background(), "a")
		if m.Number() != s.number {
			t.Fatalf("step %d: move number %d, want %d", i, m.Number(), s.number)
		}
		got := m.ToolReminders(ctx, "shell", "{}")
		if (len(got) == 1) != s.fires {
			t.Fatalf("step %d (move %d): reminders %v, want fired=%v", i, m.Number(), reminderNames(got), s.fires)
		}
		if err := m.End(ctx, s.runErr); !errors.Is(err, s.runErr) {
			t.Fatalf("End: %v", err)
		}
	}
}

// TestManyChatsAtOnce: one engine, 50 chats moving concurrently; per-chat once/after state
// stays exact. Run under -race.
func TestManyChatsAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{
		softRule("every_shell", "shell", ""),
		with(softRule("once_shell", "shell", ""), func(r *Rule) { r.Repeat = "once" }),
		with(textRule("tail_after_2", `tail$`), func(r *Rule) { r.Negate = true; r.Repeat = "after:2" }),
	}, nil)
	const chats, moves = 50, 6
	var wg sync.WaitGroup
	errs := make(chan error, chats*moves)
	for c := 0; c < chats; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chat := fmt.Sprint("chat-", c)
			for mv := int64(1); mv <= moves; mv++ {
				ctx, m := f.eng.BeginMove(context.Background(), chat)
				if m.Number() != mv {
					errs <- fmt.Errorf("%s: move number %d, want %d", chat, m.Number(), mv)
					return
				}
				// Several tours of one move may call tools concurrently.
				var inner sync.WaitGroup
				got := make([][]string, 4)
				for i := range got {
					inner.Add(1)
					go func() {
						defer inner.Done()
						got[i] = reminderNames(m.ToolReminders(ctx, "shell", "{}"))
					}()
				}
				inner.Wait()
				counts := map[string]int{}
				for _, g := range got {
					for _, name := range g {
						counts[name]++
					}
				}
				wantOnce := 0
				if mv == 1 {
					wantOnce = 1
				}
				if counts["every_shell"] != 1 || counts["once_shell"] != wantOnce {
					errs <- fmt.Errorf("%s move %d: fired %v", chat, mv, counts)
				}
				v := m.CheckAnswer(ctx, "no tail here")
				if wantFire := mv%2 == 1; v.Discard != wantFire {
					errs <- fmt.Errorf("%s move %d: verdict %+v, want discard=%v", chat, mv, v, wantFire)
				}
				if err := m.End(ctx, nil); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	counts, _ := f.store.CountFirings(context.Background())
	if counts["every_shell"] != chats*moves || counts["once_shell"] != chats || counts["tail_after_2"] != chats*moves/2 {
		t.Fatalf("firings %v", counts)
	}
}
