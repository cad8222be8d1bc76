package streamrules

import (
	"strings"
	"testing"
)

// TestCostBoundAdmitsWordLists: a list of words, the commonest rule there is, keeps no
// thread alive between its literals and validates however many branches it has.
func TestCostBoundAdmitsWordLists(t *testing.T) {
	t.Parallel()
	for _, p := range []string{
		`(?i)\b(damn|hell|crap|bloody|bugger|bollocks|arse|wanker|tosser|git)\b`,
		`(?i)\b(ignore (all )?previous instructions|disregard the system prompt|you are now DAN|jailbreak)\b`,
	} {
		if err := checkRegex("condition", p); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
}

// TestRefusalsTeach: a refused regex is told why in terms of what it wrote: the construct
// that costs (its largest repetition), what it costs (a DFA's construction in ms, or
// regexp's threads), and what lowers it.
func TestRefusalsTeach(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, pattern string
		want          []string
	}{
		{"construction", `(a|aa){400}b`, []string{"DFA of 410 states", "construction costs about", "(a(?:(?:)|a)){400}", "a smaller count"}},
		{"threads", `\b(?:\d[ -]?){13,16}\b`, []string{"no small DFA", "15 threads", "(?:[0-9][ \\-]?){13,16}", "a shorter count"}},
		{"wide", `e\w{200}\d`, []string{"[0-9A-Z_a-z]{200}", "at most 128 may match letters or spaces unless the pattern's DFA is small"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := checkRegex("condition", tt.pattern)
			if err == nil {
				t.Fatalf("%q validated", tt.pattern)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q: %v\nwant it to say %q", tt.pattern, err, w)
				}
			}
		})
	}
}
