package streamrules

import (
	"context"
	"log/slog"
	"sync"
	"testing"
)

// TestClaimOverlappingMovesMemory: on the memory store with one engine, two moves of one
// chat running at once fire a `once` rule exactly once, 50 of 50; a rule
// without a repeat limit fires in both.
func TestClaimOverlappingMovesMemory(t *testing.T) {
	once := softRule("once_shell", "shell", "")
	once.Repeat = "once"
	st, err := NewMemoryStore([]Rule{once, softRule("every_shell", "shell", "")}, testEnvs...)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := New(context.Background(), st, &Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	for trial := range 50 {
		chat := "chat-" + string(rune('a'+trial%26)) + string(rune('a'+trial/26))
		c1, m1 := eng.BeginMove(ctx, chat)
		c2, m2 := eng.BeginMove(ctx, chat)
		var wg sync.WaitGroup
		got := make([][]Reminder, 2)
		start := make(chan struct{})
		wg.Go(func() { <-start; got[0] = m1.ToolReminders(c1, "shell", "{}") })
		wg.Go(func() { <-start; got[1] = m2.ToolReminders(c2, "shell", "{}") })
		close(start)
		wg.Wait()
		onces, every := 0, 0
		for _, rs := range got {
			for _, r := range rs {
				switch r.Rule {
				case "once_shell":
					onces++
				case "every_shell":
					every++
				}
			}
		}
		if onces != 1 || every != 2 {
			t.Fatalf("trial %d: once_shell %d times, every_shell %d; want 1 and 2", trial, onces, every)
		}
		_ = m1.End(c1, nil)
		_ = m2.End(c2, nil)
	}
}
