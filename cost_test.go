package streamrules

import "testing"

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
