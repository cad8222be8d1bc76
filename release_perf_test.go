package streamrules

import (
	"bytes"
	"reflect"
	"regexp"
	"regexp/syntax"
	"testing"
	"unicode"

	"github.com/streamrules/streamrules/internal/rxprog"
)

// TestReleaseTemplateSplit: the tail's template split once expands as expand does.
func TestReleaseTemplateSplit(t *testing.T) {
	vars := map[string]string{"message_id": "4711", "a": "x{{y}}", "empty": ""}
	for _, tmpl := range []string{
		"", "plain", "\n\n↩ #{{message_id}}", "{{ message_id }}", "{{a}}{{a}} {{empty}}!",
		"{{message_id}", "{{missing}} and {{message_id}}", "{{message_id}} and {{missing}}",
		"{{{message_id}}}", "{{ }}", "a{{message_id}}b{{ a }}c",
	} {
		want, wantMissing := expand(tmpl, vars, nil)
		got, missing := splitTemplate(tmpl).expand(vars)
		if missing != wantMissing || got != want {
			t.Errorf("%q: got %q, %q; expand gives %q, %q", tmpl, got, missing, want, wantMissing)
		}
	}
}

// TestReleaseTrimRightSpace: the ASCII-first trim is bytes.TrimRightFunc with unicode.IsSpace.
func TestReleaseTrimRightSpace(t *testing.T) {
	for _, s := range []string{"", " ", "a", "a \t\n\v\f\r", "a\u00a0", "a \u0085 ", "\x1c", "a\x00", "é ", " \u2003\n"} {
		want := bytes.TrimRightFunc([]byte(s), unicode.IsSpace)
		if got := trimRightSpace([]byte(s)); !bytes.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", s, got, want)
		}
	}
}

// TestReleaseFirstBytes: every match of a pattern starts with a byte of its first-byte
// set, on texts made of the patterns' own runes and some others.
func TestReleaseFirstBytes(t *testing.T) {
	pats := []string{`!\[([^\]]*)\]\(([^)\s]+)\)`, `(?i)audio saved:[^\n↩]*`, `ab|[c-e]x|é+`, `(?i)k+`, `[^a]b`, `x*y`, `\bq`}
	texts := []string{"![a](b) !![](c) ![x](y z)", "Audio SAVED: x\n", "abcxdxexééé", "kK\u212ak", "ab bb \xffb éb", "xxy y", "q aq"}
	for _, pat := range pats {
		prog, err := syntax.Compile(mustParse(t, pat))
		if err != nil {
			t.Fatal(err)
		}
		set := rxprog.FirstBytes(prog)
		if set == nil {
			continue
		}
		re := regexp.MustCompile(pat)
		for _, text := range texts {
			for s := range len(text) {
				if loc := re.FindStringIndex(text[s:]); loc != nil && loc[0] == 0 && !set.Has(text[s]) {
					t.Errorf("%s: a match starts at %q[%d] (%q), not in the set", pat, text, s, text[s])
				}
				if set.None([]byte(text[s:s+1])) == set.Has(text[s]) {
					t.Errorf("%s: none disagrees with the set on %q", pat, text[s])
				}
			}
		}
	}
	if rxprog.FirstBytes(mustProg(t, `\bq`)) != nil || rxprog.FirstBytes(mustProg(t, `a*`)) != nil || rxprog.FirstBytes(mustProg(t, `.x`)) != nil {
		t.Error("an assertion, an empty match or any rune gave a set")
	}
}

func mustParse(t *testing.T, pat string) *syntax.Regexp {
	re, err := syntax.Parse(pat, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	return re.Simplify()
}

func mustProg(t *testing.T, pat string) *syntax.Prog {
	prog, err := syntax.Compile(mustParse(t, pat))
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

// TestReleaseFoldCache: a plan's cached fold is the fold made anew, for facts whose
// context atoms give every outcome (true, false, missing), in any order and again.
func TestReleaseFoldCache(t *testing.T) {
	r := &Rule{Name: "r", Predicate: &Predicate{AnyOf: []Predicate{
		{AllOf: []Predicate{{InputContainsRegex: `audio`}, {Not: &Predicate{ToolSucceeded: "speak"}}, {ContainsRegex: `saved`}}},
		{AllOf: []Predicate{{ToolCalled: "edit"}, {ContainsRegex: `done`}}},
	}}}
	facts := []*Facts{
		nil,
		{Input: "an audio, please", HasInput: true},
		{Input: "text", HasInput: true, HasTools: true},
		{Input: "audio", HasInput: true, HasTools: true, Tools: []ToolRun{{Tool: "speak", OK: true}}},
		{Input: "audio", HasInput: true, HasTools: true, Tools: []ToolRun{{Tool: "speak"}, {Tool: "edit", OK: true}}},
		{HasTools: true, Tools: []ToolRun{{Tool: "edit"}}},
	}
	p := planRelease(r)
	if len(p.ctx) != 3 {
		t.Fatalf("%d context atoms, want 3", len(p.ctx))
	}
	for round := range 2 {
		for i := range facts {
			f := facts[(i*5+round)%len(facts)]
			if got, want := p.foldContext(f), p.foldContextOn(f); !reflect.DeepEqual(got, want) {
				t.Errorf("facts %+v: cached %+v, made anew %+v", f, got, want)
			}
		}
	}
	if len(p.folds.m) < 4 {
		t.Errorf("%d trees cached, want one per outcome seen (at least 4)", len(p.folds.m))
	}
}
