package rulesdb_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/rulesdb"
)

// signalled returns a subscriber that signals ch, without blocking.
func signalled(ch chan struct{}) func() {
	return func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// waitSignal waits for ch, failing after a generous bound.
func waitSignal(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("not within 30 s: %s", what)
	}
}

// TestPollThroughBouncer: a replica that reaches PostgreSQL only through pgbouncer in
// transaction mode, in ReloadMode "poll", sees another process's edit (the version row
// moved) and plays moves: group commit, claims and reads all work through the pooler.
func TestPollThroughBouncer(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	editor := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
	createRules(t, editor, claimRules)
	bounced := pgtest.Bouncer(t, dsn)
	s := open(t, bounced, &rulesdb.Config{ReloadMode: rulesdb.ReloadPoll, ReloadInterval: 100 * time.Millisecond})
	eng := newEngine(t, s, nil)
	// Subscribed after the engine: told after the engine reloaded (calls run in order).
	changed := make(chan struct{}, 1)
	cancel := s.Subscribe(signalled(changed))
	defer cancel()

	if _, err := editor.CreateRule(context.Background(), streamrules.Rule{Name: "new_rule", Scope: "tool:grep", Text: "Grep gently."}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, changed, "the poller saw the edit")
	ctx := context.Background()
	mctx, m := eng.BeginMove(ctx, "grep-chat")
	got := m.ToolReminders(mctx, "grep", "{}")
	if err := m.End(mctx, nil); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Rule != "new_rule" {
		t.Fatalf("reminders %+v, want new_rule", got)
	}
	// Moves and claims through the pooler.
	for i := range 20 {
		if n := fireTogether(t, "bounced-"+string(rune('a'+i)), eng, eng); n != 1 {
			t.Fatalf("once_shell fired %d times through pgbouncer", n)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	counts, err := editor.CountFirings(ctx)
	if err != nil || counts["once_shell"] != 20 || counts["every_shell"] != 40 {
		t.Fatalf("counts %v, %v; want once_shell 20, every_shell 40", counts, err)
	}
}

// TestPollSQLite: ReloadMode "poll" on SQLite: another process's edit arrives through the
// version row, and a poll that finds it unmoved reloads nothing.
func TestPollSQLite(t *testing.T) {
	t.Parallel()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "poll.db")
	a := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
	b := open(t, dsn, &rulesdb.Config{ReloadMode: rulesdb.ReloadPoll, ReloadInterval: 20 * time.Millisecond})
	changed := make(chan struct{}, 1)
	defer b.Subscribe(signalled(changed))()
	v0, err := b.RulesVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	createRules(t, a, claimRules[:1])
	waitSignal(t, changed, "the poller saw the edit")
	v1, err := b.RulesVersion(context.Background())
	if err != nil || v1 <= v0 {
		t.Fatalf("version %d after %d (%v): want it grown", v1, v0, err)
	}
	if _, err := rulesdb.Open(context.Background(), dsn, &rulesdb.Config{ReloadMode: "listen"}); err == nil {
		t.Fatal("ReloadMode listen accepted")
	}
}

// TestPollVersionRowDeleted: the version row deleted by hand, with an edit made while it
// is missing (its trigger bumps nothing): the poller puts the row back and reloads, and
// sees the edits after that too. Once a warning, then never again, it used to stop.
func TestPollVersionRowDeleted(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		editor := open(t, dsn, &rulesdb.Config{ReloadInterval: -1})
		s := open(t, dsn, &rulesdb.Config{ReloadMode: rulesdb.ReloadPoll, ReloadInterval: 20 * time.Millisecond})
		eng := newEngine(t, s, nil)
		// Subscribed after the engine: told after the engine reloaded.
		changed := make(chan struct{}, 1)
		defer s.Subscribe(signalled(changed))()
		loaded := func(name string) bool {
			return slices.ContainsFunc(eng.Rules(), func(r streamrules.Rule) bool { return r.Name == name })
		}
		waitLoaded := func(name string) {
			t.Helper()
			for !loaded(name) {
				waitSignal(t, changed, "a reload with "+name)
			}
		}
		v0, err := s.RulesVersion(context.Background())
		if err != nil {
			t.Fatal(err)
		}

		// In one transaction: the edit's trigger finds no row to bump.
		tx, err := editor.DB().Beginx()
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			`DELETE FROM stream_rules_version`,
			`INSERT INTO stream_rules (name, scope, text, mode, enabled) VALUES ('while_missing', 'tool:grep', 'Grep gently.', 'remind', true)`,
		} {
			if _, err := tx.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		waitLoaded("while_missing")
		v1, err := s.RulesVersion(context.Background())
		if err != nil || v1 <= v0 {
			t.Fatalf("version %d after %d (%v): want the row back, grown", v1, v0, err)
		}

		// And the next edit, through the row put back.
		if _, err := editor.CreateRule(context.Background(), streamrules.Rule{Name: "after_missing", Scope: "tool:cat", Text: "Cat gently."}); err != nil {
			t.Fatal(err)
		}
		waitLoaded("after_missing")
		if v2, err := s.RulesVersion(context.Background()); err != nil || v2 <= v1 {
			t.Fatalf("version %d after %d (%v): want it grown by the edit", v2, v1, err)
		}

		// A store opened in poll mode while the row is missing puts it back too.
		mustExec(t, editor, `DELETE FROM stream_rules_version`)
		late := open(t, dsn, &rulesdb.Config{ReloadMode: rulesdb.ReloadPoll, ReloadInterval: time.Hour})
		if _, err := late.RulesVersion(context.Background()); err != nil {
			t.Fatalf("RulesVersion after Open: %v", err)
		}
	})
}
