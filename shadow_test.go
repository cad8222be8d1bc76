package streamrules

import (
	"context"
	"slices"
	"testing"
)

func outcomes(fs []Firing) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.Rule+":"+string(f.Outcome))
	}
	return out
}

func TestShadowTextRuleNeverActs(t *testing.T) {
	t.Parallel()
	for _, engineWide := range []bool{false, true} {
		rule := textRule("tail", "bad")
		if !engineWide {
			rule.Shadow = true
		}
		f := newFixture(t, []Rule{rule}, &Config{Shadow: engineWide})
		ctx, m := f.eng.BeginMove(context.Background(), "c")
		if m.textArmed() {
			t.Fatalf("engineWide=%v: textArmed with only a shadowed rule: speech would be held", engineWide)
		}
		if v := m.CheckAnswer(ctx, "a bad answer"); v.Discard || len(v.Rules) != 0 || v.Interrupt != "" {
			t.Fatalf("engineWide=%v: verdict %+v, want the answer accepted", engineWide, v)
		}
		// Silent for the rest of the move, like a live rule: one would-fire per miss.
		m.CheckAnswer(ctx, "bad again")
		if got := m.ToolReminders(ctx, "shell", "{}"); len(got) != 0 {
			t.Fatalf("reminders %v: a would-fire must not ride a tool result", got)
		}
		if err := m.End(ctx, nil); err != nil {
			t.Fatal(err)
		}
		fs := f.store.AllFirings()
		if got := outcomes(fs); !slices.Equal(got, []string{"tail:shadow"}) || fs[0].Retry || fs[0].Mode != ModeInterrupt {
			t.Fatalf("engineWide=%v: firings %+v, want one would-fire", engineWide, fs)
		}
		if n := len(f.log.Lines(`msg="stream rule would fire"`, "rule=tail", "chat=c", "move=1", "mode=interrupt", "retry=false")); n != 1 {
			t.Fatalf("want one would-fire line, log:\n%s", f.log)
		}
		if n := len(f.log.Lines(`msg="stream rule fired`)); n != 0 {
			t.Fatalf("a would-fire logged as a firing:\n%s", f.log)
		}
		st, err := f.eng.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r := st.Rules[0]; r.Fired != 0 || r.Shadow != 1 || r.LastFiredAt.IsZero() {
			t.Fatalf("stats %+v, want one would-fire and no firing", r)
		}
	}
}

func TestShadowBesideLiveRule(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{textRule("live", "bad"), with(textRule("watched", "bad|worse"), func(r *Rule) { r.Shadow = true })}, nil)
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	if !m.textArmed() {
		t.Fatal("a live text rule is armed: speech must be held")
	}
	v := m.CheckAnswer(ctx, "bad")
	if !v.Discard || !slices.Equal(v.Rules, []string{"live"}) {
		t.Fatalf("verdict %+v, want a discard for the live rule only", v)
	}
	if v := m.CheckAnswer(ctx, "worse"); v.Discard {
		t.Fatalf("replay verdict %+v", v)
	}
	_ = m.End(ctx, nil)
	if got := outcomes(f.store.AllFirings()); !slices.Equal(got, []string{"live:corrected", "watched:shadow"}) {
		t.Fatalf("firings %v", got)
	}
}

func TestShadowToolRuleNeverReminds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{with(softRule("wd", "write_file", ""), func(r *Rule) { r.Shadow = true })}, nil)
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	if got := m.ToolReminders(ctx, "write_file", "{}"); len(got) != 0 {
		t.Fatalf("reminders %v from a shadowed rule", got)
	}
	m.ToolReminders(ctx, "write_file", "{}")
	_ = m.End(ctx, nil)
	if got := outcomes(f.store.AllFirings()); !slices.Equal(got, []string{"wd:shadow"}) {
		t.Fatalf("firings %v, want one would-fire (a shadow call is never 'repeated')", got)
	}
	if n := len(f.log.Lines(`msg="stream rule would fire"`, "rule=wd", "mode=remind", "tool=write_file")); n != 1 {
		t.Fatalf("log:\n%s", f.log)
	}
}

// TestShadowKeepsRepeatBooks pins the documented choice (shadow.go): a would-fire counts
// for the repeat policy as a firing does.
func TestShadowKeepsRepeatBooks(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{with(textRule("once_rule", "bad"), func(r *Rule) { r.Shadow = true; r.Repeat = "once" })}, nil)
	for i := 0; i < 3; i++ {
		ctx, m := f.eng.BeginMove(context.Background(), "c")
		m.CheckAnswer(ctx, "bad")
		if err := m.End(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := outcomes(f.store.AllFirings()); !slices.Equal(got, []string{"once_rule:shadow"}) {
		t.Fatalf("firings %v, want one would-fire over three moves of a `once` rule", got)
	}
}

func TestOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cfg   *Config
		rules []Rule
		play  func(ctx context.Context, m *Move)
		want  []string
	}{
		{"corrected", nil, []Rule{textRule("t", "bad")}, func(ctx context.Context, m *Move) {
			m.CheckAnswer(ctx, "bad")
			m.CheckAnswer(ctx, "good")
		}, []string{"t:corrected"}},
		{"replay with tool calls only is corrected", nil, []Rule{textRule("t", "bad")}, func(ctx context.Context, m *Move) {
			m.CheckAnswer(ctx, "bad")
			m.CheckAnswer(ctx, " ")
			m.CheckAnswer(ctx, "bad") // later answers are not the replay
		}, []string{"t:corrected"}},
		{"missed again", nil, []Rule{textRule("t", "bad")}, func(ctx context.Context, m *Move) {
			m.CheckAnswer(ctx, "bad")
			m.CheckAnswer(ctx, "still bad")
		}, []string{"t:missed_again"}},
		{"missed again by the second rule of the set", nil, []Rule{textRule("a", "aaa"), textRule("b", "bbb")}, func(ctx context.Context, m *Move) {
			m.CheckAnswer(ctx, "bbb")
			m.CheckAnswer(ctx, "bbb still")
		}, []string{"b:missed_again"}},
		{"negate rule missed again", nil, []Rule{with(textRule("tail", "#\\d+$"), func(r *Rule) { r.Negate = true })}, func(ctx context.Context, m *Move) {
			m.CheckAnswer(ctx, "no tail")
			m.CheckAnswer(ctx, "still no tail")
		}, []string{"tail:missed_again"}},
		{"replay judged for one rule, discarded by another", &Config{MaxRetriesPerMove: 2}, []Rule{textRule("a", "aaa"), textRule("b", "bbb")}, func(ctx context.Context, m *Move) {
			m.CheckAnswer(ctx, "aaa")
			m.CheckAnswer(ctx, "bbb")
			m.CheckAnswer(ctx, "fine")
		}, []string{"a:corrected", "b:corrected"}},
		{"kept after the ceiling", &Config{MaxRetriesPerMove: -1}, []Rule{textRule("t", "bad")}, func(ctx context.Context, m *Move) {
			m.CheckAnswer(ctx, "bad")
		}, []string{"t:kept"}},
		{"no replay: the move failed first", nil, []Rule{textRule("t", "bad")}, func(ctx context.Context, m *Move) {
			m.CheckAnswer(ctx, "bad")
		}, []string{"t:"}},
		{"complied", nil, []Rule{softRule("s", "shell", "rm")}, func(ctx context.Context, m *Move) {
			m.ToolReminders(ctx, "shell", `{"cmd":"rm x"}`)
			m.ToolReminders(ctx, "shell", `{"cmd":"ls"}`)
		}, []string{"s:complied"}},
		{"repeated", nil, []Rule{softRule("s", "shell", "rm")}, func(ctx context.Context, m *Move) {
			m.ToolReminders(ctx, "shell", `{"cmd":"rm x"}`)
			m.ToolReminders(ctx, "shell", `{"cmd":"ls"}`)
			m.ToolReminders(ctx, "shell", `{"cmd":"rm y"}`)
		}, []string{"s:repeated"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tt.rules, tt.cfg)
			ctx, m := f.eng.BeginMove(context.Background(), "c")
			tt.play(ctx, m)
			_ = m.End(ctx, nil)
			if got := outcomes(f.store.AllFirings()); !slices.Equal(got, tt.want) {
				t.Fatalf("outcomes %v, want %v", got, tt.want)
			}
		})
	}
}

// TestOutcomeSetByItsRecorderStays: a firing recorded with its outcome (a fix)
// keeps it through End.
func TestOutcomeSetByItsRecorderStays(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{textRule("t", "bad")}, nil)
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	m.mu.Lock()
	m.record(Firing{Rule: "t", Mode: ModeInterrupt, Outcome: OutcomeFixed})
	m.mu.Unlock()
	m.CheckAnswer(ctx, "fine")
	_ = m.End(ctx, nil)
	if got := outcomes(f.store.AllFirings()); !slices.Equal(got, []string{"t:fixed"}) {
		t.Fatalf("outcomes %v", got)
	}
}
