package rulesdb_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/statshttp"
)

// TestBadRowSkipped: a row broken by hand (an invalid regex typed in with SQL) is
// returned by LoadRules, skipped by the engine with one warning, and every other rule
// still fires.
func TestBadRowSkipped(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := seeded(t, dsn)
		mustExec(t, s, `UPDATE stream_rules SET condition = ? WHERE name = ?`, `![unclosed(`, "telegram_markdown_image")
		mustExec(t, s, `UPDATE stream_rules SET "when" = ? WHERE name = ?`, `telegram,no_such_env`, "look_before_refusing")
		s.Close()

		// A new process on the same database (no notification of the edit pending).
		s = open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
		loaded, err := s.LoadRules(ctx)
		if err != nil || len(loaded) != 10 {
			t.Fatalf("LoadRules: %d rules, %v", len(loaded), err)
		}
		log, buf := capture()
		eng := newEngine(t, s, log)
		warnings := buf.Lines("stream rule skipped")
		if len(warnings) != 2 || !strings.Contains(strings.Join(warnings, "\n"), "telegram_markdown_image") ||
			!strings.Contains(strings.Join(warnings, "\n"), "look_before_refusing") || !strings.Contains(warnings[0], "level=WARN") {
			t.Fatalf("warnings: %q", warnings)
		}
		if got := len(eng.Rules()); got != 8 {
			t.Errorf("engine loaded %d rules, want 8", got)
		}
		mctx, move := eng.BeginMove(ctx, "chat-bad-row", streamrules.EnvTelegram, streamrules.EnvPicture)
		v := move.CheckAnswer(mctx, "![x](https://x.test/x.png)")
		if !v.Discard || strings.Join(v.Rules, ",") != "telegram_reply_tail" {
			t.Errorf("verdict %+v", v)
		}
		if err := move.End(mctx, nil); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRepeatAcrossRestarts: `once` holds forever and `after:N` counts moves across
// processes (a new Store and a new Engine on the same database).
func TestRepeatAcrossRestarts(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, nil)
		for _, r := range []streamrules.Rule{
			{Name: "greet_once", Scope: "text", Condition: `(?i)^hello`, Repeat: "once", Text: "Do not open with hello."},
			{Name: "sorry_every_third", Scope: "text", Condition: `(?i)sorry`, Repeat: "after:3", Text: "Do not apologize."},
		} {
			if _, err := s.CreateRule(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()

		// move plays one move of chat in a fresh process and returns the rules that fired.
		move := func(chat, answer string) string {
			t.Helper()
			s, err := rulesdb.Open(ctx, dsn, &rulesdb.Config{Logger: quietLogger(), ReloadInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			eng, err := streamrules.New(ctx, s, &streamrules.Config{Logger: quietLogger()})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			mctx, m := eng.BeginMove(ctx, chat)
			v := m.CheckAnswer(mctx, answer)
			if err := m.End(mctx, nil); err != nil {
				t.Fatal(err)
			}
			return strings.Join(v.Rules, ",")
		}
		steps := []struct{ chat, answer, fired string }{
			{"a", "Hello! Sorry for the wait.", "greet_once,sorry_every_third"}, // move 1
			{"a", "Hello again, sorry.", ""},                                    // move 2: once spent, after:3 waits
			{"b", "Hello there", "greet_once"},                                  // another chat has its own state
			{"a", "hello, sorry", ""},                                           // move 3
			{"a", "hello, sorry", "sorry_every_third"},                          // move 4: 4-1 >= 3
			{"a", "sorry", ""},                                                  // move 5
		}
		for i, st := range steps {
			if got := move(st.chat, st.answer); got != st.fired {
				t.Fatalf("step %d (%s %q): fired %q, want %q", i+1, st.chat, st.answer, got, st.fired)
			}
		}
		s = open(t, dsn, nil)
		state, err := s.LoadChat(ctx, "a")
		if err != nil || state.Moves != 5 || state.LastFired["greet_once"] != 1 || state.LastFired["sorry_every_third"] != 4 {
			t.Errorf("chat a: %+v, %v", state, err)
		}
		if state, _ := s.LoadChat(ctx, "never-seen"); state.Moves != 0 || len(state.LastFired) != 0 {
			t.Errorf("unknown chat: %+v", state)
		}
	})
}

// TestStatsOutliveRule: stat rows stay after their rule is deleted; the summary lists
// every loaded rule, zero included, and the handler serves it.
func TestStatsOutliveRule(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := seeded(t, dsn)
		eng := newEngine(t, s, nil)

		mctx, move := eng.BeginMove(ctx, "chat-stats", streamrules.EnvTelegram, streamrules.EnvClientOps)
		if rem := move.ToolReminders(mctx, "shell", `{"cmd":"uptime"}`); len(rem) != 1 {
			t.Fatalf("reminders %v", rem)
		}
		if v := move.CheckAnswer(mctx, "👍"); !v.Discard {
			t.Fatalf("verdict %+v", v)
		}
		if err := move.End(mctx, nil); err != nil {
			t.Fatal(err)
		}
		firings, err := s.Firings(ctx, "chat-stats")
		if err != nil || len(firings) != 3 {
			t.Fatalf("firings %+v, %v", firings, err)
		}
		for _, f := range firings {
			if f.ChatID != "chat-stats" || f.Move != 1 || f.At.IsZero() || time.Since(f.At) > time.Hour {
				t.Errorf("firing %+v", f)
			}
			if f.Rule == "local_shell_for_his_machine" && (f.Tool != "shell" || f.Mode != streamrules.ModeRemind || f.Retry) {
				t.Errorf("soft firing %+v", f)
			}
			if f.Rule == "telegram_react_not_emoji" && (f.Mode != streamrules.ModeInterrupt || !f.Retry) {
				t.Errorf("hard firing %+v", f)
			}
		}

		if err := s.DeleteRule(ctx, "local_shell_for_his_machine"); err != nil {
			t.Fatal(err)
		}
		counts, err := s.CountFirings(ctx)
		if err != nil || counts["local_shell_for_his_machine"] != 1 || counts["telegram_react_not_emoji"] != 1 || counts["telegram_reply_tail"] != 1 {
			t.Errorf("counts %v, %v", counts, err)
		}
		stats, err := eng.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{"destructive_shell": 0, "look_before_refusing": 0, "look_before_refusing_thinking": 0, "telegram_markdown_image": 0, "telegram_react_not_emoji": 1, "telegram_reply_tail": 1,
			"unbacked_tool_claim": 0, "verify_before_done": 0, "write_diff_over_write_file": 0}
		if len(stats.Rules) != len(want) {
			t.Errorf("stats %+v", stats)
		}
		for _, rs := range stats.Rules {
			if n, ok := want[rs.Rule]; !ok || n != rs.Fired {
				t.Errorf("stats line %+v", rs)
			}
		}

		srv := httptest.NewServer(statshttp.Handler(eng))
		defer srv.Close()
		resp, err := http.Get(srv.URL + "/v1/stats")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			Rules []struct {
				Rule  string `json:"rule"`
				Fired int64  `json:"fired"`
			} `json:"rules"`
		}
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("GET: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || len(body.Rules) != 9 {
			t.Errorf("body %+v, %v", body, err)
		}
		post, err := http.Post(srv.URL+"/v1/stats", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		post.Body.Close()
		if post.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST: %d", post.StatusCode)
		}
	})
}

// TestSaveMoveConcurrent: moves of one chat saved at once add up; last-fired keeps the max.
func TestSaveMoveConcurrent(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, nil)
		const n = 16
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				move := int64(i + 1)
				rec := streamrules.MoveRecord{ChatID: "busy", Move: move, Answered: true, Firings: []streamrules.Firing{
					{Rule: "r_a", Mode: streamrules.ModeRemind, Tool: "shell"},
					{Rule: "r_b", Mode: streamrules.ModeInterrupt, Retry: true},
					{Rule: "r_a", Mode: streamrules.ModeRemind, Tool: "shell"},
				}}
				if err := s.SaveMove(ctx, rec); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		// A move that did not answer counts no move but keeps its firings.
		if err := s.SaveMove(ctx, streamrules.MoveRecord{ChatID: "busy", Move: 17, Firings: []streamrules.Firing{{Rule: "r_b", Mode: streamrules.ModeInterrupt}}}); err != nil {
			t.Fatal(err)
		}
		st, err := s.LoadChat(ctx, "busy")
		if err != nil || st.Moves != n || st.LastFired["r_a"] != n || st.LastFired["r_b"] != 17 {
			t.Errorf("state %+v, %v", st, err)
		}
		counts, _ := s.CountFirings(ctx)
		if counts["r_a"] != 2*n || counts["r_b"] != n+1 {
			t.Errorf("counts %v", counts)
		}
		// The raw stat rows too, each record's once: none lost, none written twice.
		rows, err := s.Firings(ctx, "busy")
		if err != nil || len(rows) != 3*n+1 {
			t.Errorf("%d stat rows (%v), want %d", len(rows), err, 3*n+1)
		}
	})
}

// TestRoundTrips: a move costs one statement to begin (LoadChat) and one to end
// (SaveMove, on PostgreSQL); tool calls and answers cost none.
func TestRoundTrips(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := seeded(t, dsn)
		// Issue 22: End queues by default (group commit, 0 statements); ReadYourWrites
		// measures the write of one move alone.
		eng, err := streamrules.New(ctx, s, &streamrules.Config{Logger: quietLogger(), ReadYourWrites: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(eng.Close)

		before := s.Stats().RoundTrips
		mctx, move := eng.BeginMove(ctx, "chat-rt", streamrules.EnvTelegram, streamrules.EnvClientOps)
		if got := s.Stats().RoundTrips - before; got != 1 {
			t.Errorf("BeginMove: %d round trips, want 1", got)
		}
		before = s.Stats().RoundTrips
		for range 50 {
			move.ToolReminders(mctx, "shell", `{"cmd":"ls"}`)
			move.ToolReminders(mctx, "write_file", `{"path":"a","content":"b"}`)
			move.Armed()
			move.CheckAnswer(mctx, "ok 👍\n↩ #1")
		}
		move.CheckAnswer(mctx, "no tail") // fires
		// Issue 22: a rule with a repeat limit claims its firing (one statement, once per
		// move); nothing else sends any.
		got := s.Stats().RoundTrips - before
		claims := int64(0)
		for _, f := range move.Firings() {
			if ruleNamed(t, s, f.Rule).Repeat != "" {
				claims++
			}
		}
		if got != claims {
			t.Errorf("tool calls and answers: %d round trips, want %d (the claims)", got, claims)
		}
		before = s.Stats().RoundTrips
		if err := move.End(mctx, nil); err != nil {
			t.Fatal(err)
		}
		saveTrips := s.Stats().RoundTrips - before
		if isPostgres(dsn) && saveTrips != 1 {
			t.Errorf("SaveMove: %d round trips, want 1", saveTrips)
		}
		// SQLite: one transaction of BEGIN, the idempotency guard, the chat, the last-fired
		// rows, the stat rows, the counters, the delivery counters, COMMIT.
		if !isPostgres(dsn) && saveTrips > 8 {
			t.Errorf("SaveMove on SQLite: %d statements, want at most 8", saveTrips)
		}
		t.Logf("%s: SaveMove with %d firings = %d statements", s.Driver(), len(move.Firings()), saveTrips)
		st, _ := s.LoadChat(ctx, "chat-rt")
		if st.Moves != 1 || len(st.LastFired) != 3 {
			t.Errorf("state %+v", st)
		}
	})
}

// TestWireRoundTrips counts what the client really sends to PostgreSQL: one flush per
// LoadChat and one per SaveMove.
func TestWireRoundTrips(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	seeded(t, dsn).Close()
	d := &countingDialer{}
	cfg := &rulesdb.Config{Logger: quietLogger(), ReloadInterval: -1, MaxOpenConns: 1}
	rulesdb.SetDialer(cfg, d)
	s := open(t, dsn, cfg)
	ctx := context.Background()
	// Issue 22: ReadYourWrites, so End writes its own move (the default queues it).
	eng, err := streamrules.New(ctx, s, &streamrules.Config{Logger: quietLogger(), ReadYourWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	_, warm := eng.BeginMove(ctx, "warm") // the pooled connection is open from here on
	_ = warm

	w := d.writes.Load()
	mctx, move := eng.BeginMove(ctx, "chat-wire", streamrules.EnvTelegram)
	if got := d.writes.Load() - w; got != 1 {
		t.Errorf("LoadChat: %d writes to the server, want 1", got)
	}
	move.CheckAnswer(mctx, "no tail")
	w = d.writes.Load()
	if err := move.End(mctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := d.writes.Load() - w; got != 1 {
		t.Errorf("SaveMove: %d writes to the server, want 1", got)
	}
}

type countingDialer struct{ writes atomic.Int64 }

func (d *countingDialer) Dial(network, address string) (net.Conn, error) {
	return d.DialTimeout(network, address, 0)
}

func (d *countingDialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, d: d}, nil
}

type countingConn struct {
	net.Conn
	d *countingDialer
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.d.writes.Add(1)
	return c.Conn.Write(p)
}

// TestEditSeenByOtherEngine: an edit through one store reaches an engine on another
// store (another process) on the same PostgreSQL within a second, through NOTIFY (the
// backstop is off), and so does a hand edit in SQL.
func TestEditSeenByOtherEngine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	a := seeded(t, dsn)
	b := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
	engB := newEngine(t, b, nil)
	has := func(name string) bool {
		for _, r := range engB.Rules() {
			if r.Name == name {
				return true
			}
		}
		return false
	}
	text := func(name string) string {
		for _, r := range engB.Rules() {
			if r.Name == name {
				return r.Text
			}
		}
		return ""
	}

	if _, err := a.CreateRule(ctx, streamrules.Rule{Name: "fresh_rule", Scope: "text", Condition: "x", Text: "no x"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Second, "engine B sees fresh_rule", func() bool { return has("fresh_rule") })

	r := ruleNamed(t, a, "telegram_reply_tail")
	r.Disabled = true
	if _, err := a.UpdateRule(ctx, r.Name, r); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Second, "engine B drops the disabled rule", func() bool { return !has("telegram_reply_tail") })

	mustExec(t, a, `UPDATE stream_rules SET text = 'edited in psql' WHERE name = 'look_before_refusing'`)
	eventually(t, time.Second, "engine B sees the hand edit", func() bool { return text("look_before_refusing") == "edited in psql" })

	if err := a.DeleteRule(ctx, "fresh_rule"); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Second, "engine B drops fresh_rule", func() bool { return !has("fresh_rule") })
}

// TestEditSeenAtOnce: the editing process's own engine has the edit when the edit
// returns, on both backends.
func TestEditSeenAtOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
		eng := newEngine(t, s, nil)
		if _, err := s.CreateRule(ctx, streamrules.Rule{Name: "now_rule", Scope: "text", Condition: "x", Text: "no x"}); err != nil {
			t.Fatal(err)
		}
		if rules := eng.Rules(); len(rules) != 1 || rules[0].Name != "now_rule" {
			t.Errorf("engine rules right after create: %v", names(rules))
		}
	})
}

// TestReloadBackstop: with SQLite, another process's edit arrives with the periodic reload.
func TestReloadBackstop(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		a := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
		b := open(t, dsn, &rulesdb.Config{ReloadInterval: 20 * time.Millisecond})
		var calls atomic.Int64
		cancel := b.Subscribe(func() { calls.Add(1) })
		defer cancel()
		engB := newEngine(t, b, nil)
		if _, err := a.CreateRule(ctx, streamrules.Rule{Name: "late_rule", Scope: "text", Condition: "x", Text: "no x"}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 5*time.Second, "engine B reloads", func() bool { return len(engB.Rules()) == 1 })
		eventually(t, 5*time.Second, "backstop ticks", func() bool { return calls.Load() >= 2 })
		b.Close()
		n := calls.Load()
		time.Sleep(60 * time.Millisecond) // three ticks' worth: none may come after Close
		if calls.Load() != n {
			t.Error("subscriber called after Close")
		}
	})
}

// TestListenerReconnects: when the listener's connection dies, it reconnects, tells the
// subscribers (notifications may have been lost meanwhile), and NOTIFYs arrive again.
func TestListenerReconnects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	a := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
	b := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
	engB := newEngine(t, b, nil)
	var calls atomic.Int64
	cancel := b.Subscribe(func() { calls.Add(1) })
	defer cancel()

	var killed int
	if err := a.DB().Get(&killed, `SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	if killed != 2 { // a's listener and b's
		t.Fatalf("terminated %d listener connections, want 2", killed)
	}
	eventually(t, 5*time.Second, "subscribers told after the reconnect", func() bool { return calls.Load() > 0 })
	if _, err := a.CreateRule(ctx, streamrules.Rule{Name: "after_reconnect", Scope: "text", Condition: "x", Text: "no x"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Second, "engine B sees the rule created after the reconnect", func() bool { return len(engB.Rules()) == 1 })
}

// TestUnreadableRowWarnsOnce: a row the store cannot even read (SQLite lets a hand edit put
// text into the negate column) is skipped with one warning, not one per reload.
func TestUnreadableRowWarnsOnce(t *testing.T) {
	t.Parallel()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "unreadable.db")
	s := seeded(t, dsn)
	mustExec(t, s, `UPDATE stream_rules SET negate = ? WHERE name = ?`, "maybe", "telegram_reply_tail")
	log, buf := capture()
	s2 := open(t, dsn, &rulesdb.Config{ReloadInterval: -1, Logger: log})
	for i := 0; i < 3; i++ {
		rules, err := s2.LoadRules(context.Background())
		if err != nil || len(rules) != 9 {
			t.Fatalf("LoadRules: %d rules, %v", len(rules), err)
		}
	}
	if lines := buf.Lines("unreadable row", "telegram_reply_tail"); len(lines) != 1 {
		t.Errorf("%d warnings after three reloads, want 1:\n%s", len(lines), buf)
	}
}
