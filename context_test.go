package streamrules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corpus "github.com/streamrules/streamrules/internal/workload"
)

func TestContextAtomValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    Predicate
		path string // "" : valid
	}{
		{"input regex", InputContains(`(?i)safety`), ""},
		{"every atom", AllOf(InputNotContains("x"), ToolCalled("a"), ToolSucceeded("b"), ToolFailed("c"), EditedUncheckedBy([]string{"w"}, []string{"t"})), ""},
		{"bad input regex deep", AllOf(Contains("a"), Not(InputContains("("))), "predicate.all_of[1].not_.input_contains_regex"},
		{"bad negated input regex", AnyOf(InputNotContains(`(?!x)`)), "predicate.any_of[0].input_not_contains_regex"},
		{"bad tool name", AllOf(Contains("a"), ToolSucceeded("two words")), "predicate.all_of[1].tool_succeeded"},
		{"bad tool_called", ToolCalled("a/b"), "predicate.tool_called"},
		{"bad tool_failed", ToolFailed("x y"), "predicate.tool_failed"},
		{"no edits", EditedUncheckedBy(nil, []string{"t"}), "predicate.edited_unchecked.edits"},
		{"no checks", AnyOf(Contains("x"), EditedUncheckedBy([]string{"w"}, nil)), "predicate.any_of[1].edited_unchecked.checks"},
		{"bad check name", EditedUncheckedBy([]string{"w"}, []string{"t", "b c"}), "predicate.edited_unchecked.checks[1]"},
		{"two keys", Predicate{ToolCalled: "a", ContainsRegex: "b"}, "predicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := treeTextRule(tt.p)
			r.Normalize()
			err := Validate(&r, testEnvs)
			if tt.path == "" {
				if err != nil {
					t.Fatalf("Validate = %v", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.path {
				t.Errorf("Validate = %v, want a ValidationError on %s", err, tt.path)
			}
			// The same node in applies_when is named there.
			r = textRule("scoped", "x")
			r.AppliesWhen = &tt.p
			r.Normalize()
			err = Validate(&r, testEnvs)
			want := "applies_when" + strings.TrimPrefix(tt.path, "predicate")
			if !errors.As(err, &ve) || ve.Field != want {
				t.Errorf("applies_when: Validate = %v, want a ValidationError on %s", err, want)
			}
		})
	}
}

// The wire form of every atom reads back the same, and names the atom in String.
func TestContextAtomJSON(t *testing.T) {
	t.Parallel()
	p := AllOf(InputContains("a"), InputNotContains("b"), ToolCalled("c"), ToolSucceeded("d"), ToolFailed("e"), EditedUncheckedBy([]string{"w"}, []string{"t"}))
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"all_of":[{"input_contains_regex":"a"},{"input_not_contains_regex":"b"},{"tool_called":"c"},{"tool_succeeded":"d"},{"tool_failed":"e"},{"edited_unchecked":{"edits":["w"],"checks":["t"]}}]}`
	if string(data) != want {
		t.Errorf("JSON %s\nwant %s", data, want)
	}
	if s := p.String(); !strings.Contains(s, `tool_failed("e")`) || !strings.Contains(s, `edited_unchecked(edits=["w"], checks=["t"])`) {
		t.Errorf("String() = %s", s)
	}
}

// A tool rule's context is the record before its call; the answer's, every call before it.
func TestContextToolRuleSeesEarlierCalls(t *testing.T) {
	t.Parallel()
	p := AllOf(Contains("deploy"), Not(ToolSucceeded("run_tests")))
	gate := Rule{Name: "test_before_deploy", Scope: "tool:shell", Predicate: &p, Text: "Run the tests first."}
	fx := newFixture(t, []Rule{gate}, nil)
	ctx, m := fx.eng.BeginMove(context.Background(), "c")
	if rem := m.ToolReminders(ctx, "shell", `{"cmd":"deploy"}`); len(rem) != 1 {
		t.Fatalf("deploy before tests: %v", rem)
	}
	m.ToolReminders(ctx, "run_tests", `{}`)
	fx2 := newFixture(t, []Rule{gate}, nil)
	ctx2, m2 := fx2.eng.BeginMove(context.Background(), "c")
	m2.ToolReminders(ctx2, "run_tests", `{}`)
	if rem := m2.ToolReminders(ctx2, "shell", `{"cmd":"deploy"}`); len(rem) != 0 {
		t.Errorf("deploy after tests: %v", rem)
	}
	// A failed run does not back the deploy, and the failure is in the record.
	fx3 := newFixture(t, []Rule{gate}, nil)
	ctx3, m3 := fx3.eng.BeginMove(context.Background(), "c")
	m3.ToolError("run_tests")
	if rem := m3.ToolReminders(ctx3, "shell", `{"cmd":"deploy"}`); len(rem) != 1 {
		t.Errorf("deploy after failed tests: %v", rem)
	}
	runs, whole := m3.ToolRecord()
	if !whole || len(runs) != 2 || runs[0] != (ToolRun{"run_tests", false}) || runs[1] != (ToolRun{"shell", true}) {
		t.Errorf("record %+v, whole %v", runs, whole)
	}
	if f := m3.Firings(); len(f) != 1 || f[0].Span == nil || f[0].Span.Start != len(`{"cmd":"`) || f[0].Span.End != len(`{"cmd":"deploy`) {
		t.Errorf("firing %+v, want the span of deploy in the arguments", f)
	}
}

// Input: from BeginMove's context, or SetInput; without it, an input rule never fires.
func TestContextInput(t *testing.T) {
	t.Parallel()
	p := Predicate{InputContainsRegex: `(?i)safety`}
	r := Rule{Name: "urgent", Scope: ScopeText, AppliesWhen: &p, Predicate: &Predicate{NotContainsRegex: "If this is urgent"}, Text: "Say it."}
	fx := newFixture(t, []Rule{r}, nil)
	bg := context.Background()
	tests := []struct {
		name  string
		begin func() (context.Context, *Move)
		fires bool
	}{
		{"WithInput", func() (context.Context, *Move) { return fx.eng.BeginMove(WithInput(bg, "Safety first?"), "a") }, true},
		{"SetInput", func() (context.Context, *Move) {
			ctx, m := fx.eng.BeginMove(bg, "b")
			m.SetInput("Safety first?")
			return ctx, m
		}, true},
		{"another question", func() (context.Context, *Move) { return fx.eng.BeginMove(WithInput(bg, "Weather?"), "c") }, false},
		{"no input", func() (context.Context, *Move) { return fx.eng.BeginMove(bg, "d") }, false},
	}
	for _, tt := range tests {
		ctx, m := tt.begin()
		v := m.CheckAnswer(ctx, "Stay calm.")
		if v.Discard != tt.fires {
			t.Errorf("%s: verdict %+v, want discard %v", tt.name, v, tt.fires)
		}
	}
}

// The record is bounded: past maxToolRecord calls it is no longer whole, and tool atoms
// stop firing rather than judge a record that lost calls.
func TestContextRecordBound(t *testing.T) {
	t.Parallel()
	p := AllOf(Contains("Done"), Not(ToolSucceeded("run_tests")))
	fx := newFixture(t, []Rule{treeTextRule(p)}, nil)
	ctx, m := fx.eng.BeginMove(context.Background(), "c")
	for range maxToolRecord {
		m.ToolReminders(ctx, "read_file", "{}")
	}
	if _, whole := m.ToolRecord(); !whole {
		t.Fatal("the record lost its wholeness at the bound")
	}
	m.ToolReminders(ctx, "read_file", "{}")
	if runs, whole := m.ToolRecord(); whole || runs != nil {
		t.Fatalf("past the bound: %d runs, whole %v", len(runs), whole)
	}
	if v := m.CheckAnswer(ctx, "Done."); v.Discard || len(v.Rules) != 0 {
		t.Errorf("fired on a cut record: %+v", v)
	}
}

func TestJudgeSpan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		r    Rule
		text string
		want *Span
	}{
		// The span is the cut form's (Span): b+ runs as b, (?s)[\s\S]{0,1000}z as z.
		{"plain", textRule("p", `b+`), "aabbbc", &Span{2, 3}},
		{"cut edges", textRule("c", `(?s)[\s\S]{0,1000}z`), strings.Repeat("a", 3000) + "z!", &Span{3000, 3001}},
		{"bounded width", textRule("w", `(?i)\bsecret\b`), "secrets, a SECRET.", &Span{11, 17}},
		{"tree, first matched atom", treeTextRule(AnyOf(Contains("zz"), AllOf(MaxWords(9), Contains(`c`)))), "abc c", &Span{2, 3}},
		{"starts_with", treeTextRule(StartsWith(`a+`)), "aab", &Span{0, 1}},
		{"context atom only", treeTextRule(Not(ToolCalled("x"))), "abc", nil},
		{"negated plain", with(textRule("n", `zz`), func(r *Rule) { r.Negate = true }), "abc", nil},
	}
	facts := &Facts{HasTools: true, HasInput: true}
	for _, tt := range tests {
		res := mustJudge(t, tt.r).Check(tt.text, facts)
		if res.Status != StatusViolation {
			t.Fatalf("%s: %s", tt.name, res.Status)
		}
		if fmt.Sprint(res.Span) != fmt.Sprint(tt.want) {
			t.Errorf("%s: span %v, want %v", tt.name, res.Span, tt.want)
		}
	}
}

// contextBenchRules returns n text rules that read the move's context, each behind a
// literal no ordinary answer holds, so no context atom is reached on one.
func contextBenchRules(n int) []Rule {
	rules := make([]Rule, n)
	for i := range rules {
		var p Predicate
		switch i % 3 {
		case 0:
			p = AllOf(Contains(fmt.Sprintf(`(?i)audio_%d saved:`, i)), Not(ToolSucceeded("generate_speech")))
		case 1:
			p = AllOf(Contains(fmt.Sprintf(`\bdone_%d\b`, i)), EditedUncheckedBy([]string{"write_file"}, []string{"run_tests"}))
		default:
			p = AllOf(NotContains(`\A\z`), Contains(fmt.Sprintf(`urgent_%d`, i)), InputContains(`(?i)safety`))
		}
		rules[i] = Rule{Name: fmt.Sprintf("ctx_%03d", i), Scope: ScopeText, Predicate: &p, Text: "fix it"}
	}
	return rules
}

// TestContextRulesNoAlloc: a hard check that reaches no context atom allocates nothing
// for the context rules.
func TestContextRulesNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	text := corpus.RealisticText(4096, 4096, "")
	fx := newFixture(t, contextBenchRules(50), nil)
	ctx, m := fx.eng.BeginMove(context.Background(), "c")
	m.ToolReminders(ctx, "write_file", "{}")
	if n := testing.AllocsPerRun(100, func() {
		resetMove(m)
		m.CheckAnswer(ctx, text)
	}); n != 0 {
		t.Errorf("%v allocations per check", n)
	}
}

// BenchmarkContextCheck: a 4 KB hard check over realistic text rules, without and with
// 50 context rules beside them whose context atoms no answer reaches: the cost of
// carrying them (their literals in the prefilter, each tree stopping at its first atom).
// "interleaved" judges the answer with both sets in turn in every iteration and reports
// each one's time and the difference, so the load of a shared machine falls on both alike.
func BenchmarkContextCheck(b *testing.B) {
	// An answer no rule fires on: the realistic text, with the tail for the seeded rules.
	plain := corpus.RealisticText(4096, 4096, "")
	tailed := corpus.RealisticText(4096-9, 4096, "") + "\n↩ #4711"
	// seeded: the four seeded text rules (as BenchmarkFix holds them); realistic: 100 of
	// the realistic mix.
	seeded := []Rule{tailRule(), imageRule(),
		textRule("look_before_refusing", `(?i)\b(?:can'?t|cannot|unable to)\b[^.!?\n]{0,40}\b(?:see|view|open)\s+(?:the\s+)?(?:image|picture|photo)s?\b`),
		textRule("telegram_react_not_emoji", `^\s*(?:[\p{So}\x{1F3FB}-\x{1F3FF}\x{200D}\x{FE0F}]\s*)+(?:↩ #\d+)?\s*$`)}
	for _, set := range []struct {
		name  string
		rules []Rule
		text  string
	}{{"seeded=4", seeded, tailed}, {"realistic=100", textRules(corpus.RealisticPatterns(100, 1)), plain}} {
		base, text := set.rules, set.text
		with := append(append([]Rule(nil), base...), contextBenchRules(50)...)
		move := func(b *testing.B, rules []Rule) (context.Context, *Move) {
			ctx, m := benchEngine(b, rules).BeginMove(context.Background(), "bench")
			m.SetInput("What is the weather?")
			m.ToolReminders(ctx, "write_file", "{}")
			return ctx, m
		}
		for _, c := range []struct {
			name  string
			rules []Rule
		}{
			{fmt.Sprintf("without/%s/text=4096", set.name), base},
			{fmt.Sprintf("with/%s+ctx=50/text=4096", set.name), with},
		} {
			b.Run(c.name, func(b *testing.B) {
				ctx, m := move(b, c.rules)
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					resetMove(m)
					m.CheckAnswer(ctx, text)
				}
			})
		}
		b.Run(fmt.Sprintf("interleaved/%s+ctx=50/text=4096", set.name), func(b *testing.B) {
			ctx0, m0 := move(b, base)
			ctx1, m1 := move(b, with)
			var d0, d1 time.Duration
			for b.Loop() {
				resetMove(m0)
				start := time.Now()
				m0.CheckAnswer(ctx0, text)
				mid := time.Now()
				resetMove(m1)
				m1.CheckAnswer(ctx1, text)
				d0, d1 = d0+mid.Sub(start), d1+time.Since(mid)
			}
			b.ReportMetric(float64(d0.Nanoseconds())/float64(b.N), "ns-without/op")
			b.ReportMetric(float64(d1.Nanoseconds())/float64(b.N), "ns-with/op")
			b.ReportMetric(float64((d1-d0).Nanoseconds())/float64(b.N), "ns-added/op")
			b.ReportMetric(float64(d1)/float64(d0), "ratio")
		})
	}
	// The context rules' own part of a check, alone: the rules that may fire picked
	// (missedOn) on an answer the matcher has judged.
	b.Run("trees_only/ctx=50/text=4096", func(b *testing.B) {
		_, m := benchEngine(b, contextBenchRules(50)).BeginMove(context.Background(), "bench")
		m.SetInput("What is the weather?")
		var buf [32]int
		t := targetOf(plain, m.set.match, buf[:0])
		t.facts = &m.facts
		b.ReportAllocs()
		for b.Loop() {
			m.mu.Lock()
			live, _ := m.missedOn(&t)
			m.mu.Unlock()
			if live != nil {
				b.Fatal("fired")
			}
		}
	})
}
