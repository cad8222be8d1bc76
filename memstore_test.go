package streamrules

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestMemoryStoreCRUD(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := NewMemoryStore([]Rule{softRule("b_rule", "shell", "")}, "voice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewMemoryStore([]Rule{softRule("Bad", "shell", "")}, testEnvs...); err == nil {
		t.Fatal("NewMemoryStore accepted a bad rule")
	}

	created, err := st.CreateRule(ctx, Rule{Name: " a_rule ", Scope: "text", Text: " x ", When: []string{"voice"}, Disabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if created.Name != "a_rule" || created.Mode != ModeInterrupt || created.Text != "x" || created.ID == 0 ||
		created.CreatedAt.IsZero() || !created.UpdatedAt.Equal(created.CreatedAt) {
		t.Fatalf("created %+v", created)
	}
	if _, err := st.CreateRule(ctx, softRule("a_rule", "shell", "")); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate create = %v, want ErrExists", err)
	}
	var ve *ValidationError
	if _, err := st.CreateRule(ctx, textRule("c_rule", "(")); !errors.As(err, &ve) || ve.Field != "condition" {
		t.Fatalf("bad create = %v, want a condition error", err)
	}
	if _, err := st.CreateRule(ctx, with(textRule("c_rule", ""), func(r *Rule) { r.When = []string{"video"} })); !errors.As(err, &ve) || ve.Field != "when" {
		t.Fatalf("bad create = %v, want a when error", err)
	}

	all, _ := st.ListRules(ctx)
	if len(all) != 2 || all[0].Name != "a_rule" || all[1].Name != "b_rule" {
		t.Fatalf("ListRules %+v, want both, disabled included, by name", all)
	}
	// LoadRules returns the disabled rule too, marked: the engine counts and skips it.
	loaded, _ := st.LoadRules(ctx)
	if len(loaded) != 2 || !loaded[0].Disabled || loaded[1].Disabled {
		t.Fatalf("LoadRules %+v, want both, a_rule disabled", loaded)
	}

	// Update bumps UpdatedAt strictly, keeps ID and CreatedAt, may rename.
	frozen := created.UpdatedAt
	st.mu.Lock()
	st.now = func() time.Time { return frozen } // a clock that does not move
	st.mu.Unlock()
	upd := created
	upd.Name = "a_renamed"
	upd.Text = "y"
	got, err := st.UpdateRule(ctx, "a_rule", upd)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != created.ID || !got.CreatedAt.Equal(created.CreatedAt) || !got.UpdatedAt.After(created.UpdatedAt) {
		t.Fatalf("updated %+v from %+v: UpdatedAt must grow, ID and CreatedAt stay", got, created)
	}
	if _, err := st.GetRule(ctx, "a_rule"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("old name after rename: %v", err)
	}
	if _, err := st.UpdateRule(ctx, "nope", upd); !errors.Is(err, ErrNotFound) {
		t.Fatalf("update missing = %v", err)
	}
	upd.Name = "b_rule"
	if _, err := st.UpdateRule(ctx, "a_renamed", upd); !errors.Is(err, ErrExists) {
		t.Fatalf("rename onto another rule = %v, want ErrExists", err)
	}
	upd.Text = ""
	if _, err := st.UpdateRule(ctx, "a_renamed", upd); !errors.As(err, &ve) || ve.Field != "text" {
		t.Fatalf("bad update = %v", err)
	}

	if err := st.DeleteRule(ctx, "a_renamed"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteRule(ctx, "a_renamed"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete = %v", err)
	}
}

func TestMemoryStoreDoesNotAlias(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := NewMemoryStore(nil, testEnvs...)
	r, err := st.CreateRule(ctx, with(textRule("a", ""), func(r *Rule) { r.When = []string{envMaster, envTelegram} }))
	if err != nil {
		t.Fatal(err)
	}
	r.When[0] = "mutated"
	raw := with(textRule("b", ""), func(r *Rule) { r.When = []string{envMaster} })
	st.PutRaw(raw)
	raw.When[0] = "mutated"
	got, _ := st.GetRule(ctx, "a")
	got.When[1] = "mutated"
	listed, _ := st.ListRules(ctx)
	for _, l := range listed {
		for _, w := range l.When {
			if w == "mutated" {
				t.Fatalf("a caller's slice reached the store: %+v", listed)
			}
		}
	}
	eng := newFixtureOn(t, st, st, nil).eng
	rules := eng.Rules()
	rules[0].When[0] = "mutated"
	if eng.Rules()[0].When[0] == "mutated" {
		t.Fatal("Engine.Rules shares its slices with the loaded set")
	}
}

func TestMemoryStoreChatState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := NewMemoryStore(nil, testEnvs...)
	if s, err := st.LoadChat(ctx, "new"); err != nil || s.Moves != 0 || len(s.LastFired) != 0 {
		t.Fatalf("fresh chat %+v, %v", s, err)
	}
	_ = st.SaveMove(ctx, MoveRecord{ChatID: "c", Move: 1, Answered: true, Firings: []Firing{{Rule: "a", Move: 1}}})
	_ = st.SaveMove(ctx, MoveRecord{ChatID: "c", Move: 2, Answered: false, Firings: []Firing{{Rule: "b", Move: 2}}})
	_ = st.SaveMove(ctx, MoveRecord{ChatID: "c", Move: 2, Answered: true})
	s, _ := st.LoadChat(ctx, "c")
	if s.Moves != 2 || s.LastFired["a"] != 1 || s.LastFired["b"] != 2 {
		t.Fatalf("chat state %+v", s)
	}
	s.LastFired["a"] = 99
	if again, _ := st.LoadChat(ctx, "c"); again.LastFired["a"] != 1 {
		t.Fatal("LoadChat returned the store's own map")
	}
	if n := len(st.AllFirings()); n != 2 {
		t.Fatalf("%d firings", n)
	}
	counts, _ := st.CountFirings(ctx)
	if counts["a"] != 1 || counts["b"] != 1 {
		t.Fatalf("counts %v", counts)
	}
}

func TestMemoryStoreSubscribe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := NewMemoryStore(nil, testEnvs...)
	calls := 0
	cancel := st.Subscribe(func() { calls++ })
	_, _ = st.CreateRule(ctx, textRule("a", ""))
	_, _ = st.UpdateRule(ctx, "a", textRule("a", "x"))
	_, _ = st.CreateRule(ctx, textRule("Bad", "")) // rejected: no change, no call
	_ = st.DeleteRule(ctx, "a")
	_ = st.DeleteRule(ctx, "a") // not found: no call
	st.PutRaw(textRule("b", ""))
	if calls != 4 {
		t.Fatalf("%d notifications, want 4", calls)
	}
	cancel()
	_, _ = st.CreateRule(ctx, textRule("c", ""))
	if calls != 4 {
		t.Fatal("notified after cancel")
	}
}
