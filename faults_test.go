package streamrules

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestNewRejectsANilStore(t *testing.T) {
	t.Parallel()
	var typed *MemoryStore // what a host holds when its constructor failed
	tests := []struct {
		name  string
		store Store
	}{
		{"nil interface", nil},
		{"nil pointer inside the interface", typed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eng, err := New(context.Background(), tt.store, nil)
			if err == nil {
				eng.Close()
				t.Fatal("New succeeded")
			}
			if !strings.Contains(err.Error(), "nil store") {
				t.Fatalf("New = %v, want a nil-store error", err)
			}
		})
	}
}

// TestRuleLiteralWithoutEnabledLoads: a Rule built in Go that says nothing about being
// enabled is a working rule, and so is JSON without "enabled".
func TestRuleLiteralWithoutEnabledLoads(t *testing.T) {
	t.Parallel()
	lit := Rule{Name: "literal", Scope: "tool:shell", Condition: "rm", Text: "Careful."}
	var fromJSON Rule
	if err := json.Unmarshal([]byte(`{"name":"from_json","scope":"text","condition":"bad","text":"No."}`), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if fromJSON.Disabled {
		t.Fatal(`JSON without "enabled" decoded as disabled`)
	}
	f := newFixture(t, []Rule{lit, fromJSON}, nil)
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	if got := reminderNames(m.ToolReminders(ctx, "shell", `{"cmd":"rm x"}`)); len(got) != 1 || got[0] != "literal" {
		t.Fatalf("reminders %v, want the literal rule", got)
	}
	if v := m.CheckAnswer(ctx, "a bad answer"); !v.Discard {
		t.Fatalf("the rule decoded from JSON did not judge the answer: %+v", v)
	}
}

// TestEncodingRejectedInEveryField: a NUL byte or invalid UTF-8 in any text field is a
// validation error naming that field, on create and on update.
func TestEncodingRejectedInEveryField(t *testing.T) {
	t.Parallel()
	good := func() Rule {
		return Rule{Name: "good", Scope: "tool:shell", Condition: "rm", Text: "Careful.", Repeat: "once"}
	}
	tests := []struct {
		name  string
		field string
		spoil func(r *Rule, bad string)
	}{
		{"name", "name", func(r *Rule, bad string) { r.Name = "go" + bad + "od" }},
		{"scope", "scope", func(r *Rule, bad string) { r.Scope = "tool:sh" + bad }},
		{"condition", "condition", func(r *Rule, bad string) { r.Condition = "rm" + bad }},
		{"text", "text", func(r *Rule, bad string) { r.Text = "Care" + bad + "ful." }},
		{"when", "when", func(r *Rule, bad string) { r.When = []string{"telegram" + bad} }},
		{"repeat", "repeat", func(r *Rule, bad string) { r.Repeat = "once" + bad }},
	}
	for _, tt := range tests {
		for _, bad := range []string{"\x00", "\xff\xfe"} {
			t.Run(tt.name+"/"+strings.ToValidUTF8(bad, "?"), func(t *testing.T) {
				t.Parallel()
				st, err := NewMemoryStore(nil, testEnvs...)
				if err != nil {
					t.Fatal(err)
				}
				r := good()
				tt.spoil(&r, bad)
				var ve *ValidationError
				if _, err := st.CreateRule(context.Background(), r); !errors.As(err, &ve) || ve.Field != tt.field {
					t.Fatalf("CreateRule = %v, want a validation error on %s", err, tt.field)
				}
				if _, err := st.CreateRule(context.Background(), good()); err != nil {
					t.Fatal(err)
				}
				if _, err := st.UpdateRule(context.Background(), "good", r); !errors.As(err, &ve) || ve.Field != tt.field {
					t.Fatalf("UpdateRule = %v, want a validation error on %s", err, tt.field)
				}
				if _, err := NewMemoryStore([]Rule{r}, testEnvs...); !errors.As(err, &ve) || ve.Field != tt.field {
					t.Fatalf("NewMemoryStore = %v, want a validation error on %s", err, tt.field)
				}
			})
		}
	}
}

func TestDuplicateNameNamesTheField(t *testing.T) {
	t.Parallel()
	st, err := NewMemoryStore([]Rule{softRule("a_rule", "shell", ""), softRule("b_rule", "shell", "")}, testEnvs...)
	if err != nil {
		t.Fatal(err)
	}
	var ve *ValidationError
	_, err = st.CreateRule(context.Background(), softRule("a_rule", "shell", ""))
	if !errors.Is(err, ErrExists) || !errors.As(err, &ve) || ve.Field != "name" {
		t.Fatalf("duplicate create = %v, want ErrExists naming field name", err)
	}
	_, err = st.UpdateRule(context.Background(), "b_rule", softRule("a_rule", "shell", ""))
	if !errors.Is(err, ErrExists) || !errors.As(err, &ve) || ve.Field != "name" {
		t.Fatalf("rename onto a taken name = %v, want ErrExists naming field name", err)
	}
}

// TestLoadSummary: every load and every reload that changes the set logs one line with
// the counts and the names of the rows skipped.
func TestLoadSummary(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{
		softRule("on", "shell", ""),
		with(softRule("off", "shell", ""), func(r *Rule) { r.Disabled = true }),
	}, nil)
	if lines := f.log.Lines("level=INFO", "stream rules loaded", "loaded=1", "disabled=1", "skipped=0", "skipped_rules=[]"); len(lines) != 1 {
		t.Fatalf("first load: want one summary line, log:\n%s", f.log)
	}
	f.store.PutRaw(softRule("bad_regex", "shell", "("))
	if lines := f.log.Lines("level=INFO", "stream rules loaded", "loaded=1", "disabled=1", "skipped=1", "skipped_rules=[bad_regex]"); len(lines) != 1 {
		t.Fatalf("reload: want one summary line naming bad_regex, log:\n%s", f.log)
	}
	// A reload that finds nothing new is not a new summary.
	if err := f.eng.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if lines := f.log.Lines("stream rules loaded"); len(lines) != 2 {
		t.Fatalf("%d summary lines, want 2:\n%s", len(lines), f.log)
	}
}

// stuckStore never answers LoadChat or SaveMove until their context is done, as a
// black-holed database would if the store honoured its context and nothing else.
type stuckStore struct {
	*MemoryStore
	loads, saves chan time.Time // each call's deadline (zero: none)
}

func untilDeadline(ctx context.Context) time.Time {
	dl, _ := ctx.Deadline()
	return dl
}

func (s *stuckStore) LoadChat(ctx context.Context, _ string) (ChatState, error) {
	s.loads <- untilDeadline(ctx)
	<-ctx.Done()
	return ChatState{}, ctx.Err()
}

func (s *stuckStore) SaveMove(ctx context.Context, _ MoveRecord) error {
	s.saves <- untilDeadline(ctx)
	<-ctx.Done()
	return ctx.Err()
}

// TestStoreTimeoutBoundsTheMove: BeginMove and End give the store StoreTimeout and no
// more; the move goes on, failing closed (a `once` rule stays silent).
func TestStoreTimeoutBoundsTheMove(t *testing.T) {
	t.Parallel()
	mem, err := NewMemoryStore([]Rule{with(softRule("once_rule", "shell", ""), func(r *Rule) { r.Repeat = "once" }), softRule("every", "shell", "")}, testEnvs...)
	if err != nil {
		t.Fatal(err)
	}
	st := &stuckStore{MemoryStore: mem, loads: make(chan time.Time, 1), saves: make(chan time.Time, 1)}
	const bound = 50 * time.Millisecond
	f := newFixtureOn(t, st, mem, &Config{StoreTimeout: bound})
	// within checks that a deadline was set by a call between before and after: bound
	// after its start, not later.
	within := func(what string, dl, before, after time.Time) {
		t.Helper()
		if dl.IsZero() || dl.Before(before.Add(bound)) || dl.After(after.Add(bound)) {
			t.Fatalf("%s's deadline %v, want %s after the call (between %v and %v)", what, dl, bound, before.Add(bound), after.Add(bound))
		}
	}
	before := time.Now()
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	within("LoadChat", <-st.loads, before, time.Now())
	if got := reminderNames(m.ToolReminders(ctx, "shell", "{}")); len(got) != 1 || got[0] != "every" {
		t.Fatalf("reminders %v, want only the rule without a repeat policy (fail closed)", got)
	}
	before = time.Now()
	if err := m.End(ctx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("End = %v, want the store's deadline error", err)
	}
	within("SaveMove", <-st.saves, before, time.Now())
	if lines := f.log.Lines("level=WARN", "chat state not loaded", "deadline exceeded"); len(lines) != 1 {
		t.Fatalf("want one fail-closed warning, log:\n%s", f.log)
	}
}

func TestNegativeStoreTimeoutRejected(t *testing.T) {
	t.Parallel()
	st, err := NewMemoryStore(nil, testEnvs...)
	if err != nil {
		t.Fatal(err)
	}
	if eng, err := New(context.Background(), st, &Config{StoreTimeout: -time.Second}); err == nil {
		eng.Close()
		t.Fatal("New accepted a negative StoreTimeout")
	}
}
