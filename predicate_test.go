package streamrules

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// naiveHolds evaluates a tree the obvious way: every regex compiled and run on its own,
// children evaluated one by one. The engine's evaluation (one matcher per group, trees
// read from its verdicts) must agree with it on every tree and text.
func naiveHolds(p *Predicate, text string) bool {
	re := func(s string) bool { return regexp.MustCompile(s).MatchString(text) }
	switch {
	case p.ContainsRegex != "":
		return re(p.ContainsRegex)
	case p.NotContainsRegex != "":
		return !re(p.NotContainsRegex)
	case p.StartsWithRegex != "":
		// The definition: a match that begins at the start, or ends at the end, of the
		// whole text (so ^, \b and (?m) see the text around, as they would in a search).
		return re(`\A(?:` + p.StartsWithRegex + `)`)
	case p.EndsWithRegex != "":
		return re(`(?:` + p.EndsWithRegex + `)\z`)
	case p.MaxWords != nil:
		return len(strings.Fields(text)) <= *p.MaxWords
	case p.MinWords != nil:
		return len(strings.Fields(text)) >= *p.MinWords
	case p.MaxChars != nil:
		return utf8.RuneCountInString(text) <= *p.MaxChars
	case p.AllOf != nil:
		for i := range p.AllOf {
			if !naiveHolds(&p.AllOf[i], text) {
				return false
			}
		}
		return true
	case p.AnyOf != nil:
		for i := range p.AnyOf {
			if naiveHolds(&p.AnyOf[i], text) {
				return true
			}
		}
		return false
	}
	return !naiveHolds(p.Not, text)
}

func treeTextRule(p Predicate) Rule {
	return Rule{Name: "tree", Scope: ScopeText, Predicate: &p, Text: "Text of tree."}
}

func mustJudge(t testing.TB, r Rule) *Judge {
	t.Helper()
	j, err := NewJudge(r, testEnvs...)
	if err != nil {
		t.Fatalf("NewJudge(%+v): %v", r, err)
	}
	return j
}

// TestPredicateNodes: every node type, on texts where it holds and where it does not.
func TestPredicateNodes(t *testing.T) {
	t.Parallel()
	code := "Here is the code:\n```python\nprint(1)\n```\n"
	tests := []struct {
		name string
		p    Predicate
		text string
		want bool
	}{
		{"contains hit", Contains(`print\(\d\)`), code, true},
		{"contains miss", Contains(`console\.log`), code, false},
		{"not_contains hit", NotContains(`console\.log`), code, true},
		{"not_contains miss", NotContains(`print`), code, false},
		{"starts_with hit", StartsWith(`Here is`), code, true},
		{"starts_with only at the start", StartsWith(`the code`), code, false},
		{"starts_with alternation anchored as a whole", StartsWith(`code|Here`), code, true},
		{"ends_with hit", EndsWith("```\\s*"), code, true},
		{"ends_with $ inside", EndsWith("```\\s*$"), code, true},
		{"ends_with only at the end", EndsWith(`print\(1\)`), code, false},
		{"ends_with alternation anchored as a whole", EndsWith("nothing|```\n"), code, true},
		{"max_words at the bound", MaxWords(4), "one two three four", true},
		{"max_words over", MaxWords(3), "one two three four", false},
		{"max_words 0 on blank", MaxWords(0), " \n\t", true},
		{"min_words at the bound", MinWords(4), "one two\nthree\tfour", true},
		{"min_words under", MinWords(5), "one two three four", false},
		{"max_chars counts runes", MaxChars(4), "жжжж", true},
		{"max_chars over", MaxChars(3), "жжжж", false},
		{"all_of all", AllOf(Contains("python"), EndsWith("```\\s*")), code, true},
		{"all_of one fails", AllOf(Contains("python"), Contains("rust")), code, false},
		{"any_of one", AnyOf(Contains("rust"), Contains("python")), code, true},
		{"any_of none", AnyOf(Contains("rust"), Contains("go ")), code, false},
		{"not_", Not(Contains("rust")), code, true},
		{"not_ of true", Not(Contains("python")), code, false},
		{"nested", AllOf(Contains("```"), Not(AnyOf(MaxWords(2), Contains("(?i)ASSUMPTION:")))), code, true},
		{"case-insensitive flag", Contains("(?i)HERE IS"), code, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := naiveHolds(&tt.p, tt.text); got != tt.want {
				t.Fatalf("naive evaluator says %v, the table %v: fix the test", got, tt.want)
			}
			want := StatusPass
			if tt.want {
				want = StatusViolation
			}
			if got := mustJudge(t, treeTextRule(tt.p)).Check(tt.text, nil).Status; got != want {
				t.Errorf("%s on %q = %s, want %s", tt.p.String(), tt.text, got, want)
			}
			neg := treeTextRule(tt.p)
			neg.Negate = true
			if got := mustJudge(t, neg).Check(tt.text, nil).Status; (got == StatusViolation) == tt.want {
				t.Errorf("negated %s on %q = %s", tt.p.String(), tt.text, got)
			}
		})
	}
}

// TestAppliesWhen: outside applies_when a rule is not applicable, whatever its condition.
func TestAppliesWhen(t *testing.T) {
	t.Parallel()
	r := treeTextRule(AnyOf(EndsWith("```\\s*"), Contains("(?i)assumption:")))
	r.Negate = true
	a := Contains("```python")
	r.AppliesWhen = &a
	j := mustJudge(t, r)
	for text, want := range map[string]Status{
		"```python\nx = 1\n```":                StatusPass,
		"```python\nx = 1\n``` and then prose": StatusViolation,
		"```python\nx\n``` Assumption: valid":  StatusPass,
		"no code here at all":                  StatusNotApplicable,
	} {
		if got := j.Check(text, nil).Status; got != want {
			t.Errorf("Check(%q) = %s, want %s", text, got, want)
		}
	}
}

// TestPredicateValidation: each bad node is refused with the path of the node.
func TestPredicateValidation(t *testing.T) {
	t.Parallel()
	neg := -1
	tests := []struct {
		name  string
		edit  func(r *Rule)
		field string
	}{
		{"bad regex deep", func(r *Rule) {
			p := AllOf(Contains("a"), EndsWith("("))
			r.Predicate = &p
		}, "predicate.all_of[1].ends_with_regex"},
		{"empty node", func(r *Rule) { r.Predicate = &Predicate{} }, "predicate"},
		{"two keys", func(r *Rule) { r.Predicate = &Predicate{ContainsRegex: "a", EndsWithRegex: "b"} }, "predicate"},
		{"empty all_of", func(r *Rule) { r.Predicate = &Predicate{AllOf: []Predicate{}} }, "predicate.all_of"},
		{"empty node in any_of", func(r *Rule) { p := AnyOf(Contains("a"), Predicate{}); r.Predicate = &p }, "predicate.any_of[1]"},
		{"negative count", func(r *Rule) { r.Predicate = &Predicate{MaxWords: &neg} }, "predicate.max_words"},
		{"not_ with bad child", func(r *Rule) { p := Not(Contains(`(?!x)`)); r.Predicate = &p }, "predicate.not_.contains_regex"},
		{"applies_when bad", func(r *Rule) { p := AnyOf(Contains("a"), StartsWith(`\1`)); r.AppliesWhen = &p }, "applies_when.any_of[1].starts_with_regex"},
		{"condition and predicate", func(r *Rule) { r.Condition = "x" }, "predicate"},
		{"too deep", func(r *Rule) {
			p := Contains("x")
			for range MaxPredicateDepth {
				p = Not(p)
			}
			r.Predicate = &p
		}, "predicate.not_.not_.not_.not_.not_.not_.not_.not_"},
		{"too many atoms", func(r *Rule) {
			kids := make([]Predicate, MaxPredicateNodes+1)
			for i := range kids {
				kids[i] = Contains("x")
			}
			p := AllOf(kids...)
			r.Predicate = &p
		}, "predicate.all_of[64]"}, // the 65th atom: all_of itself is not counted
		{"too many atoms under combinators", func(r *Rule) {
			kids := make([]Predicate, MaxPredicateNodes+1)
			for i := range kids {
				kids[i] = Not(AnyOf(Contains("x")))
			}
			p := AllOf(kids...)
			r.Predicate = &p
		}, "predicate.all_of[64].not_.any_of[0]"},
		{"over-long regex", func(r *Rule) { p := Contains(strings.Repeat("a", MaxConditionBytes+1)); r.Predicate = &p }, "predicate.contains_regex"},
		{"field on a text rule", func(r *Rule) { r.Field = "a.b" }, "field"},
		{"severity", func(r *Rule) { r.Severity = "critical" }, "severity"},
		{"explanation too long", func(r *Rule) { r.Explanation = strings.Repeat("x", MaxExplanationChars+1) }, "explanation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := treeTextRule(Contains("ok"))
			tt.edit(&r)
			r.Normalize()
			err := Validate(&r, testEnvs)
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.field || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("Validate = %v, want a ValidationError on %s", err, tt.field)
			}
		})
	}
	// negate is fine with a predicate and no condition.
	r := treeTextRule(Contains("ok"))
	r.Negate = true
	r.Normalize()
	if err := Validate(&r, testEnvs); err != nil {
		t.Errorf("negated predicate: %v", err)
	}
}

// TestPredicateCountsAtoms: MaxPredicateNodes counts the leaves alone. 64 word atoms,
// each under combinators (over 150 nodes), validate, run as one alternation (flatAny: an
// any_of of any_of, all_of of one, not_ of not_), and judge as the naive tree does; a
// 65th atom is refused (TestPredicateValidation).
func TestPredicateCountsAtoms(t *testing.T) {
	t.Parallel()
	kids := make([]Predicate, MaxPredicateNodes)
	for i := range kids {
		w := Contains(fmt.Sprintf(`\bw%dx\b`, i))
		switch i % 3 {
		case 0:
			kids[i] = AllOf(AnyOf(w))
		case 1:
			kids[i] = Not(Not(w))
		default:
			kids[i] = AnyOf(AllOf(w))
		}
	}
	p := AnyOf(AnyOf(kids[:32]...), AllOf(AnyOf(kids[32:]...)))
	r := treeTextRule(p)
	r.Normalize()
	if err := Validate(&r, nil); err != nil {
		t.Fatalf("64 atoms under combinators: %v", err)
	}
	j := mustJudge(t, r)
	if n := len(j.match.as); n != 1 {
		t.Errorf("the tree's matcher runs %d patterns, want 1", n)
	}
	for _, text := range []string{"a w63x here", "w7x", "W33X", "w64x and w7xx", ""} {
		if got := j.Check(text, nil).Status == StatusViolation; got != naiveHolds(&p, text) {
			t.Errorf("%q: fired %v, the naive tree %v", text, got, !got)
		}
	}
}

// TestRuleJSONRoundTrip: every field beyond the plain condition (predicate, applies_when,
// field, fix, severity, explanation) survives Marshal → Unmarshal exactly, and the wire form
// spells each as the rule files and tools do.
func TestRuleJSONRoundTrip(t *testing.T) {
	t.Parallel()
	n := 800
	r := Rule{
		Name: "end_with_runnable_or_assumption", Scope: ScopeText, Negate: true, Text: "End code cleanly.",
		Mode:        ModeInterrupt,
		Predicate:   &Predicate{AllOf: []Predicate{AnyOf(EndsWith("```\\s*"), Contains("(?i)assumption:")), {MaxWords: &n}}},
		AppliesWhen: &Predicate{ContainsRegex: "```python"},
		Fix:         &Fix{ReplaceRegex: &ReplaceRegex{Pattern: `!\[[^\]]*\]\(([^)\s]+)\)`, With: "$1 ↩ #{{message_id}}"}},
		Severity:    "medium", Explanation: "Code must end in a fence or an assumption.",
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"predicate":{"all_of":[{"any_of":[{"ends_with_regex":`, `"applies_when":{"contains_regex":"` + "```python" + `"}`,
		`"fix":{"replace_regex":{"pattern":`, `"with":"$1 ↩ #{{message_id}}"`, `"severity":"medium"`, `"explanation":"Code must`, `"enabled":true`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("wire form lacks %s:\n%s", want, data)
		}
	}
	var back Rule
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Errorf("round trip\n%+v\nwant\n%+v", back, r)
	}
	again, _ := json.Marshal(back)
	if string(again) != string(data) {
		t.Errorf("second marshal differs:\n%s\n%s", again, data)
	}
	tool := Rule{Name: "t", Scope: "tool:patch_file", Field: "edits.new_string", Condition: "TODO", Text: "x"}
	data, _ = json.Marshal(tool)
	if !strings.Contains(string(data), `"field":"edits.new_string"`) {
		t.Errorf("field not on the wire: %s", data)
	}
	// A rule without those fields has none of their keys.
	data, _ = json.Marshal(goodRule())
	for _, k := range []string{"predicate", "applies_when", "field", "fix", "severity", "explanation"} {
		if strings.Contains(string(data), `"`+k+`"`) {
			t.Errorf("a plain rule's JSON carries %q: %s", k, data)
		}
	}
}
