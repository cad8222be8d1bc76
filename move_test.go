package streamrules

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestCheckAnswerDiscardsWithOneBlockPerRule(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{
		with(textRule("telegram_reply_tail", `↩ #\d+\s*$`), func(r *Rule) { r.Negate = true; r.When = []string{envTelegram} }),
		with(textRule("telegram_markdown_image", `!\[[^\]]*\]\([^)]*\)`), func(r *Rule) { r.When = []string{envTelegram} }),
		textRule("never", `zzz`),
	}, nil)
	ctx, m := f.eng.BeginMove(context.Background(), "c", envTelegram)
	if !m.textArmed() {
		t.Fatal("textArmed false with armed text rules and a retry left")
	}
	v := m.CheckAnswer(ctx, "Here: ![cat](http://x/cat.png)")
	want := Verdict{
		Discard: true,
		Interrupt: InterruptBlock("telegram_markdown_image", "Text of telegram_markdown_image.") + "\n" +
			InterruptBlock("telegram_reply_tail", "Text of telegram_reply_tail."),
		Rules: []string{"telegram_markdown_image", "telegram_reply_tail"},
	}
	if v.Discard != want.Discard || v.Interrupt != want.Interrupt || !slices.Equal(v.Rules, want.Rules) {
		t.Fatalf("verdict\n got %+v\nwant %+v", v, want)
	}
	if !IsInterruptMessage(v.Interrupt) || StripBlocks(v.Interrupt) != "" {
		t.Fatalf("interrupt %q is not a clean interrupt message", v.Interrupt)
	}
	fs := m.Firings()
	if len(fs) != 2 {
		t.Fatalf("firings %+v", fs)
	}
	for _, fr := range fs {
		if fr.Mode != ModeInterrupt || !fr.Retry || fr.Tool != "" || fr.ChatID != "c" || fr.Move != 1 {
			t.Fatalf("firing %+v", fr)
		}
	}
	if lines := f.log.Lines(`msg="stream rule fired on the answer"`, "mode=interrupt", "retry=true"); len(lines) != 2 {
		t.Fatalf("want two log lines for the answer, log:\n%s", f.log)
	}
	// The replay: the fired rules are silent now, the corrected answer passes.
	if v := m.CheckAnswer(ctx, "Here it is, no picture."); v.Discard || len(v.Rules) != 0 || v.Interrupt != "" {
		t.Fatalf("replay verdict %+v, want accepted", v)
	}
}

func TestCheckAnswerAccepts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{
		with(textRule("tail", `↩ #\d+$`), func(r *Rule) { r.Negate = true }),
		with(textRule("tg_only", ``), func(r *Rule) { r.When = []string{envTelegram} }),
	}, nil)
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	for _, text := range []string{"", " ", "\n\t ", "All done ↩ #42"} {
		if v := m.CheckAnswer(ctx, text); v.Discard || len(v.Rules) != 0 {
			t.Fatalf("CheckAnswer(%q) = %+v, want accepted (empty or blank says nothing; tail present)", text, v)
		}
	}
	if len(m.Firings()) != 0 {
		t.Fatalf("firings %+v on accepted answers", m.Firings())
	}
}

func TestCeilingOneRetryPerMove(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{
		textRule("first_rule", `one`),
		textRule("second_rule", `two`),
		softRule("unrelated_soft", "other_tool", "never"),
	}, nil)
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	if v := m.CheckAnswer(ctx, "one"); !v.Discard || !slices.Equal(v.Rules, []string{"first_rule"}) {
		t.Fatalf("first miss %+v, want discard", v)
	}
	if m.textArmed() {
		t.Fatal("textArmed true after the move's only retry was used")
	}
	// The replayed answer misses a different rule: kept, its reminder pending.
	v := m.CheckAnswer(ctx, "one two")
	if v.Discard || v.Interrupt != "" || !slices.Equal(v.Rules, []string{"second_rule"}) {
		t.Fatalf("second miss %+v, want kept with second_rule named", v)
	}
	if fs := m.Firings(); len(fs) != 2 || fs[1].Rule != "second_rule" || fs[1].Retry {
		t.Fatalf("firings %+v, want second_rule with retry=false", fs)
	}
	if lines := f.log.Lines("stream rule fired on the answer", "rule=second_rule", "retry=false"); len(lines) != 1 {
		t.Fatalf("log:\n%s", f.log)
	}
	// Both are silent for the rest of the move.
	if v := m.CheckAnswer(ctx, "one two"); len(v.Rules) != 0 {
		t.Fatalf("third answer %+v, want silence", v)
	}
	// The reminder rides the next tool result of this move, whatever the tool, once.
	got := m.ToolReminders(ctx, "other_tool", "{}")
	if len(got) != 1 || got[0] != (Reminder{Rule: "second_rule", Text: "Text of second_rule."}) {
		t.Fatalf("next tool call: %+v, want the pending reminder", got)
	}
	if got := m.ToolReminders(ctx, "other_tool", "{}"); len(got) != 0 {
		t.Fatalf("the call after: %+v, want nothing", got)
	}
	m.ToolReminders(ctx, "shell", "{}")
	if got := m.ToolReminders(ctx, "other_tool", `{"x":1}`); len(got) != 0 {
		t.Fatalf("a later call: %+v", got)
	}
	calls, _ := m.ToolCalls()
	if len(calls) != 1 || calls[0].Index != 0 || calls[0].Tool != "other_tool" || len(calls[0].Reminders) != 1 {
		t.Fatalf("ToolCalls %+v, want the reminded call alone, at index 0", calls)
	}
}

func TestPendingReminderDiesWithTheMove(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{textRule("first_rule", `one`), textRule("second_rule", `two`)}, nil)
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	m.CheckAnswer(ctx, "one")
	if v := m.CheckAnswer(ctx, "two"); v.Discard || !slices.Equal(v.Rules, []string{"second_rule"}) {
		t.Fatalf("verdict %+v", v)
	}
	if err := m.End(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := m.ToolReminders(ctx, "shell", "{}"); len(got) != 0 {
		t.Fatalf("a tool call after End got %+v", got)
	}
	ctx2, m2 := f.eng.BeginMove(context.Background(), "c")
	if got := m2.ToolReminders(ctx2, "shell", "{}"); len(got) != 0 {
		t.Fatalf("next move's first tool call got %+v: a pending reminder leaked across moves", got)
	}
	// The trace stays in the stats.
	counts, _ := f.store.CountFirings(context.Background())
	if counts["first_rule"] != 1 || counts["second_rule"] != 1 {
		t.Fatalf("counts %v", counts)
	}
}

func TestMaxRetriesPerMove(t *testing.T) {
	t.Parallel()
	rules := []Rule{textRule("r_a", `a`), textRule("r_b", `b`), textRule("r_c", `c`)}
	tests := []struct {
		name       string
		maxRetries int
		discards   []bool // verdicts on "a", "b", "c" in turn
	}{
		{"default one", 0, []bool{true, false, false}},
		{"one", 1, []bool{true, false, false}},
		{"two", 2, []bool{true, true, false}},
		{"three", 3, []bool{true, true, true}},
		{"disabled", -1, []bool{false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, rules, &Config{MaxRetriesPerMove: tt.maxRetries})
			ctx, m := f.eng.BeginMove(context.Background(), "c")
			var pending []string
			for i, text := range []string{"a", "b", "c"} {
				if armed := m.textArmed(); armed != tt.discards[i] {
					t.Fatalf("before %q: textArmed %v, want %v", text, armed, tt.discards[i])
				}
				v := m.CheckAnswer(ctx, text)
				if v.Discard != tt.discards[i] || len(v.Rules) != 1 || (v.Interrupt != "") != v.Discard {
					t.Fatalf("answer %q: verdict %+v, want discard=%v", text, v, tt.discards[i])
				}
				if !v.Discard {
					pending = append(pending, v.Rules...)
				}
			}
			if got := reminderNames(m.ToolReminders(ctx, "t", "")); !slices.Equal(got, append([]string{}, pending...)) {
				t.Fatalf("pending reminders %v, want %v", got, pending)
			}
		})
	}
}

func TestTextArmed(t *testing.T) {
	t.Parallel()
	tg := with(textRule("tg_rule", `x`), func(r *Rule) { r.When = []string{envTelegram} })
	once := with(textRule("once_rule", `x`), func(r *Rule) { r.Repeat = "once" })

	t.Run("no text rules", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, []Rule{softRule("s", "shell", "")}, nil)
		_, m := f.eng.BeginMove(context.Background(), "c")
		if m.textArmed() {
			t.Fatal("armed without text rules")
		}
	})
	t.Run("when does not hold", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, []Rule{tg}, nil)
		_, m := f.eng.BeginMove(context.Background(), "c", envMaster)
		if m.textArmed() {
			t.Fatal("armed although the rule's when does not hold")
		}
		_, m = f.eng.BeginMove(context.Background(), "c", envTelegram)
		if !m.textArmed() {
			t.Fatal("not armed although the rule's when holds")
		}
	})
	t.Run("fired in this move", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, []Rule{textRule("only", "x")}, &Config{MaxRetriesPerMove: 5})
		ctx, m := f.eng.BeginMove(context.Background(), "c")
		m.CheckAnswer(ctx, "x")
		if m.textArmed() {
			t.Fatal("armed although its only rule fired in this move")
		}
	})
	t.Run("repeat policy forbids", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, []Rule{once}, nil)
		ctx, m := f.eng.BeginMove(context.Background(), "c")
		if v := m.CheckAnswer(ctx, "x"); !v.Discard {
			t.Fatalf("verdict %+v", v)
		}
		_ = m.End(ctx, nil)
		_, m = f.eng.BeginMove(context.Background(), "c")
		if m.textArmed() {
			t.Fatal("armed although the once rule already fired in this chat")
		}
	})
	t.Run("no retry left", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, []Rule{textRule("a", "a"), textRule("b", "b")}, nil)
		ctx, m := f.eng.BeginMove(context.Background(), "c")
		m.CheckAnswer(ctx, "a")
		if m.textArmed() {
			t.Fatal("armed with b armed but no retry left")
		}
	})
	t.Run("replays disabled", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, []Rule{textRule("a", "a")}, &Config{MaxRetriesPerMove: -1})
		_, m := f.eng.BeginMove(context.Background(), "c")
		if m.textArmed() {
			t.Fatal("armed with replays disabled")
		}
	})
	t.Run("after End", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, []Rule{textRule("a", "a")}, nil)
		ctx, m := f.eng.BeginMove(context.Background(), "c")
		_ = m.End(ctx, nil)
		if m.textArmed() {
			t.Fatal("armed after End")
		}
		if v := m.CheckAnswer(ctx, "a"); v.Discard || len(v.Rules) != 0 {
			t.Fatalf("verdict after End %+v", v)
		}
	})
}

func TestEndWritesOnce(t *testing.T) {
	t.Parallel()
	mem, err := NewMemoryStore([]Rule{softRule("s", "shell", ""), textRule("t", "bad")}, testEnvs...)
	if err != nil {
		t.Fatal(err)
	}
	st := &recordingStore{MemoryStore: mem}
	f := newFixtureOn(t, st, mem, nil)

	ctx, m := f.eng.BeginMove(context.Background(), "c")
	m.ToolReminders(ctx, "shell", "{}")
	m.ToolReminders(ctx, "shell", "{}")
	m.CheckAnswer(ctx, "bad")
	if got := st.Saves(); len(got) != 0 {
		t.Fatalf("the store was written during the move: %+v", got)
	}
	if err := m.End(ctx, nil); err != nil {
		t.Fatal(err)
	}
	saves := st.Saves()
	if len(saves) != 1 {
		t.Fatalf("%d SaveMove calls, want 1", len(saves))
	}
	rec := saves[0]
	if rec.ChatID != "c" || rec.Move != 1 || !rec.Answered || len(rec.Firings) != 2 ||
		rec.Firings[0].Rule != "s" || rec.Firings[1].Rule != "t" {
		t.Fatalf("record %+v", rec)
	}
	st.mu.Lock()
	loads := st.loadChats
	st.mu.Unlock()
	if loads != 1 {
		t.Fatalf("%d LoadChat calls for one move, want 1", loads)
	}

	// End twice.
	if err := m.End(ctx, nil); !errors.Is(err, ErrMoveEnded) {
		t.Fatalf("second End = %v, want ErrMoveEnded", err)
	}
	runErr := errors.New("run failed")
	if err := m.End(ctx, runErr); !errors.Is(err, ErrMoveEnded) || !errors.Is(err, runErr) {
		t.Fatalf("third End = %v, want ErrMoveEnded joined with the run error", err)
	}
	if len(st.Saves()) != 1 {
		t.Fatal("a second End wrote again")
	}
	if got, _ := mem.LoadChat(context.Background(), "c"); got.Moves != 1 || got.LastFired["s"] != 1 || got.LastFired["t"] != 1 {
		t.Fatalf("chat state %+v", got)
	}
}

func TestEndReturnsTheRunError(t *testing.T) {
	t.Parallel()
	mem, _ := NewMemoryStore([]Rule{softRule("s", "shell", "")}, testEnvs...)
	st := &recordingStore{MemoryStore: mem}
	f := newFixtureOn(t, st, mem, nil)
	runErr := errors.New("agent failed")

	// A failed move with firings: written, not counted.
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	m.ToolReminders(ctx, "shell", "{}")
	if err := m.End(ctx, runErr); err != runErr {
		t.Fatalf("End = %v, want the run error as is", err)
	}
	if saves := st.Saves(); len(saves) != 1 || saves[0].Answered || len(saves[0].Firings) != 1 {
		t.Fatalf("saves %+v", saves)
	}
	// A failed move without firings has nothing to write.
	ctx, m = f.eng.BeginMove(context.Background(), "c")
	if err := m.End(ctx, runErr); err != runErr {
		t.Fatalf("End = %v", err)
	}
	if len(st.Saves()) != 1 {
		t.Fatalf("a failed move without firings was written: %+v", st.Saves())
	}
	// An answered move without firings counts the move.
	ctx, m = f.eng.BeginMove(context.Background(), "d")
	if err := m.End(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if saves := st.Saves(); len(saves) != 2 || !saves[1].Answered || len(saves[1].Firings) != 0 {
		t.Fatalf("saves %+v", saves)
	}

	// A store error is joined with the run error, and logged.
	st.mu.Lock()
	st.saveErr = errors.New("disk full")
	st.mu.Unlock()
	ctx, m = f.eng.BeginMove(context.Background(), "e")
	m.ToolReminders(ctx, "shell", "{}")
	err := m.End(ctx, runErr)
	if err == nil || !errors.Is(err, runErr) || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("End = %v, want both errors", err)
	}
	ctx, m = f.eng.BeginMove(context.Background(), "e")
	if err := m.End(ctx, nil); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("End = %v, want the store error", err)
	}
	if lines := f.log.Lines("level=ERROR", "move not saved", "disk full"); len(lines) != 2 {
		t.Fatalf("log:\n%s", f.log)
	}
}

func TestEndSavesAfterTheCallerGaveUp(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	ctx, m := f.eng.BeginMove(ctx, "c")
	cancel()
	if err := m.End(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.store.LoadChat(context.Background(), "c"); got.Moves != 1 {
		t.Fatalf("chat state %+v, want the move counted", got)
	}
}

// ctxCheckingStore fails SaveMove when its context is already done.
type ctxCheckingStore struct{ *MemoryStore }

func (s ctxCheckingStore) SaveMove(ctx context.Context, rec MoveRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.MemoryStore.SaveMove(ctx, rec)
}

func TestEndWriteIsNotCancelledWithCtx(t *testing.T) {
	t.Parallel()
	mem, _ := NewMemoryStore(nil, testEnvs...)
	f := newFixtureOn(t, ctxCheckingStore{mem}, mem, nil)
	ctx, cancel := context.WithCancel(context.Background())
	ctx, m := f.eng.BeginMove(ctx, "c")
	cancel()
	if err := m.End(ctx, nil); err != nil {
		t.Fatalf("End with a cancelled ctx = %v, want the write done anyway", err)
	}
}

func TestBeginMoveStoreErrorFailsClosed(t *testing.T) {
	t.Parallel()
	mem, _ := NewMemoryStore([]Rule{
		with(softRule("once_rule", "shell", ""), func(r *Rule) { r.Repeat = "once" }),
		with(softRule("after_rule", "shell", ""), func(r *Rule) { r.Repeat = "after:3" }),
		softRule("every_rule", "shell", ""),
	}, testEnvs...)

	st := &recordingStore{MemoryStore: mem}
	f := newFixtureOn(t, st, mem, nil)
	if got := runMove(t, f.eng, "c", nil); len(got) != 3 {
		t.Fatalf("move 1: %v", got)
	}
	st.mu.Lock()
	st.loadChatErr = errors.New("timeout")
	st.mu.Unlock()
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	// The move goes on; rules with a repeat policy cannot know their history, so they stay
	// silent rather than repeat; a rule without one still speaks.
	got := m.ToolReminders(ctx, "shell", "{}")
	if len(got) != 1 || got[0].Rule != "every_rule" {
		t.Fatalf("reminders %v, want every_rule alone", got)
	}
	if lines := f.log.Lines("level=WARN", "chat state not loaded", "timeout"); len(lines) != 1 {
		t.Fatalf("log:\n%s", f.log)
	}
}

func TestToolRemindersAfterEndAreInert(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{softRule("s", "shell", "")}, nil)
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	_ = m.End(ctx, nil)
	if got := m.ToolReminders(ctx, "shell", "{}"); got != nil {
		t.Fatalf("reminders after End: %v", got)
	}
	if len(m.Firings()) != 0 {
		t.Fatalf("firings after End: %+v (they would never be saved)", m.Firings())
	}
	if lines := f.log.Lines("stream rule fired"); len(lines) != 0 {
		t.Fatalf("a firing after End was logged but can never reach the stats: %v", lines)
	}
}
