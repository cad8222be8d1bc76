package streamrules

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func thinkingRule(name, cond string) Rule {
	return Rule{Name: name, Scope: ScopeThinking, Condition: cond, Text: "Text of " + name + "."}
}

// TestValidateThinking: a thinking rule takes the text rules' shape (condition, negate,
// predicate, when, applies_when, repeat, shadow) and refuses a fix, a field and a shell
// read, each with the field named.
func TestValidateThinking(t *testing.T) {
	t.Parallel()
	good := func() Rule {
		r := thinkingRule("look_thinking", `(?i)can'?t (see|view) (the )?(image|picture)`)
		r.When = []string{EnvPicture}
		r.Repeat = "after:2"
		r.Normalize()
		return r
	}
	r := good()
	if r.Mode != ModeInterrupt {
		t.Fatalf("mode %q, want interrupt derived from the scope", r.Mode)
	}
	accepted := []struct {
		name string
		edit func(r *Rule)
	}{
		{"plain", func(*Rule) {}},
		{"negate", func(r *Rule) { r.Negate = true }},
		{"shadow", func(r *Rule) { r.Shadow = true }},
		{"early", func(r *Rule) { r.Early = true }},
		{"predicate", func(r *Rule) { r.Condition = ""; r.Predicate = &Predicate{ContainsRegex: `rm -rf`} }},
		{"applies_when", func(r *Rule) { r.AppliesWhen = &Predicate{InputContainsRegex: `picture`} }},
	}
	for _, tt := range accepted {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := good()
			tt.edit(&r)
			if err := Validate(&r, nil); err != nil {
				t.Errorf("refused: %v", err)
			}
		})
	}
	refused := []struct {
		name, field string
		edit        func(r *Rule)
	}{
		{"fix", "fix", func(r *Rule) { r.Fix = &Fix{AppendIfMissing: " ok"} }},
		{"field", "field", func(r *Rule) { r.Field = "command" }},
		{"shell", "shell", func(r *Rule) { r.Shell = true }},
		{"remind", "mode", func(r *Rule) { r.Mode = ModeRemind }},
		{"delivery", "delivery", func(r *Rule) { r.Delivery = DeliveryFull }},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := good()
			tt.edit(&r)
			var ve *ValidationError
			if err := Validate(&r, nil); !errors.As(err, &ve) || ve.Field != tt.field {
				t.Errorf("err %v, want a ValidationError on %q", err, tt.field)
			}
		})
	}
}

// TestCheckThinking: a miss in the reasoning discards the response with the interrupt and
// spends the move's one retry, shared with text rules: the replayed answer's text miss is
// then kept, not discarded. The firing is marked Thinking and its replay's reasoning
// decides its outcome; the text rules never see the reasoning, nor the thinking rules the
// answer.
func TestCheckThinking(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, []Rule{thinkingRule("blind", `can't see`), textRule("img", `!\[`)}, nil)
	ctx, m := fx.eng.BeginMove(context.Background(), "c")
	if !m.ThinkingArmed() {
		t.Fatal("not armed")
	}
	if v := m.CheckThinking(ctx, "the answer will say ![x] and can't be seen"); v.Discard {
		t.Fatalf("a text rule's pattern fired on the thinking: %+v", v)
	}
	if v := m.CheckAnswer(ctx, "I can't see it"); v.Discard {
		t.Fatalf("a thinking rule fired on the answer: %+v", v)
	}
	v := m.CheckThinking(ctx, "Hmm. I can't see images, so I'll say so.")
	if !v.Discard || len(v.Rules) != 1 || v.Rules[0] != "blind" || !strings.Contains(v.Interrupt, `rule="blind"`) {
		t.Fatalf("verdict %+v", v)
	}
	if m.ThinkingArmed() || m.textArmed() {
		t.Error("the shared retry was not spent")
	}
	// The replay: its reasoning passes (corrected); its text misses img after the ceiling.
	if v := m.CheckThinking(ctx, "The picture shows a cat."); v.Discard {
		t.Fatalf("replay's thinking: %+v", v)
	}
	if v := m.CheckAnswer(ctx, "Here ![cat](x)"); v.Discard || len(v.Rules) != 1 {
		t.Fatalf("after the ceiling the text miss is kept: %+v", v)
	}
	fs := m.Firings()
	if len(fs) != 2 || fs[0].Rule != "blind" || !fs[0].Thinking || !fs[0].Retry || fs[0].Outcome != OutcomeCorrected ||
		fs[1].Rule != "img" || fs[1].Thinking || fs[1].Outcome != OutcomeKept {
		t.Errorf("firings %+v", fs)
	}
	if lines := fx.log.Lines("stream rule fired on the thinking", "rule=blind"); len(lines) != 1 {
		t.Errorf("log: %s", fx.log.String())
	}
}

// TestCheckThinkingEdges: blank reasoning passes; a miss after the ceiling is kept and
// reminds; a shadowed rule only records; a shown response's miss is kept; `when` and the
// replay's missed_again are honoured.
func TestCheckThinkingEdges(t *testing.T) {
	t.Parallel()
	pic := with(thinkingRule("pic", `can't see`), func(r *Rule) { r.When = []string{EnvPicture} })
	sh := with(thinkingRule("sh", `rm -rf`), func(r *Rule) { r.Shadow = true })
	fx := newFixture(t, []Rule{pic, sh}, nil)
	ctx, m := fx.eng.BeginMove(context.Background(), "c")
	if m.ThinkingArmed() {
		t.Error("armed without picture, with only a shadowed rule left")
	}
	if v := m.CheckThinking(ctx, "I can't see it; rm -rf"); v.Discard || len(v.Rules) != 0 {
		t.Errorf("verdict %+v", v)
	}
	if fs := m.Firings(); len(fs) != 1 || fs[0].Outcome != OutcomeShadow || !fs[0].Thinking {
		t.Errorf("firings %+v", fs)
	}

	ctx, m = fx.eng.BeginMove(context.Background(), "c2", EnvPicture)
	if v := m.CheckThinking(ctx, "  \n"); v.Discard {
		t.Error("blank reasoning discarded")
	}
	if v := m.CheckShownThinking(ctx, "I can't see it"); v.Discard || len(v.Rules) != 1 {
		t.Errorf("shown: %+v", v)
	}
	if r := m.ToolReminders(ctx, "shell", "{}"); len(r) != 1 || r[0].Rule != "pic" {
		t.Errorf("the kept miss does not remind: %+v", r)
	}

	fx2 := newFixture(t, []Rule{pic}, &Config{MaxRetriesPerMove: 2})
	ctx, m = fx2.eng.BeginMove(context.Background(), "c3", EnvPicture)
	if v := m.CheckThinking(ctx, "I can't see it"); !v.Discard {
		t.Fatal("no discard")
	}
	m.CheckThinking(ctx, "still, I can't see it") // the rule is silent now; the outcome is decided
	if fs := m.Firings(); len(fs) != 1 || fs[0].Outcome != OutcomeMissedAgain {
		t.Errorf("firings %+v", fs)
	}
}

// TestThinkingScanner: the reasoning is cut within a batch of a certain miss, the firing
// early and thinking, and CutAtBytes the reasoning's length; a negate rule waits for
// CheckThinking; a predicate tree cuts too.
func TestThinkingScanner(t *testing.T) {
	t.Parallel()
	neg := with(thinkingRule("a_neg", `checked`), func(r *Rule) { r.Negate = true })
	tree := with(thinkingRule("c_tree", ""), func(r *Rule) {
		r.Predicate = &Predicate{AllOf: []Predicate{{ContainsRegex: `rm -rf`}, {ContainsRegex: `folder`}}}
	})
	fx := newFixture(t, []Rule{neg, thinkingRule("b_blind", `can't see`), tree}, &Config{MaxRetriesPerMove: 3})
	_, m := fx.eng.BeginMove(context.Background(), "c")
	text := "Let me think. " + strings.Repeat("step ", 20) + "I can't see the image. " + strings.Repeat("more ", 600)
	v, cut := scanIn(t, m.ThinkingScanner(), text, 9)
	at := strings.Index(text, "can't see") + len("can't see")
	if !v.Discard || len(v.Rules) != 1 || v.Rules[0] != "b_blind" {
		t.Fatalf("verdict %+v", v)
	}
	if cut < at || cut > at+earlyBatchBytes+9 {
		t.Errorf("cut at %d, the miss ends at %d", cut, at)
	}
	if f := m.Firings(); len(f) != 1 || !f[0].Early || !f[0].Thinking || f[0].CutAtBytes != cut {
		t.Errorf("firings %+v", f)
	}
	text = strings.Repeat("plan ", 30) + "I'll rm -rf the folder. " + strings.Repeat("more ", 100)
	if v, cut := scanIn(t, m.ThinkingScanner(), text, 9); !v.Discard || v.Rules[0] != "c_tree" || cut > strings.Index(text, "folder")+earlyBatchBytes+20 {
		t.Errorf("tree: %+v at %d", v, cut)
	}
	if s := m.ThinkingScanner(); s != nil {
		if v, cut := scanIn(t, s, strings.Repeat("no ", 100), 9); cut >= 0 {
			t.Errorf("the negate rule cut on a prefix: %+v", v)
		}
	}
	if v := m.CheckThinking(context.Background(), strings.Repeat("no ", 100)); !v.Discard || v.Rules[0] != "a_neg" {
		t.Errorf("negate at the end: %+v", v)
	}
}

// TestThinkingSummary: the load summary says a thinking rule is armed only for providers
// with reasoning, and SpeechHoldOf says it streams the answer.
func TestThinkingSummary(t *testing.T) {
	t.Parallel()
	r := thinkingRule("blind", `can't see`)
	fx := newFixture(t, []Rule{r}, nil)
	if lines := fx.log.Lines("stream rules loaded", "armed only for providers with reasoning"); len(lines) != 1 {
		t.Errorf("log: %s", fx.log.String())
	}
	if h := SpeechHoldOf(&r); h.Kind != HoldNone || !strings.Contains(h.Reason, "reasoning") {
		t.Errorf("hold %+v", h)
	}
}
