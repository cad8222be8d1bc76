package streamrules

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestFixApply(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"message_id": "4711", "price": "$5"}
	tests := []struct {
		name     string
		fix      Fix
		in, want string
		missing  string
	}{
		{"append", Fix{AppendIfMissing: "\n\n↩ #{{message_id}}"}, "Hello.", "Hello.\n\n↩ #4711", ""},
		{"append trims trailing space first", Fix{AppendIfMissing: "\n\n↩ #{{message_id}}"}, "Hello.\n \n", "Hello.\n\n↩ #4711", ""},
		{"append when present", Fix{AppendIfMissing: "\n\n↩ #{{message_id}}"}, "Hello.\n↩ #4711\n", "Hello.\n↩ #4711", ""}, // only the space after it goes,
		{"append with spaces in the braces", Fix{AppendIfMissing: " #{{ message_id }}"}, "a", "a #4711", ""},
		{"prepend", Fix{PrependIfMissing: "Note: "}, "  text", "Note: text", ""},
		{"prepend when present", Fix{PrependIfMissing: "Note: "}, "Note: text", "Note: text", ""},
		{"replace with a group", Fix{ReplaceRegex: &ReplaceRegex{Pattern: `!\[[^\]]*\]\(([^)\s]+)\)`, With: "$1"}}, "A ![cat](http://x/c.jpg) and ![](http://y)", "A http://x/c.jpg and http://y", ""},
		{"replace with named group and braces", Fix{ReplaceRegex: &ReplaceRegex{Pattern: `(?P<w>\w+)@(\w+)\.com`, With: "${w} at ${2}"}}, "mail bob@ex.com", "mail bob at ex", ""},
		{"a $ in a variable stays literal", Fix{ReplaceRegex: &ReplaceRegex{Pattern: `PRICE`, With: "{{price}}$$"}}, "costs PRICE", "costs $5$", ""},
		{"missing variable: not applied", Fix{AppendIfMissing: "\n↩ #{{message_id}} {{topic}}"}, "x", "x", "topic"},
	}
	for _, tt := range tests {
		f := tt.fix
		if err := validateFix(&f, checkRegex); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got, missing := compileFix(&f).apply(tt.in, vars)
		if got != tt.want || missing != tt.missing {
			t.Errorf("%s: apply(%q) = %q, missing %q; want %q, missing %q", tt.name, tt.in, got, missing, tt.want, tt.missing)
		}
	}
}

func TestFixValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fix   Fix
		field string
	}{
		{"empty", Fix{}, "fix"},
		{"two ops", Fix{AppendIfMissing: "a", PrependIfMissing: "b"}, "fix"},
		{"only spaces", Fix{AppendIfMissing: "\n\n"}, "fix.append_if_missing"},
		{"bad variable name", Fix{AppendIfMissing: "{{Message-ID}}"}, "fix.append_if_missing"},
		{"unclosed braces", Fix{PrependIfMissing: "{{message_id"}, "fix.prepend_if_missing"},
		{"bad pattern", Fix{ReplaceRegex: &ReplaceRegex{Pattern: "(", With: "x"}}, "fix.replace_regex.pattern"},
		{"empty pattern", Fix{ReplaceRegex: &ReplaceRegex{With: "x"}}, "fix.replace_regex.pattern"},
		{"bad template in with", Fix{ReplaceRegex: &ReplaceRegex{Pattern: "a", With: "{{ x y }}"}}, "fix.replace_regex.with"},
		{"too long", Fix{AppendIfMissing: strings.Repeat("x", MaxFixChars+1)}, "fix.append_if_missing"},
	}
	for _, tt := range tests {
		r := textRule("fixed", "x")
		r.Fix = &tt.fix
		r.Normalize()
		err := Validate(&r, testEnvs)
		ve, ok := err.(*ValidationError)
		if !ok || ve.Field != tt.field {
			t.Errorf("%s: Validate = %v, want a ValidationError on %s", tt.name, err, tt.field)
		}
	}
	r := softRule("tool_fix", "shell", "x")
	r.Fix = &Fix{AppendIfMissing: "x"}
	r.Normalize()
	if err := Validate(&r, testEnvs); err == nil || err.(*ValidationError).Field != "fix" {
		t.Errorf("a tool rule with a fix: %v", err)
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, old, new string
		want           []Change
	}{
		{"same", "a\nb", "a\nb", nil},
		{"append lines", "a", "a\n\n↩ #1", []Change{{Op: ChangeAdd, NewLine: 2}, {Op: ChangeAdd, NewLine: 3, New: "↩ #1"}}},
		{"edit a line", "a\nb\nc", "a\nB\nc", []Change{{Op: ChangeEdit, OldLine: 2, NewLine: 2, Old: "b", New: "B"}}},
		{"remove a line", "a\nb\nc", "a\nc", []Change{{Op: ChangeRemove, OldLine: 2, Old: "b"}}},
		{"prepend", "b", "a\nb", []Change{{Op: ChangeAdd, NewLine: 1, New: "a"}}},
		{"edit and add", "x\ny", "X\ny\nz", []Change{{Op: ChangeEdit, OldLine: 1, NewLine: 1, Old: "x", New: "X"}, {Op: ChangeAdd, NewLine: 3, New: "z"}}},
		{"two edits, one removal", "a\nb\nc\nd", "A\nB\nd", []Change{
			{Op: ChangeEdit, OldLine: 1, NewLine: 1, Old: "a", New: "A"},
			{Op: ChangeEdit, OldLine: 2, NewLine: 2, Old: "b", New: "B"},
			{Op: ChangeRemove, OldLine: 3, Old: "c"}}},
	}
	for _, tt := range tests {
		if got := Diff(tt.old, tt.new); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Diff = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestDiffRebuilds: applying a diff's changes to the old lines gives the new lines, for
// random line lists; the property the audit record relies on.
func TestDiffRebuilds(t *testing.T) {
	t.Parallel()
	lines := []string{"a", "b", "c", ""}
	for seed := range 3000 {
		gen := func(n int) string {
			var out []string
			for i := range n {
				out = append(out, lines[(seed*7+i*i+n)%len(lines)])
			}
			return strings.Join(out, "\n")
		}
		old, new := gen(seed%6), gen((seed/6)%7)
		if got := applyDiff(old, Diff(old, new)); got != new {
			t.Fatalf("Diff(%q, %q) = %v rebuilds %q", old, new, Diff(old, new), got)
		}
	}
}

// applyDiff replays changes on old: lines not removed or edited are kept in order, and
// adds and edits put their new line at NewLine.
func applyDiff(old string, changes []Change) string {
	a := strings.Split(old, "\n")
	gone := map[int]bool{}
	put := map[int]string{}
	n := len(a)
	for _, c := range changes {
		switch c.Op {
		case ChangeRemove:
			gone[c.OldLine] = true
			n--
		case ChangeAdd:
			put[c.NewLine] = c.New
			n++
		case ChangeEdit:
			gone[c.OldLine] = true
			put[c.NewLine] = c.New
		}
	}
	var kept []string
	for i, l := range a {
		if !gone[i+1] {
			kept = append(kept, l)
		}
	}
	out := make([]string, 0, n)
	for i := 1; i <= n; i++ {
		if l, ok := put[i]; ok {
			out = append(out, l)
			continue
		}
		out = append(out, kept[0])
		kept = kept[1:]
	}
	return strings.Join(out, "\n")
}

func tailRule() Rule {
	return with(textRule("telegram_reply_tail", `↩ #\d+\s*$`), func(r *Rule) {
		r.Negate = true
		r.Fix = &Fix{AppendIfMissing: "\n\n↩ #{{message_id}}"}
		r.Severity = "medium"
	})
}

func imageRule() Rule {
	return with(textRule("telegram_markdown_image", `!\[[^\]]*\]\([^)\s]+\)`), func(r *Rule) {
		r.Fix = &Fix{ReplaceRegex: &ReplaceRegex{Pattern: `!\[[^\]]*\]\(([^)\s]+)\)`, With: "$1"}}
	})
}

// TestCheckAnswerFixes: a miss with a fix is repaired in place: no discard, the retry not
// spent, outcome fixed with the diff, the repaired text judged again by every rule.
func TestCheckAnswerFixes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, []Rule{tailRule(), imageRule(), textRule("no_lorem", `(?i)lorem`)}, nil)

	_, m := f.eng.BeginMove(ctx, "c1")
	m.SetVar("message_id", "42")
	v := m.CheckAnswer(ctx, "Look: ![x](http://a/b.png)")
	want := "Look: http://a/b.png\n\n↩ #42"
	if v.Discard || v.Fixed != want || !slices.Equal(v.Rules, []string{"telegram_markdown_image", "telegram_reply_tail"}) {
		t.Fatalf("verdict %+v, want fixed %q", v, want)
	}
	fs := m.Firings()
	wantDiff := []Change{{Op: ChangeEdit, OldLine: 1, NewLine: 1, Old: "Look: ![x](http://a/b.png)", New: "Look: http://a/b.png"},
		{Op: ChangeAdd, NewLine: 2}, {Op: ChangeAdd, NewLine: 3, New: "↩ #42"}}
	if len(fs) != 2 || fs[0].Outcome != OutcomeFixed || fs[1].Outcome != OutcomeFixed || fs[0].Retry ||
		!reflect.DeepEqual(fs[0].Diff, wantDiff) || !reflect.DeepEqual(fs[1].Diff, wantDiff) {
		t.Fatalf("firings %+v", fs)
	}
	if lines := f.log.Lines(`msg="stream rule fired on the answer"`, "rule=telegram_reply_tail", "severity=medium", "outcome=fixed", `↩ #42`); len(lines) != 1 {
		t.Errorf("want one log line with severity, outcome and diff, log:\n%s", f.log)
	}
	// The retry is still there for a rule without a fix.
	if v := m.CheckAnswer(ctx, "lorem ipsum\n↩ #42"); !v.Discard || !slices.Equal(v.Rules, []string{"no_lorem"}) {
		t.Errorf("after a fix the move kept its retry: %+v", v)
	}

	// The fix leaves a miss of another rule: the answer is discarded as today, the rules
	// it missed are all counted (a retry firing each), the interrupt names the one without
	// a fix, and the fixed rules stay armed to repair the replay.
	_, m = f.eng.BeginMove(ctx, "c2")
	m.SetVar("message_id", "7")
	v = m.CheckAnswer(ctx, "Lorem ![x](http://a/b.png)")
	if !v.Discard || v.Fixed != "" || !slices.Equal(v.Rules, []string{"no_lorem", "telegram_markdown_image", "telegram_reply_tail"}) ||
		!strings.Contains(v.Interrupt, `rule="no_lorem"`) || strings.Contains(v.Interrupt, "telegram_") {
		t.Fatalf("partial fix: %+v", v)
	}
	if v := m.CheckAnswer(ctx, "Fine ![y](http://c/d.png)"); v.Discard || v.Fixed != "Fine http://c/d.png\n\n↩ #7" {
		t.Errorf("the replay was not repaired: %+v", v)
	}
	var got []string
	for _, fr := range m.Firings() {
		got = append(got, fmt.Sprintf("%s retry=%v %s", fr.Rule, fr.Retry, fr.Outcome))
	}
	if want := []string{
		"telegram_markdown_image retry=true missed_again", "telegram_reply_tail retry=true missed_again", "no_lorem retry=true corrected",
		"telegram_markdown_image retry=false fixed", "telegram_reply_tail retry=false fixed",
	}; !slices.Equal(got, want) {
		t.Errorf("firings:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Without the variable, the tail's fix is not applied: the interrupt path, with a warning.
	_, m = f.eng.BeginMove(ctx, "c3")
	v = m.CheckAnswer(ctx, "No tail here.")
	if !v.Discard || v.Fixed != "" || !slices.Equal(v.Rules, []string{"telegram_reply_tail"}) {
		t.Errorf("fix without its variable: %+v", v)
	}
	if lines := f.log.Lines("stream rule fix not applied", "rule=telegram_reply_tail", "var=message_id"); len(lines) != 1 {
		t.Errorf("want a warning naming the variable, log:\n%s", f.log)
	}
}

// TestFixAfterCeiling: a fix needs no retry: with the retry spent, speech is still held
// for a rule with a fix, the answer is repaired; a repair still missing a rule is kept.
func TestFixAfterCeiling(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, []Rule{tailRule(), textRule("no_lorem", `(?i)lorem`), textRule("no_ipsum", `ipsum`)}, nil)
	_, m := f.eng.BeginMove(ctx, "c")
	m.SetVar("message_id", "9")
	if v := m.CheckAnswer(ctx, "lorem\n↩ #9"); !v.Discard {
		t.Fatalf("first miss: %+v", v)
	}
	if !m.textArmed() {
		t.Fatal("retry spent but a rule with a fix is armed: speech must be held")
	}
	v := m.CheckAnswer(ctx, "ok")
	if v.Discard || v.Fixed != "ok\n\n↩ #9" {
		t.Errorf("after the ceiling: %+v", v)
	}
	if m.textArmed() {
		t.Error("the fixed rule fired: nothing is armed with a fix or a retry")
	}

	// Retry spent, repaired, and still missing another rule: kept, repaired.
	_, m = f.eng.BeginMove(ctx, "d")
	m.SetVar("message_id", "3")
	m.CheckAnswer(ctx, "lorem\n↩ #3")
	v = m.CheckAnswer(ctx, "ipsum")
	if v.Discard || v.Fixed != "ipsum\n\n↩ #3" || !slices.Equal(v.Rules, []string{"no_ipsum", "telegram_reply_tail"}) {
		t.Errorf("kept with a repair: %+v", v)
	}
	var outcomes []string
	for _, fr := range m.Firings() {
		outcomes = append(outcomes, fr.Rule+":"+string(fr.Outcome))
	}
	if !slices.Equal(outcomes, []string{"no_lorem:corrected", "telegram_reply_tail:fixed", "no_ipsum:kept"}) {
		t.Errorf("firings %v", outcomes)
	}
}

// TestFixManyChatsAtOnce: one engine, many moves repairing at once; each repair carries its
// own move's variable, never another's.
func TestFixManyChatsAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []Rule{tailRule(), imageRule()}, nil)
	const n = 32
	errs := make(chan error, n)
	for i := range n {
		go func() {
			ctx := context.Background()
			id := fmt.Sprint(1000 + i)
			ctx, m := f.eng.BeginMove(ctx, "chat-"+id)
			m.SetVar("message_id", id)
			v := m.CheckAnswer(ctx, "see ![p](http://x/"+id+".png)")
			want := "see http://x/" + id + ".png\n\n↩ #" + id
			if v.Fixed != want || v.Discard {
				errs <- fmt.Errorf("move %s: verdict %+v, want %q", id, v, want)
				return
			}
			errs <- m.End(ctx, nil)
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	counts, err := f.store.CountFirings(context.Background())
	if err != nil || counts["telegram_reply_tail"] != n || counts["telegram_markdown_image"] != n {
		t.Errorf("counts %v %v", counts, err)
	}
}

// TestStatsCarrySeverity: a rule's severity and explanation are metadata the stats show.
func TestStatsCarrySeverity(t *testing.T) {
	t.Parallel()
	r := textRule("no_lorem", `(?i)lorem`)
	r.Severity, r.Explanation = "high", "Placeholder text reads as a broken product."
	f := newFixture(t, []Rule{r, textRule("plain", `x`)}, nil)
	st, err := f.eng.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Rules) != 2 || st.Rules[0].Severity != "high" || st.Rules[0].Explanation != r.Explanation ||
		st.Rules[1].Severity != "" || st.Rules[1].Explanation != "" {
		t.Errorf("stats %+v", st.Rules)
	}
}

// TestFixLeavesARepeatLimitedMissStanding: a repair that cures one rule and leaves a
// repeat-limited rule's miss standing must not count that rule fixed. The recheck of the
// repaired text used to claim the rule's firing a second time, lose to its own first
// claim, and take the lost claim for a cure: the answer kept "I cannot view the picture"
// as a repair, with the rule's outcome "fixed" and the rule silenced for the move.
func TestFixLeavesARepeatLimitedMissStanding(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, repeat := range []string{"once", "after:3"} {
		refusal := with(textRule("no_refusal", `cannot view`), func(r *Rule) { r.Repeat = repeat })
		f := newFixture(t, []Rule{tailRule(), refusal}, nil)
		_, m := f.eng.BeginMove(ctx, "c-"+repeat)
		m.SetVar("message_id", "9")
		v := m.CheckAnswer(ctx, "I cannot view the picture")
		if !v.Discard || !strings.Contains(v.Interrupt, `rule="no_refusal"`) || v.Fixed != "" {
			t.Fatalf("%s: the refusal stands after the tail's repair, so the answer is replayed: %+v", repeat, v)
		}
		// The replay misses again with the retry spent: the repair is kept, and the
		// refusal counts as missed again (a rule that fired is judged by the replay).
		v = m.CheckAnswer(ctx, "I cannot view the picture, sorry")
		if v.Discard || v.Fixed != "I cannot view the picture, sorry\n\n↩ #9" {
			t.Fatalf("%s: after the ceiling the repair is kept: %+v", repeat, v)
		}
		var outcomes []string
		for _, fr := range m.Firings() {
			outcomes = append(outcomes, fr.Rule+":"+string(fr.Outcome))
		}
		want := []string{"telegram_reply_tail:missed_again", "no_refusal:missed_again", "telegram_reply_tail:fixed"}
		if !slices.Equal(outcomes, want) {
			t.Errorf("%s: firings %v, want %v", repeat, outcomes, want)
		}

		// With replays off the first answer is kept repaired, and the refusal it still
		// holds is kept, not fixed.
		f = newFixture(t, []Rule{tailRule(), refusal}, &Config{MaxRetriesPerMove: -1})
		_, m = f.eng.BeginMove(ctx, "d-"+repeat)
		m.SetVar("message_id", "9")
		v = m.CheckAnswer(ctx, "I cannot view the picture")
		if v.Discard || v.Fixed != "I cannot view the picture\n\n↩ #9" {
			t.Fatalf("%s, no replays: %+v", repeat, v)
		}
		outcomes = outcomes[:0]
		for _, fr := range m.Firings() {
			outcomes = append(outcomes, fr.Rule+":"+string(fr.Outcome))
		}
		if want := []string{"telegram_reply_tail:fixed", "no_refusal:kept"}; !slices.Equal(outcomes, want) {
			t.Errorf("%s, no replays: firings %v, want %v", repeat, outcomes, want)
		}
	}
}
