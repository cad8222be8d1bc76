package rulesdb_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulesdb"
)

// rawCounts counts the raw rows per rule and outcome: what the counters must agree with.
func rawCounts(t *testing.T, s *rulesdb.Store) map[string]int64 {
	t.Helper()
	fs, err := s.Firings(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, f := range fs {
		out[f.Rule+"/"+string(f.Outcome)]++
	}
	return out
}

func counterCounts(t *testing.T, s *rulesdb.Store) map[string]int64 {
	t.Helper()
	cs, err := s.RuleCounters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for rule, c := range cs {
		for o, n := range c.ByOutcome {
			out[rule+"/"+string(o)] += n
		}
	}
	return out
}

func TestShadowAndEarlyColumns(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, nil)
		r, err := s.CreateRule(ctx, streamrules.Rule{Name: "watched", Scope: "text", Condition: "x", Text: "t", Shadow: true, Early: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := ruleNamed(t, s, "watched"); !got.Shadow || !got.Early {
			t.Fatalf("read back %+v, want shadow and early", got)
		}
		r.Shadow = false
		if _, err := s.UpdateRule(ctx, "watched", r); err != nil {
			t.Fatal(err)
		}
		loaded, err := s.LoadRules(ctx)
		if err != nil || len(loaded) != 1 || loaded[0].Shadow || !loaded[0].Early {
			t.Fatalf("LoadRules %+v, %v: want enforced and still early", loaded, err)
		}
	})
}

// TestCountersFollowSaveMove: every outcome, would-fires included, lands in the raw rows
// and in the counters alike, and the stats read the counters.
func TestCountersFollowSaveMove(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, nil)
		for _, r := range []streamrules.Rule{
			{Name: "text_live", Scope: "text", Condition: "bad", Text: "t"},
			{Name: "text_watched", Scope: "text", Condition: "bad", Text: "t", Shadow: true},
			{Name: "tool_live", Scope: "tool:shell", Condition: "rm", Text: "t"},
		} {
			if _, err := s.CreateRule(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		eng := newEngine(t, s, nil)
		play := func(chat string, fn func(ctx context.Context, m *streamrules.Move)) {
			mctx, m := eng.BeginMove(ctx, chat)
			fn(mctx, m)
			if err := m.End(mctx, nil); err != nil {
				t.Fatal(err)
			}
		}
		play("a", func(ctx context.Context, m *streamrules.Move) { // corrected + would-fire
			m.CheckAnswer(ctx, "bad")
			m.CheckAnswer(ctx, "good")
		})
		play("b", func(ctx context.Context, m *streamrules.Move) { // missed again + would-fire, repeated
			m.ToolReminders(ctx, "shell", `{"c":"rm a"}`)
			m.ToolReminders(ctx, "shell", `{"c":"rm b"}`)
			m.CheckAnswer(ctx, "bad")
			m.CheckAnswer(ctx, "bad")
		})
		play("c", func(ctx context.Context, m *streamrules.Move) { // complied
			m.ToolReminders(ctx, "shell", `{"c":"rm a"}`)
		})
		want := map[string]int64{
			"text_live/corrected": 1, "text_live/missed_again": 1, "text_watched/shadow": 2,
			"tool_live/repeated": 1, "tool_live/complied": 1,
		}
		if got := rawCounts(t, s); !maps.Equal(got, want) {
			t.Fatalf("raw rows %v, want %v", got, want)
		}
		if got := counterCounts(t, s); !maps.Equal(got, want) {
			t.Fatalf("counters %v, want %v", got, want)
		}
		st, err := eng.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, r := range st.Rules {
			lines = append(lines, fmt.Sprintf("%s fired=%d shadow=%d %v last=%v", r.Rule, r.Fired, r.Shadow, r.Outcomes, !r.LastFiredAt.IsZero()))
		}
		wantLines := []string{
			"text_live fired=2 shadow=0 map[corrected:1 fixed:0 kept:0 missed_again:1] last=true",
			"text_watched fired=0 shadow=2 map[corrected:0 fixed:0 kept:0 missed_again:0] last=true",
			"tool_live fired=2 shadow=0 map[complied:1 repeated:1] last=true",
		}
		if !slices.Equal(lines, wantLines) {
			t.Fatalf("stats\n%v\nwant\n%v", lines, wantLines)
		}
		if counts, _ := s.CountFirings(ctx); counts["text_watched"] != 0 || counts["text_live"] != 2 {
			t.Fatalf("CountFirings %v: would-fires are not firings", counts)
		}
	})
}

// TestCountersBackfilled: a database written before migration 0004 gets counters from its
// raw rows, and they go on counting.
func TestCountersBackfilled(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		var cfg rulesdb.Config
		rulesdb.SetMigrateTo(&cfg, 3)
		old := open(t, dsn, &cfg)
		for i, rule := range []string{"a", "a", "b"} {
			mustExec(t, old, `INSERT INTO stream_rule_stat (rule, chat_id, move, mode, retry, tool, fired_at) VALUES (?, 'c', ?, 'remind', FALSE, 'shell', ?)`,
				rule, i+1, time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC))
		}
		if err := old.Close(); err != nil {
			t.Fatal(err)
		}
		s := open(t, dsn, nil)
		cs, err := s.RuleCounters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if cs["a"].ByOutcome[""] != 2 || cs["b"].ByOutcome[""] != 1 || !cs["a"].LastFiredAt.Equal(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("backfilled counters %+v", cs)
		}
		if err := s.SaveMove(ctx, streamrules.MoveRecord{ChatID: "c", Move: 9, Answered: true, Firings: []streamrules.Firing{
			{Rule: "a", Mode: streamrules.ModeRemind, Tool: "shell", Outcome: streamrules.OutcomeComplied},
		}}); err != nil {
			t.Fatal(err)
		}
		if got, want := counterCounts(t, s), rawCounts(t, s); !maps.Equal(got, want) {
			t.Fatalf("counters %v, raw rows %v", got, want)
		}
	})
}

// TestPruneKeepsCounters: retention deletes old raw rows only; the stats still count them.
func TestPruneKeepsCounters(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		tick := make(chan time.Time)
		pruned := make(chan int64, 10)
		var cfg rulesdb.Config
		cfg.StatRetention = rulesdb.Retention(30 * 24 * time.Hour)
		rulesdb.SetPruning(&cfg, tick, func(n int64, err error) {
			if err != nil {
				t.Errorf("prune: %v", err)
			}
			pruned <- n
		})
		s := open(t, dsn, &cfg)
		wait := func() int64 {
			t.Helper()
			select {
			case n := <-pruned:
				return n
			case <-time.After(30 * time.Second):
				t.Fatal("no prune within 30s")
				return 0
			}
		}
		if n := wait(); n != 0 { // the prune at Open, on an empty table
			t.Fatalf("first prune deleted %d", n)
		}
		now := time.Now().UTC()
		var firings []streamrules.Firing
		for i := range 5 {
			firings = append(firings, streamrules.Firing{Rule: "r", Mode: streamrules.ModeRemind, Tool: "shell",
				Outcome: streamrules.OutcomeComplied, At: now.Add(-time.Duration(60-i) * 24 * time.Hour)})
		}
		firings = append(firings, streamrules.Firing{Rule: "r", Mode: streamrules.ModeRemind, Tool: "shell", Outcome: streamrules.OutcomeRepeated, At: now})
		if err := s.SaveMove(ctx, streamrules.MoveRecord{ChatID: "c", Move: 1, Answered: true, Firings: firings}); err != nil {
			t.Fatal(err)
		}
		tick <- now
		if n := wait(); n != 5 {
			t.Fatalf("pruned %d rows, want the 5 older than 30 days", n)
		}
		if got := rawCounts(t, s); !maps.Equal(got, map[string]int64{"r/repeated": 1}) {
			t.Fatalf("raw rows left %v", got)
		}
		if got := counterCounts(t, s); !maps.Equal(got, map[string]int64{"r/complied": 5, "r/repeated": 1}) {
			t.Fatalf("counters %v: pruning must not touch them", got)
		}
		if n, err := s.PruneStats(ctx, now.Add(time.Second)); err != nil || n != 1 {
			t.Fatalf("PruneStats = %d, %v", n, err)
		}
	})
}

func TestRetentionText(t *testing.T) {
	t.Parallel()
	good := []struct {
		in   string
		want time.Duration
		out  string
	}{
		{"", 0, "0"}, {"0", 0, "0"}, {"90d", 90 * 24 * time.Hour, "90d"}, {" 1d ", 24 * time.Hour, "1d"},
		{"36h", 36 * time.Hour, "36h0m0s"}, {"48h", 48 * time.Hour, "2d"},
	}
	for _, tt := range good {
		var r rulesdb.Retention
		if err := r.UnmarshalText([]byte(tt.in)); err != nil || time.Duration(r) != tt.want || r.String() != tt.out {
			t.Errorf("%q: %v (%s), %v; want %v (%s)", tt.in, time.Duration(r), r, err, tt.want, tt.out)
		}
	}
	for _, in := range []string{"d", "-1d", "1.5d", "90 days", "-3h", "forever", "9999999999d"} {
		var r rulesdb.Retention
		if err := r.UnmarshalText([]byte(in)); err == nil {
			t.Errorf("%q accepted as %v", in, time.Duration(r))
		}
	}
}

// FuzzRetention: whatever parses prints to a text that parses to the same retention.
func FuzzRetention(f *testing.F) {
	for _, s := range []string{"", "0", "90d", "36h", "1h30m", "-1d", "1e3d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var r, back rulesdb.Retention
		if r.UnmarshalText([]byte(s)) != nil {
			return
		}
		if r < 0 {
			t.Fatalf("%q parsed to a negative retention %v", s, time.Duration(r))
		}
		if err := back.UnmarshalText([]byte(r.String())); err != nil || back != r {
			t.Fatalf("%q -> %s -> %v, %v", s, r, time.Duration(back), err)
		}
	})
}
