package streamrules

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestDisabledRuleNotLoaded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{
		with(softRule("off", "shell", ""), func(r *Rule) { r.Disabled = true }),
		with(textRule("off_text", ""), func(r *Rule) { r.Disabled = true }),
		softRule("on", "shell", ""),
	}, nil)
	if got := f.eng.Rules(); len(got) != 1 || got[0].Name != "on" {
		t.Fatalf("Rules() = %+v, want only the enabled rule", got)
	}
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	if got := reminderNames(m.ToolReminders(ctx, "shell", "{}")); !slices.Equal(got, []string{"on"}) {
		t.Fatalf("reminders %v, want only the enabled rule", got)
	}
	if m.textArmed() {
		t.Fatal("a disabled text rule arms the move")
	}
	if v := m.CheckAnswer(ctx, "anything"); v.Discard || len(v.Rules) != 0 {
		t.Fatalf("a disabled text rule judged the answer: %+v", v)
	}
	// Disabled, but kept.
	if _, err := f.store.GetRule(context.Background(), "off"); err != nil {
		t.Fatalf("disabled rule not kept: %v", err)
	}
}

func TestBadRowsSkippedWithOneWarningEach(t *testing.T) {
	t.Parallel()
	st, err := NewMemoryStore([]Rule{softRule("good_soft", "shell", ""), textRule("good_text", "bad answer")})
	if err != nil {
		t.Fatal(err)
	}
	st.PutRaw(softRule("bad_regex", "shell", `(unclosed`))
	st.PutRaw(with(softRule("bad_when", "shell", ""), func(r *Rule) { r.When = []string{"slack"} }))
	st.PutRaw(with(textRule("bad_mode", ""), func(r *Rule) { r.Mode = ModeRemind }))
	st.PutRaw(with(textRule("bad_text", ""), func(r *Rule) { r.Text = strings.Repeat("x", 401) }))
	st.PutRaw(with(softRule("bad_repeat", "shell", ""), func(r *Rule) { r.Repeat = "twice" }))
	st.PutRaw(softRule("Bad Name", "shell", ""))
	st.PutRaw(with(softRule("bad_scope", "shell", ""), func(r *Rule) { r.Scope = "thought" }))
	// A hand edit that gives a second row the same name (MemoryStore keys by the raw name,
	// so " good_soft" is a second row that normalizes to "good_soft").
	st.PutRaw(with(softRule(" good_soft", "shell", ""), func(r *Rule) { r.Text = "the duplicate" }))
	// Bad and disabled: not loaded, so not judged.
	st.PutRaw(with(softRule("bad_but_off", "shell", "("), func(r *Rule) { r.Disabled = true }))

	f := newFixtureOn(t, st, st, nil)
	for _, name := range []string{"bad_regex", "bad_when", "bad_mode", "bad_text", "bad_repeat", `"Bad Name"`, "bad_scope"} {
		if lines := f.log.Lines("level=WARN", "stream rule skipped: bad rule in store", "rule="+name); len(lines) != 1 {
			t.Errorf("rule %s: %d warnings, want 1", name, len(lines))
		}
	}
	// The padded row is judged by its name as stored, not as a second good_soft.
	if lines := f.log.Lines("level=WARN", "stream rule skipped: bad rule in store", `rule=" good_soft"`, "not a valid name as stored"); len(lines) != 1 {
		t.Errorf("padded name: %d warnings, want 1:\n%s", len(lines), f.log)
	}
	if lines := f.log.Lines("bad_but_off"); len(lines) != 0 {
		t.Errorf("a disabled row was judged: %v", lines)
	}
	if lines := f.log.Lines("level=WARN"); len(lines) != 8 {
		t.Errorf("%d warnings, want 8:\n%s", len(lines), f.log)
	}
	// Reloads (every notification, every backstop tick) do not repeat the warnings.
	for i := 0; i < 3; i++ {
		if err := f.eng.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if lines := f.log.Lines("level=WARN"); len(lines) != 8 {
		t.Errorf("%d warnings after reloads, want still 8", len(lines))
	}

	var names []string
	for _, r := range f.eng.Rules() {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, []string{"good_soft", "good_text"}) {
		t.Fatalf("loaded %v, want only the good rules", names)
	}
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	got := m.ToolReminders(ctx, "shell", "{}")
	if len(got) != 1 || got[0].Rule != "good_soft" {
		t.Fatalf("reminders %+v, want good_soft alone", got)
	}
	if v := m.CheckAnswer(ctx, "a bad answer"); !v.Discard || !slices.Equal(v.Rules, []string{"good_text"}) {
		t.Fatalf("verdict %+v, want good_text", v)
	}
}

// dupStore returns two rows with one name, as a database without a unique index could.
type dupStore struct{ *MemoryStore }

func (s dupStore) LoadRules(ctx context.Context) ([]Rule, error) {
	rules, err := s.MemoryStore.LoadRules(ctx)
	if err != nil {
		return nil, err
	}
	second := rules[0]
	second.ID = 99
	second.Text = "second row"
	return append(rules, second), nil
}

func TestDuplicateRowsFirstWins(t *testing.T) {
	t.Parallel()
	st, err := NewMemoryStore([]Rule{softRule("dup", "shell", "")})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureOn(t, dupStore{st}, st, nil)
	if got := f.eng.Rules(); len(got) != 1 || got[0].Text != "Text of dup." {
		t.Fatalf("Rules() = %+v, want the first row only", got)
	}
	if lines := f.log.Lines("level=WARN", "duplicate name", "rule=dup", "id=99"); len(lines) != 1 {
		t.Fatalf("want one duplicate warning, log:\n%s", f.log)
	}
}

// TestPaddedNamesNeverDisplaceARule: a hand-typed row whose name is not valid as stored
// (padding, upper case) is skipped with one warning naming its id, whatever it sorts
// before, and the real rule of that name runs.
func TestPaddedNamesNeverDisplaceARule(t *testing.T) {
	t.Parallel()
	st, err := NewMemoryStore([]Rule{softRule("good_tool", "shell", "rm"), textRule("good_text", "bad")})
	if err != nil {
		t.Fatal(err)
	}
	st.PutRaw(with(softRule(" good_tool", "shell", "ls"), func(r *Rule) { r.Mode = ModeRemind; r.Text = "shadow" }))
	st.PutRaw(with(textRule("good_text ", "x"), func(r *Rule) { r.Mode = ModeInterrupt }))
	st.PutRaw(with(softRule("Good_tool", "shell", ""), func(r *Rule) { r.Mode = ModeRemind }))
	st.PutRaw(with(softRule("\tmike", "shell", ""), func(r *Rule) { r.Mode = ModeRemind }))
	f := newFixtureOn(t, st, st, nil)
	var names []string
	for _, r := range f.eng.Rules() {
		names = append(names, r.Name)
	}
	if want := []string{"good_text", "good_tool"}; !slices.Equal(names, want) {
		t.Fatalf("Rules() = %v, want %v", names, want)
	}
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	if got := m.ToolReminders(ctx, "shell", `{"cmd":"rm -rf /"}`); len(got) != 1 || got[0].Rule != "good_tool" || got[0].Text != "Text of good_tool." {
		t.Fatalf("reminders on rm = %+v, want the real good_tool", got)
	}
	if got := m.ToolReminders(ctx, "shell", `{"cmd":"ls"}`); len(got) != 0 {
		t.Fatalf("reminders on ls = %+v, want none: the padded row must not run", got)
	}
	skipped := f.eng.Skipped()
	if len(skipped) != 4 {
		t.Fatalf("Skipped() = %+v, want the 4 hand-typed rows", skipped)
	}
	for _, sk := range skipped {
		if sk.Field != "name" || !strings.Contains(sk.Reason, "not a valid name as stored") || sk.ID == 0 {
			t.Errorf("skipped %+v, want a name reason with the row id", sk)
		}
		if lines := f.log.Lines("level=WARN", fmt.Sprintf("id=%d", sk.ID)); len(lines) != 1 {
			t.Errorf("row %d: %d warnings, want 1", sk.ID, len(lines))
		}
	}
	if lines := f.log.Lines("level=INFO", "stream rules loaded", "loaded=2", "disabled=0", "skipped=4"); len(lines) != 1 {
		t.Errorf("want one summary line, log:\n%s", f.log)
	}
}
