package streamrules

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/internal/lazydfa"
)

func TestPlanEarly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, cond     string
		negate, shadow bool
		decidable      bool
	}{
		{name: "literal", cond: `![cat]`, decidable: true},
		{name: "markdown image", cond: `!\[[^\]]*\]\([^)\s]+\)`, decidable: true},
		{name: "dot all", cond: `(?s)foo.*bar`, decidable: true},
		{name: "newline literal", cond: "a\nb", decidable: true},
		{name: "word boundary", cond: `\bcan't\b`, decidable: true},
		{name: "begin text", cond: `^hello`, decidable: true},
		{name: "empty", cond: ``, decidable: true},
		{name: "end of line: decided by the newline after it", cond: `(?m)done$`, decidable: true},
		{name: "end anchor", cond: `↩ #\d+\s*$`},
		{name: "end of text", cond: `done\z`},
		{name: "negate", cond: `tail`, negate: true},
		{name: "shadow", cond: `x`, shadow: true},
	}
	for _, tt := range tests {
		r := Rule{Name: "r", Scope: ScopeText, Condition: tt.cond, Negate: tt.negate, Shadow: tt.shadow}
		if p := planEarly(&r); (p != nil) != tt.decidable {
			t.Errorf("%s: decidable %v, want %v", tt.name, p != nil, tt.decidable)
		}
	}
}

// scanIn feeds text to a scanner in chunks of size and returns the verdict and where it cut.
func scanIn(t *testing.T, s *Scanner, text string, size int) (Verdict, int) {
	t.Helper()
	for end := size; ; end += size {
		end = min(end, len(text))
		if v, ok := s.Scan(context.Background(), []byte(text[:end])); ok {
			return v, end
		}
		if end == len(text) {
			return Verdict{}, -1
		}
	}
}

// TestScannerCutsEarly: a miss early in a long answer is found within a batch of it, with
// the firing recorded as early and the move's retry spent.
func TestScannerCutsEarly(t *testing.T) {
	t.Parallel()
	img := with(textRule("img", `!\[[^\]]*\]\([^)\s]+\)`), func(r *Rule) { r.Early = true })
	late := textRule("late", `!\[`) // not early: never judged on a prefix
	tail := with(textRule("tail", `↩ #\d+\s*$`), func(r *Rule) { r.Negate, r.Early = true, true })
	fx := newFixture(t, []Rule{img, late, tail}, nil)
	ctx, m := fx.eng.BeginMove(context.Background(), "c")
	s := m.EarlyScanner()
	if s == nil {
		t.Fatal("no scanner")
	}
	text := strings.Repeat("word ", 100) + "![cat](https://x/c.png) " + strings.Repeat("word ", 900)
	v, cut := scanIn(t, s, text, 5)
	at := strings.Index(text, ")") + 1
	if !v.Discard || len(v.Rules) != 1 || v.Rules[0] != "img" {
		t.Fatalf("verdict %+v", v)
	}
	if cut < at || cut > at+earlyBatchBytes+5 { // within a batch (and a chunk) of the miss
		t.Errorf("cut at %d, the miss ends at %d", cut, at)
	}
	if !strings.Contains(v.Interrupt, `rule="img"`) {
		t.Errorf("interrupt %q", v.Interrupt)
	}
	f := m.Firings()
	if len(f) != 1 || !f[0].Early || f[0].CutAtBytes != cut || !f[0].Retry {
		t.Errorf("firings %+v", f)
	}
	if m.textArmed() || m.EarlyScanner() != nil {
		t.Error("the retry was not spent")
	}
	if lines := fx.log.Lines("stream rule fired on the answer", "early=true"); len(lines) != 1 {
		t.Errorf("log: %s", fx.log.String())
	}
	_ = ctx
}

// TestScannerCutsArmedRulesOnly: the scanner cuts for a rule armed when the tour began,
// never for an early rule whose `when` does not hold, nor for a rule already fired in the
// move; the early rules sit after a non-early one in the set, so a rule's place among the
// early rules is not its place in the set.
func TestScannerCutsArmedRulesOnly(t *testing.T) {
	t.Parallel()
	early := func(r *Rule) { r.Early = true }
	pic := with(textRule("b_pic", `blind`), func(r *Rule) { r.Early, r.When = true, []string{envPicture} })
	fx := newFixture(t, []Rule{textRule("a_late", `zzz`), pic, with(textRule("c_img", `!\[`), early)}, &Config{MaxRetriesPerMove: 2})
	ctx, m := fx.eng.BeginMove(context.Background(), "c")
	text := "I am blind here\n" + strings.Repeat("word ", 60)
	if v, cut := scanIn(t, m.EarlyScanner(), text, 7); cut >= 0 {
		t.Fatalf("cut at %d by %+v: b_pic's `when` does not hold", cut, v)
	}
	// b_pic's match, found first, must not stop the scan before c_img's.
	v, cut := scanIn(t, m.EarlyScanner(), text+"see ![x]\n"+text, 7)
	if cut < 0 || !slices.Equal(v.Rules, []string{"c_img"}) {
		t.Fatalf("verdict %+v cut %d, want c_img only", v, cut)
	}
	m.AddEnvironment(envPicture)
	m.BeginTour()
	s := m.EarlyScanner()
	if v, cut := scanIn(t, s, "see ![x]\n"+strings.Repeat("word ", 60), 7); cut >= 0 {
		t.Fatalf("cut at %d by %+v: c_img already fired in this move", cut, v)
	}
	s = m.EarlyScanner()
	if v, cut := scanIn(t, s, text, 7); cut < 0 || !slices.Equal(v.Rules, []string{"b_pic"}) {
		t.Fatalf("verdict %+v cut %d, want b_pic once the picture is in the tour", v, cut)
	}
	_ = ctx
}

// TestScannerCutsWithinABatch: a miss in the middle of a long line, in an answer that
// never ends a line, is cut within a batch (and a chunk) of its end, and the scan reads
// each byte once: the cursor never goes back.
func TestScannerCutsWithinABatch(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, []Rule{with(textRule("img", `!\[`), func(r *Rule) { r.Early = true })}, nil)
	_, m := fx.eng.BeginMove(context.Background(), "c")
	head := strings.Repeat("word ", 60) + "![x] "
	text := head + strings.Repeat("more words ", 100)
	s := m.EarlyScanner()
	v, cut := scanIn(t, s, text, 7)
	if !v.Discard || cut < len(head) || cut > len(head)+earlyBatchBytes+7 {
		t.Fatalf("verdict %+v cut at %d, want a cut within a batch of the miss (%d)", v, cut, len(head))
	}
	if s.cursors[0].Read() != cut {
		t.Errorf("the cursor read %d bytes of the %d streamed", s.cursors[0].Read(), cut)
	}
}

// TestScannerCutInNameOrder: two misses found in one batch, the later-named one first in
// the text, cut with the rules and their interrupt blocks in rule-name order, as
// CheckAnswer gives them.
func TestScannerCutInNameOrder(t *testing.T) {
	t.Parallel()
	early := func(r *Rule) { r.Early = true }
	fx := newFixture(t, []Rule{with(textRule("a_late", `zzz`), early), with(textRule("b_soon", `yyy`), early)}, nil)
	_, m := fx.eng.BeginMove(context.Background(), "c")
	text := "yyy " + strings.Repeat("w", 20) + " zzz " + strings.Repeat("word ", 100)
	v, _ := scanIn(t, m.EarlyScanner(), text, len(text))
	if !v.Discard || !slices.Equal(v.Rules, []string{"a_late", "b_soon"}) {
		t.Fatalf("verdict %+v, want both rules in name order", v)
	}
	if a, b := strings.Index(v.Interrupt, `rule="a_late"`), strings.Index(v.Interrupt, `rule="b_soon"`); a < 0 || b < a {
		t.Errorf("interrupt blocks out of name order: %q", v.Interrupt)
	}
}

// TestScannerEngineSwitch: Config.EarlyInterrupt makes every decidable rule early.
func TestScannerEngineSwitch(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, []Rule{textRule("img", `!\[`)}, nil)
	_, m := fx.eng.BeginMove(context.Background(), "c")
	if m.EarlyScanner() != nil {
		t.Fatal("a rule without Early scanned with the switch off")
	}
	fx = newFixture(t, []Rule{textRule("img", `!\[`)}, &Config{EarlyInterrupt: true})
	_, m = fx.eng.BeginMove(context.Background(), "c")
	if m.EarlyScanner() == nil {
		t.Fatal("the switch did not make the rule early")
	}
}

// TestScannerUncertainEnds: a match that still depends on what follows is not cut.
func TestScannerUncertainEnds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, cond, text string
		cut              bool
	}{
		{"word boundary at the end", `\bcan't\b`, "I can't", false},
		{"word boundary then more", `\bcan't\b`, "I can't see", true},
		{"begin text on a later line", `^bad`, "good\nbad", false},
		{"begin text first line", `^bad`, "bad news", true},
		{"begin line on a later line", `(?m)^bad`, "good\nbad.", true},
		{"a match is seen with the character after it", `(?m)^bad`, "good\nbad", false},
		{"end of line before its newline", `(?m)bad$`, "so bad", false},
		{"end of line once the newline came", `(?m)bad$`, "so bad\n", true},
		{"blank so far", `\s*`, "   ", false},
	}
	for _, tt := range tests {
		fx := newFixture(t, []Rule{with(textRule("r", tt.cond), func(r *Rule) { r.Early = true })}, nil)
		_, m := fx.eng.BeginMove(context.Background(), "c")
		s := m.EarlyScanner()
		cut := -1
		for end := 1; end <= len(tt.text); end++ { // a scan at every byte, batches aside
			if _, ok := s.scan(context.Background(), []byte(tt.text[:end])); ok {
				cut = end
				break
			}
		}
		if (cut >= 0) != tt.cut {
			t.Errorf("%s: cut %v, want %v", tt.name, cut >= 0, tt.cut)
		}
	}
}

// FuzzScannerSound: whatever the condition, text and chunking, a cut on a prefix is a miss
// the whole answer has too (the end-of-answer check would fire the same rule).
func FuzzScannerSound(f *testing.F) {
	f.Add(`\bcan't\b`, "I can't", " see", uint8(1))
	f.Add(`^a`, "b\na", "", uint8(2))
	f.Add(`(?m)^a`, "b\na", "x", uint8(3))
	f.Add(`a\s+b`, "a\n", "\nb", uint8(1))
	f.Add(`x{2}`, "x", "x", uint8(1))
	f.Add(`\Bx`, "ax", "", uint8(1))
	f.Add(`a[^→]`, "a→", "", uint8(1)) // a chunk ending inside the arrow
	f.Fuzz(func(t *testing.T, cond, prefix, rest string, size uint8) {
		if _, err := regexp.Compile(cond); err != nil || len(cond) > 200 {
			return
		}
		st, err := NewMemoryStore(nil, testEnvs...)
		if err != nil {
			t.Fatal(err)
		}
		st.PutRaw(Rule{Name: "r", Scope: ScopeText, Condition: cond, Text: "t", Early: true})
		eng, err := New(context.Background(), st, &Config{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		defer eng.Close()
		_, m := eng.BeginMove(context.Background(), "c")
		s := m.EarlyScanner()
		if s == nil {
			return
		}
		n := int(size%16) + 1
		for end := n; ; end += n {
			end = min(end, len(prefix))
			// scan, not Scan: every chunk end is a scan, the hardest case for soundness.
			if _, ok := s.scan(context.Background(), []byte(prefix[:end])); ok {
				whole := prefix + rest
				if !regexp.MustCompile(cond).MatchString(whole) || strings.TrimSpace(whole) == "" {
					t.Fatalf("cut at %d of %q, but %q does not miss %q", end, prefix, whole, cond)
				}
				return
			}
			if end == len(prefix) {
				return
			}
		}
	})
}

// TestScannerGivesUpQuietly: an early rule whose DFA gives up on an answer (it would
// build a state every few bytes) stops scanning that answer without a cut; the answer is
// then judged at its end as usual, and a second early rule in the same move still cuts.
//
// The rule's DFA is exponential on random a/b text. (The rule these tests had,
// `[ab]*a[ab]{14}c`, is refused by the cost bound: on a text of a's regexp keeps a thread
// per [ab]. This one enters its chain after two characters, which the cost estimate
// does not count: see the README's cost section.)
func TestScannerGivesUpQuietly(t *testing.T) {
	t.Parallel()
	expo := with(textRule("expo", `ab[ab]{24}c`), func(r *Rule) { r.Early = true })
	fx := newFixture(t, []Rule{expo}, nil)
	_, m := fx.eng.BeginMove(context.Background(), "c")
	var b strings.Builder
	x := uint32(7)
	for range 1 << 15 {
		x = x*1664525 + 1013904223
		b.WriteByte("ab"[x>>31])
	}
	text := b.String() + "ab" + strings.Repeat("a", 24) + "c" // the whole answer misses the rule
	s := m.EarlyScanner()
	if v, cut := scanIn(t, s, text, 64); cut >= 0 {
		t.Fatalf("cut at %d by %+v after the DFA should have given up", cut, v)
	}
	if !s.off[0] || len(s.alone[0]) != 1 || !s.alone[0][0].off {
		t.Fatal("the DFAs did not give up: the test does not test that")
	}
	if v := m.CheckAnswer(context.Background(), text); !v.Discard {
		t.Fatalf("the end-of-answer check did not discard: %+v", v)
	}
}

// TestScannerGroupGivesUpRulesGoOn: when a group's DFA gives up on an answer (one of its
// rules is exponential on this text), its other rules go on being scanned, each alone,
// from the start of the answer: a harmless rule still cuts early.
func TestScannerGroupGivesUpRulesGoOn(t *testing.T) {
	t.Parallel()
	expo := with(textRule("a_expo", `ab[ab]{24}c`), func(r *Rule) { r.Early = true })
	bang := with(textRule("b_bang", `!\[`), func(r *Rule) { r.Early = true })
	fx := newFixture(t, []Rule{expo, bang}, nil)
	if groups := fx.eng.rules.Load().early.groups; len(groups) != 1 {
		t.Fatalf("%d early groups: the test needs both rules in one", len(groups))
	}
	_, m := fx.eng.BeginMove(context.Background(), "c")
	var b strings.Builder
	x := uint32(7)
	for range 1 << 15 {
		x = x*1664525 + 1013904223
		b.WriteByte("ab"[x>>31])
	}
	at := b.Len()
	text := b.String() + " ![img](x) " + strings.Repeat("more words ", 20)
	s := m.EarlyScanner()
	v, cut := scanIn(t, s, text, 64)
	if !s.off[0] {
		t.Fatal("the group's DFA did not give up: the test does not test that")
	}
	if cut < 0 || !slices.Equal(v.Rules, []string{"b_bang"}) || !v.Discard {
		t.Fatalf("cut at %d by %+v; want b_bang to cut", cut, v)
	}
	if cut < at || cut > at+4+2*earlyBatchBytes {
		t.Fatalf("cut at %d; the miss ends at %d", cut, at+3)
	}
}

// TestEarlyGroupsKeptAcrossEdits: an edit rebuilds the DFA of the edited rule's group,
// and of the next one when the edit moved a cut by size; every other early group keeps
// its DFA (and the states it has learned).
func TestEarlyGroupsKeptAcrossEdits(t *testing.T) {
	t.Parallel()
	var rules []Rule
	for i := range 400 {
		rules = append(rules, textRule(fmt.Sprintf("r%03d", i), fmt.Sprintf(`(?i)\bword%d\b.{0,20}\bother%d\b`, i, i)))
	}
	fx := newFixture(t, rules, &Config{EarlyInterrupt: true})
	before := map[*lazydfa.DFA]bool{}
	set := fx.eng.rules.Load()
	for _, g := range set.early.groups {
		before[g.dfa] = true
	}
	if len(set.early.groups) < 5 {
		t.Fatalf("only %d early groups: the test needs several", len(set.early.groups))
	}
	edited := rules[200]
	edited.Condition = `(?i)\bedited\b`
	if _, err := fx.store.UpdateRule(context.Background(), edited.Name, edited); err != nil {
		t.Fatal(err)
	}
	if err := fx.eng.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := fx.eng.rules.Load().early.groups
	fresh := 0
	for _, g := range after {
		if !before[g.dfa] {
			fresh++
		}
	}
	if fresh < 1 || fresh > 2 {
		t.Errorf("%d of %d early groups got a new DFA after one edit, want 1 or 2", fresh, len(after))
	}
	// The edited rule is scanned with its new condition.
	_, m := fx.eng.BeginMove(context.Background(), "c")
	v, cut := scanIn(t, m.EarlyScanner(), "so this is edited, and more text follows "+strings.Repeat("here ", 30), 4)
	if cut < 0 || !slices.Equal(v.Rules, []string{"r200"}) {
		t.Fatalf("verdict %+v cut %d", v, cut)
	}
}
