package rulesdb_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/seeds"
)

// TestReminderDelivery: a rule's delivery and hint are stored, read, updated and seeded;
// a move under a reminder budget records each firing's delivery and the manifest read in
// its stat row, and the stats count them per delivery, on both backends.
func TestReminderDelivery(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		seed := seeds.Set{Version: 1, Rules: []streamrules.Rule{{
			Name: "seeded_full", Scope: "tool:deploy", Mode: streamrules.ModeRemind, Text: "Deploy only from main.",
			Delivery: streamrules.DeliveryFull, Hint: "Deploy from main.",
		}}}
		s := open(t, dsn, &rulesdb.Config{Seed: &seed})
		if r, err := s.GetRule(ctx, "seeded_full"); err != nil || r.Delivery != streamrules.DeliveryFull || r.Hint != "Deploy from main." {
			t.Fatalf("seeded rule %+v, %v", r, err)
		}
		for _, name := range []string{"alpha", "bravo", "charlie"} {
			head := "Rule " + name + " applies. "
			r := streamrules.Rule{Name: name, Scope: "tool:shell", Text: head + strings.Repeat("z", 250-len(head))}
			if name == "charlie" {
				r.Hint = "Charlie's hint."
			}
			if _, err := s.CreateRule(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.GetRule(ctx, "charlie")
		if err != nil || got.Hint != "Charlie's hint." || got.Delivery != "" {
			t.Fatalf("created rule %+v, %v", got, err)
		}
		got.Delivery = streamrules.DeliveryFull
		if _, err := s.UpdateRule(ctx, "charlie", got); err != nil {
			t.Fatal(err)
		}
		got.Delivery, got.Hint = "", ""
		if _, err := s.UpdateRule(ctx, "charlie", got); err != nil {
			t.Fatal(err)
		}
		if r, _ := s.GetRule(ctx, "charlie"); r.Delivery != "" || r.Hint != "" {
			t.Fatalf("updated rule %+v", r)
		}
		got.Hint = strings.Repeat("h", streamrules.MaxHintChars+1)
		var ve *streamrules.ValidationError
		if _, err := s.UpdateRule(ctx, "charlie", got); !errors.As(err, &ve) || ve.Field != "hint" {
			t.Fatalf("a long hint: %v", err)
		}

		eng, err := streamrules.New(ctx, s, &streamrules.Config{Logger: quietLogger(), ReminderBudget: 400})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(eng.Close)
		for move := range 2 {
			mctx, m := eng.BeginMove(ctx, "chat-budget")
			if got := m.ToolReminders(mctx, "shell", `{"cmd":"ls"}`); len(got) != 3 || got[1].Delivery != streamrules.DeliveryManifest {
				t.Fatalf("reminders %+v", got)
			}
			if move == 0 {
				if _, err := m.ReadRule(mctx, "bravo"); err != nil {
					t.Fatal(err)
				}
			}
			if err := m.End(mctx, nil); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := s.Firings(ctx, "chat-budget")
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, f := range rows {
			lines = append(lines, fmt.Sprintf("%d %s %s %v", f.Move, f.Rule, f.Delivery, f.Read))
		}
		want := []string{"1 alpha full false", "1 bravo manifest true", "1 charlie manifest false",
			"2 alpha full false", "2 bravo manifest false", "2 charlie manifest false"}
		if !slices.Equal(lines, want) {
			t.Fatalf("stat rows %v, want %v", lines, want)
		}
		stats, err := eng.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lines = nil
		for _, st := range stats.Rules {
			lines = append(lines, fmt.Sprintf("%s full=%d manifest=%d read=%d", st.Rule,
				st.Delivery[streamrules.DeliveryFull], st.Delivery[streamrules.DeliveryManifest], st.ManifestRead))
		}
		want = []string{"alpha full=2 manifest=0 read=0", "bravo full=0 manifest=2 read=1",
			"charlie full=0 manifest=2 read=0", "seeded_full full=0 manifest=0 read=0"}
		if !slices.Equal(lines, want) {
			t.Fatalf("stats %v, want %v", lines, want)
		}
	})
}
