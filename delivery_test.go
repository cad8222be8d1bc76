package streamrules

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// longRule is a shell rule whose text is exactly n characters, its first sentence "NAME says so."
func longRule(name string, n int) Rule {
	head := name + " says so. "
	return Rule{Name: name, Scope: "tool:shell", Text: head + strings.Repeat("x", n-len(head))}
}

func deliveries(rs []Reminder) []string {
	out := []string{}
	for _, r := range rs {
		d := r.Delivery
		if d == "" {
			d = DeliveryFull
		}
		out = append(out, r.Rule+":"+string(d))
	}
	return out
}

func firingDeliveries(fs []Firing) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s:%s:%v", f.Rule, f.Delivery, f.Read))
	}
	return out
}

func TestReminderBudget(t *testing.T) {
	t.Parallel()
	three := []Rule{longRule("alpha", 250), longRule("bravo", 250), longRule("charlie", 250)}
	tests := []struct {
		name   string
		rules  []Rule
		budget int
		want   []string // the reminders of one call, in the order laid
	}{
		{"no budget: all whole, by name", three, 0,
			[]string{"alpha:full", "bravo:full", "charlie:full"}},
		{"all fit: whole, by name", three, 750,
			[]string{"alpha:full", "bravo:full", "charlie:full"}},
		{"three of 250 in 400: one whole, two manifest", three, 400,
			[]string{"alpha:full", "bravo:manifest", "charlie:manifest"}},
		{"over budget: severity high first, then name", []Rule{
			longRule("alpha", 250), with(longRule("bravo", 250), func(r *Rule) { r.Severity = "low" }),
			with(longRule("charlie", 250), func(r *Rule) { r.Severity = "high" }),
		}, 400, []string{"charlie:full", "bravo:manifest", "alpha:manifest"}},
		{"delivery full counts first", []Rule{
			longRule("alpha", 250), longRule("bravo", 250),
			with(longRule("charlie", 250), func(r *Rule) { r.Delivery = DeliveryFull }),
		}, 400, []string{"alpha:manifest", "bravo:manifest", "charlie:full"}},
		{"delivery full is whole even past the budget", []Rule{
			with(longRule("alpha", 250), func(r *Rule) { r.Delivery = DeliveryFull }),
			with(longRule("bravo", 250), func(r *Rule) { r.Delivery = DeliveryFull }),
		}, 100, []string{"alpha:full", "bravo:full"}},
		{"while the budget lasts: a small one after a cut is not laid whole", []Rule{
			with(longRule("alpha", 250), func(r *Rule) { r.Severity = "high" }),
			with(longRule("bravo", 250), func(r *Rule) { r.Severity = "medium" }),
			longRule("charlie", 20),
		}, 400, []string{"alpha:full", "bravo:manifest", "charlie:manifest"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tt.rules, &Config{ReminderBudget: tt.budget})
			ctx, m := f.eng.BeginMove(context.Background(), "c")
			got := m.ToolReminders(ctx, "shell", `{"cmd":"ls"}`)
			if d := deliveries(got); !slices.Equal(d, tt.want) {
				t.Fatalf("reminders %v, want %v", d, tt.want)
			}
			// Firings carry the same deliveries, in rule-name order as recorded.
			var want []string
			for _, w := range tt.want {
				want = append(want, w+":false")
			}
			slices.Sort(want)
			if fd := firingDeliveries(m.Firings()); !slices.Equal(fd, want) {
				t.Fatalf("firings %v, want %v", fd, want)
			}
			// The call as recorded splices the same blocks in every later tour.
			calls, _ := m.ToolCalls()
			if len(calls) != 1 || spliceWith("out", calls[0].Reminders, spliceOptions{}) != spliceWith("out", got, spliceOptions{}) {
				t.Fatalf("recorded call %+v differs from the reminders returned", calls)
			}
		})
	}
}

func TestManifestBlock(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{
		longRule("alpha", 300),
		with(longRule("bravo", 300), func(r *Rule) { r.Hint = "Use <diff> & friends." }),
	}, &Config{ReminderBudget: 300})
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	got := m.ToolReminders(ctx, "shell", "{}")
	spliced := spliceWith("out", got, spliceOptions{})
	want := `<system-reminder rule="alpha">` + longRule("alpha", 300).Text + "</system-reminder>\n" +
		`<system-reminder rule="bravo" delivery="manifest">Use &lt;diff&gt; &amp; friends. (read it with stream_rule_read)</system-reminder>` + "\nout"
	if spliced != want {
		t.Fatalf("splice\n%s\nwant\n%s", spliced, want)
	}
	if IsInterruptMessage(spliced) || StripBlocks(spliced) != "out" {
		t.Fatalf("a manifest block is not stripped like a reminder: %q", StripBlocks(spliced))
	}
	if lines := f.log.Lines(`msg="stream rule fired"`, "rule=bravo", "delivery=manifest"); len(lines) != 1 {
		t.Fatalf("want the firing's delivery in its log line, log:\n%s", f.log)
	}
	if lines := f.log.Lines(`msg="stream rule fired"`, "rule=alpha", "delivery=full"); len(lines) != 1 {
		t.Fatalf("want the firing's delivery in its log line, log:\n%s", f.log)
	}
}

// TestReminderBudgetPerTour: the calls of one tour share the budget; BeginTour gives the
// next tour a new one.
func TestReminderBudgetPerTour(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{
		with(longRule("alpha", 250), func(r *Rule) { r.Scope = "tool:read_file" }),
		longRule("bravo", 250),
		with(longRule("charlie", 100), func(r *Rule) { r.Scope = "tool:write_file" }),
		with(longRule("delta", 100), func(r *Rule) { r.Scope = "tool:grep" }),
	}, &Config{ReminderBudget: 400})
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	m.BeginTour()
	if got := deliveries(m.ToolReminders(ctx, "read_file", "{}")); !slices.Equal(got, []string{"alpha:full"}) {
		t.Fatalf("first call %v", got)
	}
	if got := deliveries(m.ToolReminders(ctx, "shell", "{}")); !slices.Equal(got, []string{"bravo:manifest"}) {
		t.Fatalf("second call of the tour %v, want manifest: 250+250 > 400", got)
	}
	// Once a block went in manifest form, the rest of the tour does too, even one that fits.
	if got := deliveries(m.ToolReminders(ctx, "write_file", "{}")); !slices.Equal(got, []string{"charlie:manifest"}) {
		t.Fatalf("third call of the tour %v", got)
	}
	m.BeginTour()
	if got := deliveries(m.ToolReminders(ctx, "grep", "{}")); !slices.Equal(got, []string{"delta:full"}) {
		t.Fatalf("a new tour %v, want a new budget", got)
	}
}

// TestReminderBudgetNeverCutsHardRules: an interrupt is whole; a text rule's reminder after
// the ceiling rides whole and counts first.
func TestReminderBudgetNeverCutsHardRules(t *testing.T) {
	t.Parallel()
	hard := Rule{Name: "hard", Scope: ScopeText, Condition: "bad", Text: "Never say bad. " + strings.Repeat("y", 300)}
	f := newFixture(t, []Rule{hard, longRule("alpha", 250)}, &Config{ReminderBudget: 100})
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	v := m.CheckAnswer(ctx, "bad")
	if !v.Discard || v.Interrupt != InterruptBlock("hard", hard.Text) {
		t.Fatalf("verdict %+v: want the whole interrupt", v)
	}
	if v := m.CheckAnswer(ctx, "bad again"); v.Discard {
		t.Fatalf("second miss discarded: %+v", v)
	}
	f2 := newFixture(t, []Rule{hard, longRule("alpha", 250)}, &Config{ReminderBudget: 100, MaxRetriesPerMove: -1})
	ctx, m = f2.eng.BeginMove(context.Background(), "c")
	if v := m.CheckAnswer(ctx, "bad"); v.Discard {
		t.Fatalf("no retries: %+v", v)
	}
	got := m.ToolReminders(ctx, "shell", "{}")
	if d := deliveries(got); !slices.Equal(d, []string{"alpha:manifest", "hard:full"}) {
		t.Fatalf("reminders %v", d)
	}
	for _, fr := range m.Firings() {
		if fr.Delivery != map[string]Delivery{"hard": DeliveryFull, "alpha": DeliveryManifest}[fr.Rule] {
			t.Errorf("firing %s delivery %q", fr.Rule, fr.Delivery)
		}
	}
}

func TestReadRule(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{longRule("alpha", 250), longRule("bravo", 250), longRule("charlie", 250),
		with(longRule("delta", 50), func(r *Rule) { r.Scope = "tool:grep" })}, &Config{ReminderBudget: 400})
	ctx, m := f.eng.BeginMove(context.Background(), "c")
	m.ToolReminders(ctx, "shell", "{}")
	text, err := m.ReadRule(ctx, "bravo")
	if err != nil || text != longRule("bravo", 250).Text {
		t.Fatalf("ReadRule(bravo) = %q, %v; want its whole text", text, err)
	}
	for _, name := range []string{"alpha", "delta", "nosuch", "charlie "} {
		if _, err := m.ReadRule(ctx, name); !errors.Is(err, ErrNotManifest) || !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
			t.Errorf("ReadRule(%q) error %v, want ErrNotManifest naming the rule", name, err)
		}
	}
	want := []string{"alpha:full:false", "bravo:manifest:true", "charlie:manifest:false"}
	if fd := firingDeliveries(m.Firings()); !slices.Equal(fd, want) {
		t.Fatalf("firings %v, want %v", fd, want)
	}
	if lines := f.log.Lines(`msg="stream rule read"`, "rule=bravo", "chat=c", "move=1"); len(lines) != 1 {
		t.Fatalf("want one log line for the read, log:\n%s", f.log)
	}
	if err := m.End(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.ReadRule(ctx, "bravo"); !errors.Is(err, ErrMoveEnded) {
		t.Fatalf("ReadRule after End: %v", err)
	}
	// A later move may not read what an earlier one pointed to.
	ctx, m = f.eng.BeginMove(context.Background(), "c")
	if _, err := m.ReadRule(ctx, "bravo"); !errors.Is(err, ErrNotManifest) {
		t.Fatalf("ReadRule in the next move: %v", err)
	}
	stats, err := f.eng.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, st := range stats.Rules {
		got[st.Rule] = fmt.Sprintf("full=%d manifest=%d read=%d", st.Delivery[DeliveryFull], st.Delivery[DeliveryManifest], st.ManifestRead)
	}
	wantStats := map[string]string{"alpha": "full=1 manifest=0 read=0", "bravo": "full=0 manifest=1 read=1",
		"charlie": "full=0 manifest=1 read=0", "delta": "full=0 manifest=0 read=0"}
	if fmt.Sprint(got) != fmt.Sprint(wantStats) {
		t.Fatalf("stats %v, want %v", got, wantStats)
	}
}

func TestReminderBudgetNegative(t *testing.T) {
	t.Parallel()
	st, err := NewMemoryStore(nil, testEnvs...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(context.Background(), st, &Config{ReminderBudget: -1}); err == nil || !strings.Contains(err.Error(), "ReminderBudget") {
		t.Fatalf("New with a negative budget: %v", err)
	}
}

func TestValidateDelivery(t *testing.T) {
	t.Parallel()
	good := Rule{Name: "r", Scope: "tool:shell", Mode: ModeRemind, Text: "Say it.", Delivery: DeliveryFull, Hint: strings.Repeat("é", MaxHintChars)}
	if err := Validate(&good, testEnvs); err != nil {
		t.Fatalf("good rule: %v", err)
	}
	tests := []struct {
		name  string
		edit  func(r *Rule)
		field string
	}{
		{"delivery manifest", func(r *Rule) { r.Delivery = DeliveryManifest }, "delivery"},
		{"delivery unknown", func(r *Rule) { r.Delivery = "inline" }, "delivery"},
		{"hint too long", func(r *Rule) { r.Hint = strings.Repeat("h", MaxHintChars+1) }, "hint"},
		{"hint not UTF-8", func(r *Rule) { r.Hint = "\xff" }, "hint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := with(good, tt.edit)
			var ve *ValidationError
			if err := Validate(&r, testEnvs); !errors.As(err, &ve) || ve.Field != tt.field {
				t.Fatalf("Validate: %v, want a %s error", err, tt.field)
			}
		})
	}
	r := with(good, func(r *Rule) { r.Delivery, r.Hint = " full ", "  a hint \n" })
	r.Normalize()
	if r.Delivery != DeliveryFull || r.Hint != "a hint" {
		t.Fatalf("Normalize: %q %q", r.Delivery, r.Hint)
	}
}

func TestFirstSentence(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 40)
	for _, tt := range []struct{ in, want string }{
		{"Use write_diff. Not write_file.", "Use write_diff."},
		{"  Is it yours? Ask first.", "Is it yours?"},
		{"Stop! Think.", "Stop!"},
		{"Version 1.2 is out. Yes.", "Version 1.2 is out."},
		{"First line\nsecond line.", "First line"},
		{"No end at all", "No end at all"},
		{"Хвост ↩ #id обязателен. Всегда.", "Хвост ↩ #id обязателен."},
		{long, string([]rune(strings.TrimSpace(long))[:MaxHintChars-1]) + "…"},
	} {
		if got := firstSentence(tt.in); got != tt.want {
			t.Errorf("firstSentence(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzFirstSentence(f *testing.F) {
	for _, s := range []string{"A. B.", "x", "", "é?é", "a\nb", strings.Repeat("ab. ", 60)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := firstSentence(s)
		if n := utf8.RuneCountInString(got); n > MaxHintChars {
			t.Fatalf("%d characters", n)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 from valid input: %q", got)
		}
		if strings.TrimSpace(got) != got {
			t.Fatalf("untrimmed: %q", got)
		}
		if base := strings.TrimSuffix(got, "…"); utf8.ValidString(s) && !strings.HasPrefix(strings.TrimSpace(s), base) {
			t.Fatalf("%q is not a prefix of the text", got)
		}
	})
}
