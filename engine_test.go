package streamrules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// firedOnly prints the stats as {rule fired} pairs.
func firedOnly(s Stats) string {
	out := make([]string, len(s.Rules))
	for i, r := range s.Rules {
		out[i] = fmt.Sprintf("{%s %d}", r.Rule, r.Fired)
	}
	return "[" + strings.Join(out, " ") + "]"
}

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
		with(softRule("client_shell", "shell", ""), func(r *Rule) { r.When = []string{EnvClientOps, EnvTelegram} }),
		with(softRule("voice_shell", "shell", ""), func(r *Rule) { r.When = []string{"voice"} }),
		softRule("any_shell", "shell", ""),
	}, &Config{Environments: []string{"voice"}})
	tests := []struct {
		env  []string
		want []string
	}{
		{nil, []string{"any_shell"}},
		{[]string{EnvTelegram}, []string{"any_shell"}},
		{[]string{EnvClientOps}, []string{"any_shell"}},
		{[]string{EnvClientOps, EnvTelegram}, []string{"any_shell", "client_shell"}},
		{[]string{EnvTelegram, EnvClientOps, EnvMaster, EnvPicture}, []string{"any_shell", "client_shell"}},
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

func TestMoveEnvironments(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, &Config{Environments: []string{"voice"}})
	_, m := f.eng.BeginMove(context.Background(), "c", "voice", EnvTelegram, "bogus", EnvTelegram)
	if got, want := m.Environments(), []string{EnvTelegram, "voice"}; !slices.Equal(got, want) {
		t.Fatalf("Environments() = %v, want %v", got, want)
	}
	for name, want := range map[string]bool{EnvTelegram: true, "voice": true, EnvMaster: false, "bogus": false} {
		if got := m.Has(name); got != want {
			t.Errorf("Has(%q) = %v, want %v", name, got, want)
		}
	}
	if m.ChatID() != "c" || m.Number() != 1 || m.Engine() != f.eng {
		t.Fatalf("move accessors: chat %q number %d", m.ChatID(), m.Number())
	}
	if got, want := f.eng.Environments(), append(slices.Clone(BuiltinEnvironments), "voice"); !slices.Equal(got, want) {
		t.Fatalf("Engine.Environments() = %v, want %v", got, want)
	}
}

func TestMoveFrom(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	if MoveFrom(context.Background()) != nil {
		t.Fatal("MoveFrom outside a move is not nil")
	}
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	if MoveFrom(ctx) != m {
		t.Fatal("MoveFrom does not return the move the context carries")
	}
}

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
	if m.TextArmed() {
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

// runMove plays one move of chat: one shell call, returns the reminders, ends the move with runErr.
func runMove(t *testing.T, eng *Engine, chat string, runErr error) []string {
	t.Helper()
	ctx, m := eng.BeginMove(context.Background(), chat)
	got := reminderNames(m.ToolReminders(ctx, "shell", `{"cmd":"ls"}`))
	if err := m.End(ctx, runErr); !errors.Is(err, runErr) {
		t.Fatalf("End: %v", err)
	}
	return got
}

func TestOncePerChatForever(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{with(softRule("once_rule", "shell", ""), func(r *Rule) { r.Repeat = "once" })}, nil)
	if got := runMove(t, f.eng, "a", nil); !slices.Equal(got, []string{"once_rule"}) {
		t.Fatalf("move 1: %v, want the once rule", got)
	}
	for i := 2; i <= 4; i++ {
		if got := runMove(t, f.eng, "a", nil); len(got) != 0 {
			t.Fatalf("move %d: %v, want nothing: once means once", i, got)
		}
	}
	if got := runMove(t, f.eng, "b", nil); !slices.Equal(got, []string{"once_rule"}) {
		t.Fatalf("another chat: %v, want the once rule", got)
	}

	// Restart: a new engine on the same store remembers.
	restarted := newFixtureOn(t, f.store, f.store, nil)
	if got := runMove(t, restarted.eng, "a", nil); len(got) != 0 {
		t.Fatalf("after a restart: %v, want nothing", got)
	}
	if got := runMove(t, restarted.eng, "c", nil); !slices.Equal(got, []string{"once_rule"}) {
		t.Fatalf("new chat after a restart: %v, want the once rule", got)
	}
}

func TestOnceCountsAMoveThatFailed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{with(softRule("once_rule", "shell", ""), func(r *Rule) { r.Repeat = "once" })}, nil)
	if got := runMove(t, f.eng, "a", errors.New("model down")); !slices.Equal(got, []string{"once_rule"}) {
		t.Fatalf("move 1: %v", got)
	}
	if got := runMove(t, f.eng, "a", nil); len(got) != 0 {
		t.Fatalf("once rule fired again after a failed move: %v", got)
	}
}

func TestAfterN(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{with(softRule("every_3", "shell", ""), func(r *Rule) { r.Repeat = "after:3" })}, nil)
	boom := errors.New("boom")
	steps := []struct {
		runErr error
		number int64
		fires  bool
	}{
		{nil, 1, true},
		{nil, 2, false},
		{boom, 3, false}, // not answered: the counter stays
		{boom, 3, false},
		{nil, 3, false},
		{nil, 4, true},
		{nil, 5, false},
		{nil, 6, false},
		{nil, 7, true},
	}
	for i, s := range steps {
		ctx, m := f.eng.BeginMove(context.Background(), "a")
		if m.Number() != s.number {
			t.Fatalf("step %d: move number %d, want %d", i, m.Number(), s.number)
		}
		got := m.ToolReminders(ctx, "shell", "{}")
		if (len(got) == 1) != s.fires {
			t.Fatalf("step %d (move %d): reminders %v, want fired=%v", i, m.Number(), reminderNames(got), s.fires)
		}
		if err := m.End(ctx, s.runErr); !errors.Is(err, s.runErr) {
			t.Fatalf("End: %v", err)
		}
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
	spliced := Splice("out", got, f.eng.SpliceOptions())
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
	st.PutRaw(with(softRule("bad_scope", "shell", ""), func(r *Rule) { r.Scope = "thinking" }))
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
	mem, err := NewMemoryStore([]Rule{softRule("kept", "shell", "")})
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

func TestNewErrors(t *testing.T) {
	t.Parallel()
	st, err := NewMemoryStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	many := make([]string, 60)
	for i := range many {
		many[i] = fmt.Sprintf("env_%d", i)
	}
	tests := []struct {
		name  string
		store Store
		cfg   *Config
	}{
		{"nil store", nil, nil},
		{"negative cap", st, &Config{ToolResultMaxChars: -1}},
		{"bad environment name", st, &Config{Environments: []string{"Voice"}}},
		{"too many environments", st, &Config{Environments: many}},
		{"store fails the first load", &recordingStore{MemoryStore: st, loadErr: errors.New("down")}, nil},
	}
	for _, tt := range tests {
		if eng, err := New(context.Background(), tt.store, tt.cfg); err == nil {
			eng.Close()
			t.Errorf("%s: New succeeded", tt.name)
		}
	}
	// nil Config means defaults.
	eng, err := New(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if eng.SpliceOptions() != (SpliceOptions{}) || eng.maxRetries != 1 {
		t.Fatalf("defaults: %+v, retries %d", eng.SpliceOptions(), eng.maxRetries)
	}
}

func TestFailedNewDoesNotFollowTheStore(t *testing.T) {
	t.Parallel()
	mem, err := NewMemoryStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	st := &recordingStore{MemoryStore: mem, loadErr: errors.New("down")}
	if _, err := New(context.Background(), st, nil); err == nil {
		t.Fatal("New succeeded")
	}
	mem.mu.Lock()
	n := len(mem.listeners)
	mem.mu.Unlock()
	if n != 0 {
		t.Fatalf("a failed New left %d subscriptions on the store", n)
	}
}

func TestEngineValidate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, &Config{Environments: []string{"voice"}})
	r := Rule{Name: " voice_rule ", Scope: "text", Text: "x", When: []string{"voice"}}
	if err := f.eng.Validate(&r); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if r.Name != "voice_rule" || r.Mode != ModeInterrupt {
		t.Fatalf("not normalized: %+v", r)
	}
	r.When = []string{"video"}
	var ve *ValidationError
	if err := f.eng.Validate(&r); !errors.As(err, &ve) || ve.Field != "when" {
		t.Fatalf("Validate = %v, want a when error", err)
	}
}

func TestStats(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{softRule("b_soft", "shell", ""), textRule("a_text", "bad"), softRule("c_quiet", "nothing", "")}, nil)
	ctx := context.Background()
	stats, err := f.eng.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := firedOnly(stats); got != "[{a_text 0} {b_soft 0} {c_quiet 0}]" {
		t.Fatalf("fresh stats %s, want every loaded rule with zero", got)
	}
	for i := 0; i < 3; i++ {
		c, m := f.eng.BeginMove(ctx, fmt.Sprint("chat", i))
		m.ToolReminders(c, "shell", "{}")
		if i < 2 {
			m.CheckAnswer(c, "bad")
		}
		if err := m.End(c, nil); err != nil {
			t.Fatal(err)
		}
	}
	stats, _ = f.eng.Stats(ctx)
	if got := firedOnly(stats); got != "[{a_text 2} {b_soft 3} {c_quiet 0}]" {
		t.Fatalf("stats %s", got)
	}
	// Deleting a rule drops it from the list, not its history.
	if err := f.store.DeleteRule(ctx, "b_soft"); err != nil {
		t.Fatal(err)
	}
	stats, _ = f.eng.Stats(ctx)
	if got := firedOnly(stats); got != "[{a_text 2} {c_quiet 0}]" {
		t.Fatalf("stats after delete %s", got)
	}
	if counts, _ := f.store.CountFirings(ctx); counts["b_soft"] != 3 {
		t.Fatalf("firings of a deleted rule: %v", counts)
	}
	// Counting goes on: the other rules, and the rule brought back, keep their history.
	c, m := f.eng.BeginMove(ctx, "chat9")
	m.CheckAnswer(c, "bad")
	_ = m.End(c, nil)
	if _, err := f.store.CreateRule(ctx, softRule("b_soft", "shell", "")); err != nil {
		t.Fatal(err)
	}
	stats, _ = f.eng.Stats(ctx)
	if got := firedOnly(stats); got != "[{a_text 3} {b_soft 3} {c_quiet 0}]" {
		t.Fatalf("stats after re-create %s", got)
	}
}

func TestStatsNeedsAFiringCounter(t *testing.T) {
	t.Parallel()
	mem, _ := NewMemoryStore(nil)
	f := newFixtureOn(t, plainStore{mem}, mem, nil)
	if _, err := f.eng.Stats(context.Background()); err == nil {
		t.Fatal("Stats on a store that cannot count succeeded")
	}
	rec := httptest.NewRecorder()
	f.eng.StatsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/stats", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", rec.Code)
	}
}

func TestStatsHandler(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{softRule("local_shell_for_his_machine", "shell", ""), textRule("quiet", "x")}, nil)
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	m.ToolReminders(ctx, "shell", "{}")
	_ = m.End(ctx, nil)

	srv := httptest.NewServer(f.eng.StatsHandler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	var body map[string][]map[string]any // last_fired_at absent for a rule that never fired
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	at := f.store.AllFirings()[0].At.Format(time.RFC3339Nano)
	want := []map[string]any{
		{"rule": "local_shell_for_his_machine", "fired": 1.0, "shadow": 0.0, "last_fired_at": at,
			"outcomes": map[string]any{"complied": 1.0, "repeated": 0.0},
			"delivery": map[string]any{"full": 1.0, "manifest": 0.0}, "manifest_read": 0.0},
		{"rule": "quiet", "fired": 0.0, "shadow": 0.0,
			"outcomes": map[string]any{"corrected": 0.0, "missed_again": 0.0, "kept": 0.0, "fixed": 0.0},
			"delivery": map[string]any{"full": 0.0}, "manifest_read": 0.0},
	}
	if fmt.Sprint(body["rules"]) != fmt.Sprint(want) {
		t.Fatalf("body %v, want rules %v", body, want)
	}

	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		rec := httptest.NewRecorder()
		f.eng.StatsHandler().ServeHTTP(rec, httptest.NewRequest(method, "/v1/stats", nil))
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s: status %d, want 405", method, rec.Code)
		}
		if allow := rec.Header().Get("Allow"); !strings.Contains(allow, "GET") {
			t.Errorf("%s: Allow %q", method, allow)
		}
	}
	rec := httptest.NewRecorder()
	f.eng.StatsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/v1/stats", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("HEAD: status %d", rec.Code)
	}
}

func TestStatsEmptyIsAList(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	rec := httptest.NewRecorder()
	f.eng.StatsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/stats", nil))
	if got := strings.TrimSpace(rec.Body.String()); got != `{"rules":[]}` {
		t.Fatalf("body %s, want an empty list, not null", got)
	}
}

// TestManyChatsAtOnce: one engine, 50 chats moving concurrently; per-chat once/after state
// stays exact. Run under -race.
func TestManyChatsAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{
		softRule("every_shell", "shell", ""),
		with(softRule("once_shell", "shell", ""), func(r *Rule) { r.Repeat = "once" }),
		with(textRule("tail_after_2", `tail$`), func(r *Rule) { r.Negate = true; r.Repeat = "after:2" }),
	}, nil)
	const chats, moves = 50, 6
	var wg sync.WaitGroup
	errs := make(chan error, chats*moves)
	for c := 0; c < chats; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chat := fmt.Sprint("chat-", c)
			for mv := int64(1); mv <= moves; mv++ {
				ctx, m := f.eng.BeginMove(context.Background(), chat)
				if m.Number() != mv {
					errs <- fmt.Errorf("%s: move number %d, want %d", chat, m.Number(), mv)
					return
				}
				// Several tours of one move may call tools concurrently.
				var inner sync.WaitGroup
				got := make([][]string, 4)
				for i := range got {
					inner.Add(1)
					go func() {
						defer inner.Done()
						got[i] = reminderNames(m.ToolReminders(ctx, "shell", "{}"))
					}()
				}
				inner.Wait()
				counts := map[string]int{}
				for _, g := range got {
					for _, name := range g {
						counts[name]++
					}
				}
				wantOnce := 0
				if mv == 1 {
					wantOnce = 1
				}
				if counts["every_shell"] != 1 || counts["once_shell"] != wantOnce {
					errs <- fmt.Errorf("%s move %d: fired %v", chat, mv, counts)
				}
				v := m.CheckAnswer(ctx, "no tail here")
				if wantFire := mv%2 == 1; v.Discard != wantFire {
					errs <- fmt.Errorf("%s move %d: verdict %+v, want discard=%v", chat, mv, v, wantFire)
				}
				if err := m.End(ctx, nil); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	counts, _ := f.store.CountFirings(context.Background())
	if counts["every_shell"] != chats*moves || counts["once_shell"] != chats || counts["tail_after_2"] != chats*moves/2 {
		t.Fatalf("firings %v", counts)
	}
}

// TestTextMatcherAgreesWithNaive pins the matcher's exact verdicts against running each
// regexp in turn, for whatever matcher newTextMatcher builds.
func TestTextMatcherAgreesWithNaive(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		patterns := randomPatterns(rng)
		fast := newTextMatcher(patterns)
		naive := make([]*regexp.Regexp, len(patterns))
		for i, p := range patterns {
			naive[i] = regexp.MustCompile(p)
		}
		for k := 0; k < 50; k++ {
			text := randomText(rng)
			var want []int
			for i, re := range naive {
				if re.MatchString(text) {
					want = append(want, i)
				}
			}
			got := fast.Match(text, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("patterns %q on %q: matcher %v, naive %v", patterns, text, got, want)
			}
			// Match appends to dst and leaves what dst held.
			prefix := []int{-7}
			got = fast.Match(text, prefix)
			if len(got) == 0 || got[0] != -7 || !slices.Equal(got[1:], want) {
				t.Fatalf("Match(%q, [-7]) = %v, want [-7]+%v", text, got, want)
			}
		}
	}
}

// TestCheckAnswerAgreesWithNaive: the engine's verdict on random answers is exactly the
// naive loop's (regexp per rule, negate, rule-name order).
func TestCheckAnswerAgreesWithNaive(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 40; round++ {
		patterns := randomPatterns(rng)
		var rules []Rule
		type oracle struct {
			name   string
			re     *regexp.Regexp
			negate bool
		}
		var naive []oracle
		for i, p := range patterns {
			negate := p != "" && rng.IntN(3) == 0
			name := fmt.Sprintf("r%02d", i)
			rules = append(rules, with(textRule(name, p), func(r *Rule) { r.Negate = negate }))
			naive = append(naive, oracle{name, regexp.MustCompile(p), negate})
		}
		f := newFixture(t, rules, &Config{MaxRetriesPerMove: 1000})
		for k := 0; k < 30; k++ {
			text := randomText(rng)
			var want []string
			if strings.TrimSpace(text) != "" {
				for _, o := range naive {
					if o.re.MatchString(text) != o.negate {
						want = append(want, o.name)
					}
				}
			}
			ctx, m := f.eng.BeginMove(context.Background(), fmt.Sprint("c", round, "-", k))
			v := m.CheckAnswer(ctx, text)
			if !slices.Equal(v.Rules, want) || v.Discard != (len(want) > 0) {
				t.Fatalf("patterns %q (negate per rule) on %q: verdict %+v, naive %v", patterns, text, v, want)
			}
		}
	}
}

var patternPool = []string{
	"", "a", "foo", "(?i)hello", "^foo", "bar$", `\bword\b`, `(?m)^line$`, `[а-я]+`, `\d{3}`,
	`(?s)a.b`, `a.b`, `↩ #\d+\s*$`, `!\[[^\]]*\]\([^)]*\)`, `\p{So}`, `^\s*$`, `x*`, `(?i)can'?t (see|look)`,
	`\.`, `a|b|c`, `[^\x00-\x7f]`, `^.{0,3}$`, `ab+c`, `(foo|foobar)baz`, `\x{FFFD}`, `(?i)ЖЖ`, `^$`,
	`(?U)a+?`, `[[:upper:]]{2}`, `\Aend\z`, `🙂$`, `(?i)K`, `(?i)s`, `\n`, `(?i)FOO|bar|baz`, `\Bar`,
	`(?i)ſ`, `(a|ab)(c|bcd)(d*)`, `[\x{80}-\x{10FFFF}]`, `^(?:\p{Lu}\p{Ll}+ ?)+$`,
	`(?i)k`, `(?i)σ`, `(?i)straße`, `(?i)hello world`, `hel+o`, `(?i)ab|cd`, `(?m)foo$`, `foo\z`, `[\x{FFFD}]`,
	`(?i)[a-c]bar`, `\Qa.b\E`, `(?i)Ж+`, `fo{2,}`, `(?:)`, `\S+@\S+`, `(?i)can.t`, `...`,
}

var textPool = []string{
	"a", "b", "c", "foo", "bar", "baz", "hello", "HELLO", "word", "words", "line", "\n", " ", "\t",
	"↩ #12", "↩ #", "жж", "ЖЖ", "🙂", "\xff", "\xe2\x86", "can't see", "can't look", "cant see", "!", "[x](y)",
	"![alt](http://x/y.png)", ".", "123", "end", "K", "k", "s", "S", "ſ", "Abc ", "\ufffd", "ab", "bcd", "d",
	"\u212a", "σ", "ς", "Σ", "STRASSE", "straße", "STRAẞE", "hello world", "HELLO  WORLD", "helllo", "cd", "x@y",
	"a.b", "fooo", "Жж", "\r\n", "\x00", "can’t",
}

func randomPatterns(rng *rand.Rand) []string {
	n := 1 + rng.IntN(12)
	out := make([]string, n)
	for i := range out {
		out[i] = patternPool[rng.IntN(len(patternPool))]
	}
	return out
}

func randomText(rng *rand.Rand) string {
	var b strings.Builder
	for n := rng.IntN(8); n > 0; n-- {
		b.WriteString(textPool[rng.IntN(len(textPool))])
	}
	return b.String()
}

func TestUnknownEnvironmentWarnedOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	for i := 0; i < 3; i++ {
		ctx, m := f.eng.BeginMove(context.Background(), "c", "slack", EnvTelegram)
		if !m.Has(EnvTelegram) || m.Has("slack") {
			t.Fatalf("environments %v", m.Environments())
		}
		_ = m.End(ctx, nil)
	}
	if lines := f.log.Lines("unknown environment", "env=slack"); len(lines) != 1 {
		t.Errorf("%d warnings for three moves, want 1", len(lines))
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
