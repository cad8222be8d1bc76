package rulesdb_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/seeds"
	"github.com/streamrules/streamrules/statshttp"
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

// TestBatchDelivery: group commit writes what the single SaveMove writes (issues 22 and
// 24). Moves of two chats under a reminder budget, with manifest firings, reads and a
// shadow rule, end without ReadYourWrites; the queue holds them (BatchDelay an hour)
// until Close writes them in one batch. A reopened store has the stat rows, delivery and
// manifest_read included, and GET /v1/stats the delivery counts, the same as on a
// database where each End wrote its own move (ReadYourWrites), on both backends.
func TestBatchDelivery(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			batchedRows, batchedStats := deliveryMoves(t, b.dsn(t), false)
			singleRows, singleStats := deliveryMoves(t, b.dsn(t), true)
			var lines []string
			for _, f := range batchedRows {
				lines = append(lines, fmt.Sprintf("%s %d %s %s %v", f.ChatID, f.Move, f.Rule, f.Delivery, f.Read))
			}
			wantRows := []string{
				"batch-a 1 alpha full false", "batch-a 1 bravo manifest true", "batch-a 1 charlie manifest false", "batch-a 1 delta  false",
				"batch-a 2 alpha full false", "batch-a 2 bravo manifest false", "batch-a 2 charlie manifest false", "batch-a 2 delta  false",
				"batch-b 1 alpha full false", "batch-b 1 bravo manifest false", "batch-b 1 charlie manifest true", "batch-b 1 delta  false",
				"batch-b 2 alpha full false", "batch-b 2 bravo manifest false", "batch-b 2 charlie manifest false", "batch-b 2 delta  false",
			}
			if !slices.Equal(lines, wantRows) {
				t.Fatalf("batched stat rows\n%v, want\n%v", lines, wantRows)
			}
			wantStats := []string{"alpha full=4 manifest=0 read=0 shadow=0", "bravo full=0 manifest=4 read=1 shadow=0",
				"charlie full=0 manifest=4 read=1 shadow=0", "delta full=0 manifest=0 read=0 shadow=4"}
			if !slices.Equal(batchedStats, wantStats) {
				t.Fatalf("batched /v1/stats %v, want %v", batchedStats, wantStats)
			}
			// Every column, not only the delivery: the batch writes what SaveMove writes.
			if !reflect.DeepEqual(batchedRows, singleRows) {
				t.Fatalf("batched stat rows differ from single writes:\n%+v\n%+v", batchedRows, singleRows)
			}
			if !slices.Equal(batchedStats, singleStats) {
				t.Fatalf("batched /v1/stats %v, single writes %v", batchedStats, singleStats)
			}
		})
	}
}

// deliveryMoves runs two moves in each of two chats on a fresh database at dsn, ended
// with or without ReadYourWrites, closes the store, and returns the stat rows (their
// time zeroed, by chat, move and rule) and GET /v1/stats lines read through a reopened
// store.
func deliveryMoves(t *testing.T, dsn string, readYourWrites bool) ([]streamrules.Firing, []string) {
	t.Helper()
	ctx := context.Background()
	s, err := rulesdb.Open(ctx, dsn, &rulesdb.Config{Logger: quietLogger(), BatchDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alpha", "bravo", "charlie", "delta"} {
		head := "Rule " + name + " applies. "
		r := streamrules.Rule{Name: name, Scope: "tool:shell", Text: head + strings.Repeat("z", 250-len(head)), Shadow: name == "delta"}
		if _, err := s.CreateRule(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := streamrules.New(ctx, s, &streamrules.Config{Logger: quietLogger(), ReminderBudget: 400, ReadYourWrites: readYourWrites})
	if err != nil {
		t.Fatal(err)
	}
	reads := map[string]string{"batch-a": "bravo", "batch-b": "charlie"}
	for move := range 2 {
		for _, chat := range []string{"batch-a", "batch-b"} {
			mctx, m := eng.BeginMove(ctx, chat)
			if got := m.ToolReminders(mctx, "shell", `{"cmd":"ls"}`); len(got) != 3 || got[1].Delivery != streamrules.DeliveryManifest {
				t.Fatalf("reminders %+v", got)
			}
			if move == 0 {
				if _, err := m.ReadRule(mctx, reads[chat]); err != nil {
					t.Fatal(err)
				}
			}
			if err := m.End(mctx, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if want := map[bool]int{false: 4, true: 0}[readYourWrites]; s.Stats().QueuedMoves != want {
		t.Fatalf("%d moves queued before Close, want %d", s.Stats().QueuedMoves, want)
	}
	eng.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Batched: the four records in one batch, at Close; else each End wrote its own.
	if want := map[bool]int64{false: 1, true: 0}[readYourWrites]; s.Stats().Batches != want || s.Stats().WrittenMoves != 4 {
		t.Fatalf("%d batches, %d moves written; want %d batches, 4 moves", s.Stats().Batches, s.Stats().WrittenMoves, want)
	}

	s = open(t, dsn, nil)
	rows, err := s.Firings(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		rows[i].At = time.Time{}
	}
	slices.SortFunc(rows, func(a, b streamrules.Firing) int {
		return cmp.Or(strings.Compare(a.ChatID, b.ChatID), cmp.Compare(a.Move, b.Move), strings.Compare(a.Rule, b.Rule))
	})
	eng = newEngine(t, s, nil)
	web := httptest.NewServer(statshttp.Handler(eng))
	defer web.Close()
	resp, err := http.Get(web.URL + "/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st streamrules.Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	var stats []string
	for _, r := range st.Rules {
		stats = append(stats, fmt.Sprintf("%s full=%d manifest=%d read=%d shadow=%d", r.Rule,
			r.Delivery[streamrules.DeliveryFull], r.Delivery[streamrules.DeliveryManifest], r.ManifestRead, r.Shadow))
	}
	return rows, stats
}
