package streamrules

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestSoftReminder(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{
		softRule("no_rm_rf", "shell", `"cmd":"rm -rf `),
		softRule("write_diff", "write_file", ""),
	}, nil)
	ctx := context.Background()
	tests := []struct {
		name, tool, input string
		want              []string
	}{
		{"matching call", "shell", `{"cmd":"rm -rf /tmp/x"}`, []string{"no_rm_rf"}},
		{"args compacted before matching", "shell", "{\n  \"cmd\" : \"rm -rf /tmp/x\"\n}", []string{"no_rm_rf"}},
		{"spaces inside a JSON string stay", "shell", `{"cmd": "rm  -rf /"}`, []string{}},
		{"no match", "shell", `{"cmd":"ls"}`, []string{}},
		{"other tool", "shell_v2", `{"cmd":"rm -rf /"}`, []string{}},
		{"raw non-JSON input is matched raw", "shell", `"cmd":"rm -rf / (not JSON)`, []string{"no_rm_rf"}},
		{"empty condition matches any call", "write_file", "whatever", []string{"write_diff"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, move := f.eng.BeginMove(ctx, "chat-"+tt.name)
			got := move.ToolReminders(ctx, tt.tool, tt.input)
			if !slices.Equal(reminderNames(got), tt.want) {
				t.Fatalf("ToolReminders(%s, %q) = %v, want %v", tt.tool, tt.input, reminderNames(got), tt.want)
			}
			for _, r := range got {
				if r.Text != "Text of "+r.Rule+"." {
					t.Fatalf("reminder %q has text %q", r.Rule, r.Text)
				}
			}
			// Only calls that got reminders are recorded, with their position in the move.
			calls, _ := move.ToolCalls()
			if len(got) == 0 {
				if len(calls) != 0 {
					t.Fatalf("ToolCalls = %+v, want none for a call without reminders", calls)
				}
				return
			}
			if len(calls) != 1 || calls[0].Index != 0 || calls[0].Tool != tt.tool || calls[0].Input != tt.input || !slices.Equal(calls[0].Reminders, got) {
				t.Fatalf("ToolCalls = %+v, want the one call with its reminders", calls)
			}
		})
	}
}

func TestToolCallsIndex(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{softRule("wf", "write_file", `"a"`)}, nil)
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	m.ToolReminders(ctx, "shell", "{}")             // 0: no rules
	m.ToolReminders(ctx, "write_file", `{"p":"b"}`) // 1: no match
	m.ToolReminders(ctx, "write_file", `{"p":"a"}`) // 2: reminded
	m.ToolReminders(ctx, "write_file", `{"p":"a"}`) // 3: silent for the rest of the move
	calls, _ := m.ToolCalls()
	if len(calls) != 1 || calls[0].Index != 2 || calls[0].Input != `{"p":"a"}` || reminderNames(calls[0].Reminders)[0] != "wf" {
		t.Fatalf("ToolCalls %+v, want the call at index 2 alone", calls)
	}
}

func TestSoftNegate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{with(softRule("diff_please", "write_file", `"mode":"diff"`), func(r *Rule) { r.Negate = true })}, nil)
	ctx := context.Background()

	ctx1, m1 := f.eng.BeginMove(ctx, "a")
	if got := m1.ToolReminders(ctx1, "write_file", `{"path": "a.go", "mode": "diff"}`); len(got) != 0 {
		t.Fatalf("negate rule fired although the condition matched: %v", got)
	}
	if got := m1.ToolReminders(ctx1, "write_file", `{"path": "a.go"}`); !slices.Equal(reminderNames(got), []string{"diff_please"}) {
		t.Fatalf("negate rule did not fire on a missing condition: %v", got)
	}
}

func TestSoftWhenAllMustHold(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{
		with(softRule("client_shell", "shell", ""), func(r *Rule) { r.When = []string{envClientOps, envTelegram} }),
		with(softRule("voice_shell", "shell", ""), func(r *Rule) { r.When = []string{"voice"} }),
		softRule("any_shell", "shell", ""),
	}, &Config{Environments: []string{"voice"}})
	tests := []struct {
		env  []string
		want []string
	}{
		{nil, []string{"any_shell"}},
		{[]string{envTelegram}, []string{"any_shell"}},
		{[]string{envClientOps}, []string{"any_shell"}},
		{[]string{envClientOps, envTelegram}, []string{"any_shell", "client_shell"}},
		{[]string{envTelegram, envClientOps, envMaster, envPicture}, []string{"any_shell", "client_shell"}},
		{[]string{"voice"}, []string{"any_shell", "voice_shell"}},
		{[]string{"voice", "no_such_env"}, []string{"any_shell", "voice_shell"}},
	}
	for i, tt := range tests {
		ctx, move := f.eng.BeginMove(context.Background(), fmt.Sprint("chat", i), tt.env...)
		if got := reminderNames(move.ToolReminders(ctx, "shell", "{}")); !slices.Equal(got, tt.want) {
			t.Errorf("env %v: reminders %v, want %v", tt.env, got, tt.want)
		}
	}
	if lines := f.log.Lines("unknown environment", "no_such_env"); len(lines) != 1 {
		t.Errorf("unknown environment: %d warnings, want 1:\n%s", len(lines), f.log)
	}
}

func TestFiredRuleSilentForTheRestOfTheMove(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{softRule("every", "shell", ""), softRule("other", "write_file", "")}, nil)
	ctx, m := f.eng.BeginMove(context.Background(), "a")
	if got := reminderNames(m.ToolReminders(ctx, "shell", "{}")); !slices.Equal(got, []string{"every"}) {
		t.Fatalf("first call: %v", got)
	}
	for i := 0; i < 3; i++ {
		if got := m.ToolReminders(ctx, "shell", fmt.Sprintf(`{"i":%d}`, i)); len(got) != 0 {
			t.Fatalf("call %d: %v, want silence for the rest of the move", i+2, got)
		}
	}
	if got := reminderNames(m.ToolReminders(ctx, "write_file", "{}")); !slices.Equal(got, []string{"other"}) {
		t.Fatalf("another rule: %v", got)
	}
	if err := m.End(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := runMove(t, f.eng, "a", nil); !slices.Equal(got, []string{"every"}) {
		t.Fatalf("next move: %v, want the every-time rule again", got)
	}
}

func TestSeveralRemindersSortedByName(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{
		softRule("charlie", "shell", ""),
		softRule("alpha", "shell", ""),
		softRule("bravo", "shell", `ls`),
		softRule("delta", "shell", `never-matches`),
		textRule("bravo_text", ""),
	}, &Config{MaxRetriesPerMove: -1})
	ctx, m := f.eng.BeginMove(context.Background(), "a")
	if v := m.CheckAnswer(ctx, "some text"); v.Discard || !slices.Equal(v.Rules, []string{"bravo_text"}) {
		t.Fatalf("verdict %+v, want bravo_text kept as a reminder", v)
	}
	got := m.ToolReminders(ctx, "shell", `{"cmd":"ls"}`)
	if names, want := reminderNames(got), []string{"alpha", "bravo", "bravo_text", "charlie"}; !slices.Equal(names, want) {
		t.Fatalf("reminders %v, want %v", names, want)
	}
	// The splice stacks them in that order.
	spliced := spliceWith("out", got, f.eng.splice)
	var wantSplice strings.Builder
	for _, r := range got {
		wantSplice.WriteString(r.Block() + "\n")
	}
	if spliced != wantSplice.String()+"out" {
		t.Fatalf("splice %q", spliced)
	}
}

func TestSoftFiringRecordedAndLogged(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var hooked []Firing
	f := newFixture(t, []Rule{softRule("shell_rule", "shell", "")}, &Config{OnFire: func(ctx context.Context, fr Firing) {
		mu.Lock()
		hooked = append(hooked, fr)
		mu.Unlock()
	}})
	ctx, m := f.eng.BeginMove(context.Background(), "chat-7")
	m.ToolReminders(ctx, "shell", "{}")
	fs := m.Firings()
	if len(fs) != 1 {
		t.Fatalf("Firings() = %+v", fs)
	}
	fr := fs[0]
	if fr.Rule != "shell_rule" || fr.ChatID != "chat-7" || fr.Move != 1 || fr.Mode != ModeRemind || fr.Tool != "shell" || fr.Retry || fr.At.IsZero() {
		t.Fatalf("firing %+v", fr)
	}
	mu.Lock()
	if len(hooked) != 1 || !reflect.DeepEqual(hooked[0], fr) {
		t.Fatalf("OnFire got %+v, want %+v", hooked, fr)
	}
	mu.Unlock()
	if lines := f.log.Lines(`msg="stream rule fired"`, "rule=shell_rule", "chat=chat-7", "move=1", "mode=remind", "tool=shell"); len(lines) != 1 {
		t.Fatalf("want one log line for the firing, log:\n%s", f.log)
	}
}

// TestOnFireMayCallBackIntoTheMove: the hook runs with the move unlocked, so a telemetry
// handler can read the move it fired in.
func TestOnFireMayCallBackIntoTheMove(t *testing.T) {
	t.Parallel()
	var locked []string
	f := newFixture(t, []Rule{softRule("s", "shell", ""), textRule("t", "bad")}, &Config{OnFire: func(ctx context.Context, fr Firing) {
		m := MoveFrom(ctx)
		if !m.mu.TryLock() {
			locked = append(locked, fr.Rule)
			return
		}
		m.mu.Unlock()
		_ = m.Firings()
		_, _ = m.ToolCalls()
	}})
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	m.ToolReminders(ctx, "shell", "{}")
	m.CheckAnswer(ctx, "bad")
	if len(locked) != 0 {
		t.Fatalf("OnFire ran with the move locked for %v: a hook reading the move would deadlock", locked)
	}
}
