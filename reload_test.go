package streamrules

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corpus "github.com/streamrules/streamrules/internal/workload"
)

// TestValidNameIsTheRegexp: ValidName is [a-z][a-z0-9_]* written out, on every string of
// up to three bytes from an alphabet of each class's edges and beyond.
func TestValidNameIsTheRegexp(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	alphabet := []byte("`az{/09:_^AZé\x00 -")
	var try func(s string)
	try = func(s string) {
		if ValidName(s) != re.MatchString(s) {
			t.Errorf("ValidName(%q) = %v, the regexp says %v", s, ValidName(s), re.MatchString(s))
		}
		if len(s) < 3 {
			for _, c := range alphabet {
				try(s + string(c))
			}
		}
	}
	try("")
}

// TestSameRuleSeesEveryField changes each field of Rule in turn: sameRule must see it, so a
// reload never keeps a stale compiled rule. A field of a kind this test does not know
// fails it: teach both the test and sameRule.
func TestSameRuleSeesEveryField(t *testing.T) {
	t.Parallel()
	base := Rule{Name: "r", Scope: ScopeText, Condition: "x", When: []string{envTelegram},
		CreatedAt: time.Unix(1, 0), UpdatedAt: time.Unix(2, 0)}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		f := typ.Field(i)
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			other := base
			other.When = append([]string(nil), base.When...)
			v := reflect.ValueOf(&other).Elem().Field(i)
			switch {
			case v.Kind() == reflect.String:
				v.SetString(v.String() + "x")
			case v.Kind() == reflect.Bool:
				v.SetBool(!v.Bool())
			case v.Kind() == reflect.Int64:
				v.SetInt(v.Int() + 1)
			case v.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.String:
				v.Set(reflect.Append(v, reflect.ValueOf("x")))
			case v.Kind() == reflect.Pointer:
				v.Set(reflect.New(f.Type.Elem()))
			case f.Type == reflect.TypeOf(time.Time{}):
				v.Set(reflect.ValueOf(time.Unix(99, 0)))
			default:
				t.Fatalf("field %s (%s): teach this test and sameRule about it", f.Name, f.Type)
			}
			if sameRule(base, other) || sameRule(other, base) {
				t.Errorf("sameRule misses a change of %s", f.Name)
			}
		})
	}
	t.Run("same", func(t *testing.T) {
		t.Parallel()
		a, b := base, base
		a.When, b.When = nil, []string{}
		a.UpdatedAt = b.UpdatedAt.In(time.FixedZone("x", 3600)) // a reread time: the same instant
		a.Predicate, b.Predicate = &Predicate{ContainsRegex: "y"}, &Predicate{ContainsRegex: "y"}
		if !sameRule(a, b) {
			t.Error("sameRule tells apart rows that are the same")
		}
	})
}

// reloadWorld makes rules and targets for the incremental reload tests: conditions over a
// small vocabulary, so that most texts fire some rules and most edits change verdicts.
type reloadWorld struct {
	r     *rand.Rand
	words []string
	real  []string // realistic conditions (multimatch's generator)
	n     int      // rules made so far, for names
}

func newReloadWorld(seed uint64) *reloadWorld {
	w := &reloadWorld{r: rand.New(rand.NewPCG(seed, 7)), real: corpus.RealisticPatterns(400, int64(seed))}
	for _, a := range []string{"al", "bo", "ki", "su", "te", "ra", "mo", "ne"} {
		for _, b := range []string{"pa", "so", "ku", "li", "de", "ga", "vi"} {
			w.words = append(w.words, a+b)
		}
	}
	return w
}

func (w *reloadWorld) word() string { return w.words[w.r.IntN(len(w.words))] }

func (w *reloadWorld) cond() string {
	switch w.r.IntN(8) {
	case 0:
		return `(?i)\b` + w.word() + `\b`
	case 1:
		return w.word() + `\s+` + w.word()
	case 2:
		return `\b` + w.word() + `.{0,30}\b` + w.word() + `\b`
	case 3:
		return `(?i)` + w.word() + `-\d{2}`
	case 4:
		return w.real[w.r.IntN(len(w.real))]
	case 5:
		return `^` + w.word()
	case 6:
		return w.word() + `\s*$`
	}
	return w.word()
}

// rule makes a rule named name: mostly a plain text rule; else a tool rule (one tool with
// a big group, two small), a negated rule, a predicate tree, a field rule, a fix, an early rule.
func (w *reloadWorld) rule(name string) Rule {
	r := textRule(name, w.cond())
	if k := w.r.IntN(10); k < 3 {
		r.Scope = ScopeToolPrefix + []string{"big", "big", "shell", "web"}[w.r.IntN(4)]
		if k == 0 {
			r.Field = "cmd"
		}
	}
	switch w.r.IntN(12) {
	case 0:
		r.Negate = true
	case 1:
		r.Condition = ""
		// One condition and words: the bound is per rule, and three
		// conditions that may each fall to regexp (40 ns a byte and more) exceed it.
		r.Predicate = &Predicate{AnyOf: []Predicate{{ContainsRegex: w.cond()}, {AllOf: []Predicate{{NotContainsRegex: w.word()}, {ContainsRegex: w.word()}}}}}
	case 2:
		r.AppliesWhen = &Predicate{ContainsRegex: w.word()}
	case 3:
		if r.Scope == ScopeText {
			r.Fix = &Fix{AppendIfMissing: w.word()}
		}
	}
	r.Early = w.r.IntN(3) == 0
	return r
}

func (w *reloadWorld) newName() string {
	w.n++
	return fmt.Sprintf("r%05d", w.n)
}

func (w *reloadWorld) text() string {
	var b strings.Builder
	for n := 3 + w.r.IntN(30); n > 0; n-- {
		b.WriteString(w.word())
		b.WriteString([]string{" ", " ", "  ", "\n", "-", "-1", "7 "}[w.r.IntN(7)])
	}
	return b.String()
}

// verdictsOf lists what each rule group of s decides on the texts and the calls: the text
// rules that fire, the early rules whose condition matches, each tool's rules that fire;
// then the rules loaded and the rows skipped.
func verdictsOf(s *ruleSet, texts []string, calls map[string][]string) []string {
	var out []string
	for i, text := range texts {
		t := targetOf(text, s.match, nil)
		var fired []string
		for _, r := range s.text {
			if r.fires(&t) {
				fired = append(fired, r.Name)
			}
		}
		out = append(out, fmt.Sprintf("text %d: %v", i, fired))
		if s.early != nil {
			var hit []string
			for _, g := range s.early.groups {
				c := g.dfa.Start()
				p := []byte(text)
				gaveUp := false
				for len(p) > 0 && !gaveUp {
					found, rest, ok := g.dfa.Feed(&c, p)
					for _, k := range found {
						hit = append(hit, g.rules[k].Name)
					}
					p, gaveUp = rest, !ok
				}
				end, ok := g.dfa.End(&c)
				for _, k := range end {
					hit = append(hit, g.rules[k].Name)
				}
				if gaveUp || !ok {
					// A DFA that gives up says nothing; whether it does depends on the
					// states it has already learned (a kept DFA is warmer than a cold
					// engine's). Ask the rules' regexps instead.
					for _, r := range g.rules {
						if regexp.MustCompile(r.Condition).MatchString(text) {
							hit = append(hit, r.Name)
						}
					}
				}
			}
			slices.Sort(hit)
			out = append(out, fmt.Sprintf("early %d: %v", i, slices.Compact(hit)))
		}
	}
	for _, tool := range slices.Sorted(maps.Keys(calls)) {
		for j, args := range calls[tool] {
			var fired []string
			if tr := s.byTool[tool]; tr != nil {
				a := CompactArgs(args)
				t := targetOf(a, tr.match, nil)
				for _, r := range tr.rules {
					if r.firesOnArgs(&t, &callArgs{text: a}) {
						fired = append(fired, r.Name)
					}
				}
			}
			out = append(out, fmt.Sprintf("%s %d: %v", tool, j, fired))
		}
	}
	return append(out, fmt.Sprint(ruleNames(s.all)), fmt.Sprint(s.skipped))
}

// TestIncrementalReloadVerdicts edits rules again and again (adds, edits, deletes, renames,
// disables, bad rows) and checks after every step that the engine, which builds each
// edit on the automatons in force (overlays) and now and then merges, decides everything
// exactly as a fresh engine compiling the same rows cold.
func TestIncrementalReloadVerdicts(t *testing.T) {
	t.Parallel()
	for _, early := range []bool{false, true} {
		t.Run(fmt.Sprintf("early_interrupt=%v", early), func(t *testing.T) {
			t.Parallel()
			w := newReloadWorld(uint64(len(t.Name())))
			var rules []Rule
			for range 700 {
				rules = append(rules, w.rule(w.newName()))
			}
			for _, r := range rules[:300] { // a tool group big enough for overlays
				if r.Tool() == "" {
					r.Scope, r.Fix = ScopeToolPrefix+"big", nil
				}
			}
			f := newFixture(t, rules, &Config{EarlyInterrupt: early})
			f.eng.merge.after = func(time.Duration) <-chan time.Time { return nil } // merges only when the test says
			texts := make([]string, 25)
			for i := range texts {
				texts[i] = w.text()
			}
			calls := map[string][]string{}
			for _, tool := range []string{"big", "shell", "web", "none"} {
				for range 8 {
					calls[tool] = append(calls[tool], fmt.Sprintf(`{"cmd": %q, "note": %q}`, w.text(), w.word()))
				}
			}
			ctx := context.Background()
			steps, overlaid := 60, 0
			if testing.Short() {
				steps = 20
			}
			for step := range steps {
				rows, err := f.store.LoadRules(ctx)
				if err != nil {
					t.Fatal(err)
				}
				pick := rows[w.r.IntN(len(rows))]
				var what string
				switch k := w.r.IntN(20); {
				case k < 6:
					what = "add"
					_, err = f.store.CreateRule(ctx, w.rule(w.newName()))
				case k < 12:
					what = "edit condition of " + pick.Name
					r := w.rule(pick.Name)
					_, err = f.store.UpdateRule(ctx, pick.Name, r)
				case k < 14:
					what = "edit text of " + pick.Name
					pick.Text += " again"
					_, err = f.store.UpdateRule(ctx, pick.Name, pick)
				case k < 16:
					what = "delete " + pick.Name
					err = f.store.DeleteRule(ctx, pick.Name)
				case k < 18:
					what = "rename " + pick.Name
					_, err = f.store.UpdateRule(ctx, pick.Name, with(pick, func(r *Rule) { r.Name = w.newName() }))
				case k < 19:
					what = "disable " + pick.Name
					_, err = f.store.UpdateRule(ctx, pick.Name, with(pick, func(r *Rule) { r.Disabled = !r.Disabled }))
				default:
					what = "bad row"
					f.store.PutRaw(textRule(w.newName(), `(unclosed`))
				}
				if err != nil {
					t.Fatalf("step %d, %s: %v", step, what, err)
				}
				if w.r.IntN(10) == 0 {
					what += ", merged"
					f.eng.mergeOnce()
				}
				set := f.eng.rules.Load()
				if set.overlaid() {
					overlaid++
				}
				cold, err := New(ctx, plainStore{f.store}, &Config{Logger: discardLogger(), EarlyInterrupt: early})
				if err != nil {
					t.Fatal(err)
				}
				got, want := verdictsOf(set, texts, calls), verdictsOf(cold.rules.Load(), texts, calls)
				cold.Close()
				if !slices.Equal(got, want) {
					for i := range min(len(got), len(want)) {
						if got[i] != want[i] {
							t.Fatalf("step %d (%s): incremental %s\ncold %s", step, what, got[i], want[i])
						}
					}
					t.Fatalf("step %d (%s): %d verdicts, cold %d", step, what, len(got), len(want))
				}
			}
			if overlaid == 0 {
				t.Fatal("no step left an overlay: the test did not test incremental reloads")
			}
			t.Logf("%d steps, %d with an overlay", steps, overlaid)
		})
	}
}

// TestReloadConcurrentChecks checks answers and tool calls while rules are edited and
// merged in the background as fast as they can be: every check must decide as the naive
// loop does over the rule set its move began with. Run it with -race -count=50.
func TestReloadConcurrentChecks(t *testing.T) {
	t.Parallel()
	w := newReloadWorld(11)
	var rules []Rule
	for i := range 700 {
		r := textRule(w.newName(), w.cond())
		if i%2 == 0 { // 350 shell rules: enough for the tool's group to get overlays too
			r = softRule(r.Name, "shell", r.Condition)
		}
		r.Negate = w.r.IntN(8) == 0
		rules = append(rules, r)
	}
	f := newFixture(t, rules, nil)
	merged := make(chan struct{}, 1)
	f.eng.merge.merged = func() {
		select {
		case merged <- struct{}{}:
		default:
		}
	}
	now := make(chan time.Time)
	close(now)
	f.eng.merge.after = func(time.Duration) <-chan time.Time { return now } // no quiet period
	texts := make([]string, 20)
	for i := range texts {
		texts[i] = w.text()
	}
	ctx := context.Background()
	done := make(chan struct{})
	errs := make(chan error, 100)
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			naive := map[string]*regexp.Regexp{}
			for k := 0; ; k++ {
				select {
				case <-done:
					return
				default:
				}
				_, m := f.eng.BeginMove(ctx, fmt.Sprint("chat-", c, "-", k))
				text := texts[k%len(texts)]
				fires := func(rules []*compiledRule, target string) []string {
					out := []string{}
					for _, r := range rules {
						re := naive[r.Condition]
						if re == nil {
							re = regexp.MustCompile(r.Condition)
							naive[r.Condition] = re
						}
						if re.MatchString(target) != r.Negate {
							out = append(out, r.Name)
						}
					}
					return out
				}
				// The tool call first: a soft rule fires on a fresh move, with no
				// pending reminder of a missed text rule mixed in.
				q, _ := json.Marshal(text)
				args := `{"cmd":` + string(q) + `}`
				var shell []*compiledRule
				if tr := m.set.byTool["shell"]; tr != nil {
					shell = tr.rules
				}
				if got, want := reminderNames(m.ToolReminders(ctx, "shell", args)), fires(shell, CompactArgs(args)); !slices.Equal(got, want) {
					errs <- fmt.Errorf("args %s: reminded %v, the naive loop %v", args, got, want)
					return
				}
				want := fires(m.set.text, text)
				if got := m.CheckAnswer(ctx, text).Rules; !slices.Equal(got, want) {
					errs <- fmt.Errorf("text %q: fired %v, the naive loop %v", text, got, want)
					return
				}
			}
		}()
	}
	shellOverlaid := false
	for i := range 40 {
		rows, err := f.store.LoadRules(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pick := rows[w.r.IntN(len(rows))]
		switch i % 3 {
		case 0:
			_, err = f.store.UpdateRule(ctx, pick.Name, with(pick, func(r *Rule) { r.Condition = w.cond() }))
		case 1:
			r := textRule(w.newName(), w.cond())
			if i%2 == 0 {
				r = softRule(r.Name, "shell", r.Condition)
			}
			_, err = f.store.CreateRule(ctx, r)
		default:
			err = f.store.DeleteRule(ctx, pick.Name)
		}
		if err != nil {
			t.Fatal(err)
		}
		if tr := f.eng.rules.Load().byTool["shell"]; tr != nil && tr.match.overlaid() {
			shellOverlaid = true
		}
	}
	if !shellOverlaid {
		t.Error("the shell group never had an overlay: its checks did not race an overlay or its merge")
	}
	select {
	case <-merged:
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(time.Minute):
		t.Fatal("no merge in a minute")
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestMergeMakesOneSet: an edit leaves the text group overlaid (the old base and a small
// overlay); the merge builds one set of the group again, with the same verdicts, and
// leaves no overlay.
func TestMergeMakesOneSet(t *testing.T) {
	ctx := context.Background()
	rules := textRules(corpus.RealisticPatterns(1000, 1))
	store, err := NewMemoryStore(rules, testEnvs...)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := New(ctx, store, &Config{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	eng.merge.after = func(time.Duration) <-chan time.Time { return nil } // merged here only
	base := eng.rules.Load().match.base
	edited := rules[500]
	edited.Condition = `(?i)\bmerged_here\b`
	if _, err := store.UpdateRule(ctx, edited.Name, edited); err != nil {
		t.Fatal(err)
	}
	if err := eng.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	before := eng.rules.Load()
	if !before.overlaid() || before.match.base != base || before.match.over == nil {
		t.Fatalf("after an edit: overlaid %v, same base %v, overlay %v; want the old base and an overlay",
			before.overlaid(), before.match.base == base, before.match.over != nil)
	}
	after := eng.mergeOnce()
	if after.overlaid() || after.match.base == base || after.match.over != nil || after.match.from != nil {
		t.Fatalf("after the merge: overlaid %v, new base %v; want one new set", after.overlaid(), after.match.base != base)
	}
	texts := []string{"nothing here", "it merged_here, see", corpus.RealisticText(4096, 4096, "")}
	for _, text := range texts {
		if got, want := after.match.Match(text, nil), before.match.Match(text, nil); !slices.Equal(got, want) {
			t.Fatalf("%.20q: merged %v, overlaid %v", text, got, want)
		}
	}
	_, m := eng.BeginMove(ctx, "c")
	if v := m.CheckAnswer(ctx, texts[1]); !slices.Contains(v.Rules, edited.Name) {
		t.Fatalf("after the merge the edited rule does not fire: %+v", v)
	}
}
