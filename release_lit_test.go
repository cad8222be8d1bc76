package streamrules

import "testing"

// TestPlanLit: which plain-text replace fixes stream (release_lit.go), each refusal a
// way a repair could make, break or hide a match.
func TestPlanLit(t *testing.T) {
	for _, tt := range []struct {
		pattern, with string
		ok            bool
	}{
		{`(?i)\baudio saved:[^\n]*`, "I could not make the audio: the speech tool did not run.", true},
		{`(?i)\baudio saved:[^\n↩]*`, "I could not make the audio.", true},
		{`\bab`, "xy", true},
		{`cd`, "<1>", true}, // one literal, no concatenation
		{`ab[a-z ]*`, "no.", true},
		{`\bab`, "xab", false},         // K in L
		{`ab`, "b", false},             // "a" before L makes K
		{`ab`, "", false},              // a deletion joins its sides
		{`abc`, "cx", false},           // K's tail is L's head
		{`(?i)\bkx`, "no.", false},     // K's first rune folds to the Kelvin sign, no word rune
		{`\bab[^\n]*`, "$1", false},    // a group: the normal form's business
		{`\bab[^\n]*`, "{{x}}", false}, // a variable
		{`\bab`, "x.", false},          // \b after L reads '.' where it read 'b'
		{`\bab[c]*`, "x", false},       // K's first rune outside C: K may follow a match
		{`a(?i)b`, "x", false},         // not one literal
		{`\bab\b`, "x", false},         // an assertion after K
	} {
		r := &Rule{Name: "r", Scope: ScopeText, Condition: "a", Fix: &Fix{ReplaceRegex: &ReplaceRegex{Pattern: tt.pattern, With: tt.with}}}
		if got := planLit(r) != nil; got != tt.ok {
			t.Errorf("%q → %q: streams %v, want %v", tt.pattern, tt.with, got, tt.ok)
		}
	}
}
