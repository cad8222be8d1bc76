package streamrules

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestReloadOnChange(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{softRule("first", "shell", "")}, nil)
	ctx := context.Background()
	before, mBefore := f.eng.BeginMove(ctx, "old-move")

	if _, err := f.store.CreateRule(ctx, softRule("second", "shell", "")); err != nil {
		t.Fatal(err)
	}
	c1, m1 := f.eng.BeginMove(ctx, "c1")
	if got := reminderNames(m1.ToolReminders(c1, "shell", "{}")); !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("after create: %v", got)
	}
	// A move begun before the edit keeps the set it started with.
	if got := reminderNames(mBefore.ToolReminders(before, "shell", "{}")); !slices.Equal(got, []string{"first"}) {
		t.Fatalf("old move: %v, want the rules it began with", got)
	}

	edited := softRule("first", "shell", "")
	edited.Text = "Edited text."
	if _, err := f.store.UpdateRule(ctx, "first", edited); err != nil {
		t.Fatal(err)
	}
	c2, m2 := f.eng.BeginMove(ctx, "c2")
	got := m2.ToolReminders(c2, "shell", "{}")
	if len(got) != 2 || got[0].Text != "Edited text." {
		t.Fatalf("after edit: %+v", got)
	}

	if err := f.store.DeleteRule(ctx, "second"); err != nil {
		t.Fatal(err)
	}
	disabled := edited
	disabled.Disabled = true
	if _, err := f.store.UpdateRule(ctx, "first", disabled); err != nil {
		t.Fatal(err)
	}
	c3, m3 := f.eng.BeginMove(ctx, "c3")
	if got := m3.ToolReminders(c3, "shell", "{}"); len(got) != 0 {
		t.Fatalf("after delete and disable: %+v", got)
	}
	if len(f.eng.Rules()) != 0 {
		t.Fatalf("Rules() = %+v, want none", f.eng.Rules())
	}

	// Close stops following the store.
	f.eng.Close()
	if _, err := f.store.CreateRule(ctx, softRule("third", "shell", "")); err != nil {
		t.Fatal(err)
	}
	if len(f.eng.Rules()) != 0 {
		t.Fatal("a closed engine still reloads")
	}
	if err := f.eng.Reload(ctx); err != nil || len(f.eng.Rules()) != 1 {
		t.Fatalf("explicit Reload: %v, %d rules", err, len(f.eng.Rules()))
	}
}

func TestReloadErrorKeepsTheRules(t *testing.T) {
	t.Parallel()
	mem, err := NewMemoryStore([]Rule{softRule("kept", "shell", "")}, testEnvs...)
	if err != nil {
		t.Fatal(err)
	}
	st := &recordingStore{MemoryStore: mem}
	f := newFixtureOn(t, st, mem, nil)
	st.mu.Lock()
	st.loadErr = errors.New("db gone")
	st.mu.Unlock()
	if _, err := mem.CreateRule(context.Background(), softRule("new_one", "shell", "")); err != nil {
		t.Fatal(err)
	}
	if got := f.eng.Rules(); len(got) != 1 || got[0].Name != "kept" {
		t.Fatalf("Rules() = %+v, want the rules loaded before", got)
	}
	if lines := f.log.Lines("level=WARN", "reload failed", "db gone"); len(lines) != 1 {
		t.Fatalf("want one reload warning, log:\n%s", f.log)
	}
	if err := f.eng.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "db gone") {
		t.Fatalf("Reload = %v, want the store error", err)
	}
}

// A reload that finds the same rows keeps the compiled set (compiling is the expensive
// part); a changed row is compiled and seen.
func TestReloadCompilesOnlyOnChange(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{softRule("s", "shell", "")}, nil)
	before := f.eng.rules.Load()
	for i := 0; i < 3; i++ {
		if err := f.eng.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if f.eng.rules.Load() != before {
		t.Fatal("an unchanged reload recompiled the rule set")
	}
	r := softRule("s", "shell", "")
	r.Text = "edited"
	if _, err := f.store.UpdateRule(context.Background(), "s", r); err != nil {
		t.Fatal(err)
	}
	if f.eng.rules.Load() == before || f.eng.Rules()[0].Text != "edited" {
		t.Fatalf("the edit was not compiled: %+v", f.eng.Rules())
	}
}
