package streamrules

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

func TestHooks(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		checks  []string
		outs    []string
		reloads []ReloadInfo
		saves   []error
	)
	cfg := &Config{
		OnCheck: func(c CheckInfo) {
			mu.Lock()
			defer mu.Unlock()
			if c.Duration < 0 {
				t.Errorf("negative check duration %v", c.Duration)
			}
			checks = append(checks, fmt.Sprintf("%s/%v", c.Mode, c.Discard))
		},
		OnOutcome: func(_ context.Context, f Firing) {
			mu.Lock()
			defer mu.Unlock()
			outs = append(outs, f.Rule+":"+string(f.Outcome))
		},
		OnReload: func(info ReloadInfo) {
			mu.Lock()
			defer mu.Unlock()
			reloads = append(reloads, info)
		},
		OnSave: func(info SaveInfo) {
			mu.Lock()
			defer mu.Unlock()
			saves = append(saves, info.Err)
		},
	}
	st, err := NewMemoryStore([]Rule{softRule("s", "shell", ""), textRule("t", "bad")}, testEnvs...)
	if err != nil {
		t.Fatal(err)
	}
	st.PutRaw(Rule{Name: "broken", Scope: "text", Condition: "(", Text: "x"})
	st.PutRaw(with(textRule("off", "x"), func(r *Rule) { r.Disabled = true }))
	rec := &recordingStore{MemoryStore: st}
	f := newFixtureOn(t, rec, st, cfg)

	ctx, m := f.eng.BeginMove(context.Background(), "c")
	m.ToolReminders(ctx, "shell", "{}")
	m.CheckAnswer(ctx, "bad")
	m.CheckAnswer(ctx, "good")
	if err := m.End(ctx, nil); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	rec.saveErr = errors.New("disk full")
	rec.loadErr = errors.New("store down")
	rec.mu.Unlock()
	ctx, m = f.eng.BeginMove(context.Background(), "c")
	m.ToolReminders(ctx, "shell", "{}")
	_ = m.End(ctx, nil)
	_ = f.eng.Reload(context.Background())

	mu.Lock()
	defer mu.Unlock()
	if want := []string{"remind/false", "interrupt/true", "interrupt/false", "remind/false"}; !slices.Equal(checks, want) {
		t.Fatalf("checks %v, want %v", checks, want)
	}
	if want := []string{"s:complied", "t:corrected", "s:complied"}; !slices.Equal(outs, want) {
		t.Fatalf("outcomes %v, want %v", outs, want)
	}
	if len(saves) != 2 || saves[0] != nil || saves[1] == nil {
		t.Fatalf("saves %v, want ok then the store's error", saves)
	}
	want := LoadSummary{Loaded: 2, Disabled: 1, Skipped: 1} // stores return disabled rows too, marked, for the counts
	if len(reloads) != 2 || reloads[0].Err != nil || !reloads[0].Changed || reloads[0].Rules != want ||
		reloads[1].Err == nil || reloads[1].Changed || reloads[1].Rules != want || !slices.Equal(reloads[1].Names, []string{"s", "t"}) {
		t.Fatalf("reloads %+v, want the first load, then a failed one keeping %+v", reloads, want)
	}
	if got := f.eng.loadSummary(); got != want {
		t.Fatalf("RuleCounts %+v, want %+v", got, want)
	}
}

// TestRuleCountsDisabled: a store that returns disabled rows gets them counted.
func TestRuleCountsDisabled(t *testing.T) {
	t.Parallel()
	mem, _ := NewMemoryStore([]Rule{textRule("on", "x"), with(textRule("off", "x"), func(r *Rule) { r.Disabled = true })}, testEnvs...)
	f := newFixtureOn(t, allRows{mem}, mem, nil)
	if got := f.eng.loadSummary(); got != (LoadSummary{Loaded: 1, Disabled: 1}) {
		t.Fatalf("RuleCounts %+v", got)
	}
}

type allRows struct{ *MemoryStore }

func (s allRows) LoadRules(ctx context.Context) ([]Rule, error) { return s.ListRules(ctx) }
