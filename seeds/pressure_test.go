package seeds_test

import (
	"fmt"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/lazydfa"
	"github.com/streamrules/streamrules/seeds"
)

// TestValidateUnderMemoryPressure: whether a rule is valid is a property of the rule.
// With the process's DFAs holding their memory limit (other engines' DFAs, filled here
// with real states until no new one fits), the shipped seeds still parse, and every seed
// rule gets the verdict it gets with memory to spare; so do the costly shapes near the
// bound. The explore that proves a DFA small once failed at the limit and refused
// destructive_shell as too costly.
func TestValidateUnderMemoryPressure(t *testing.T) {
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	rules := append([]streamrules.Rule(nil), set.Rules...)
	for i, p := range []string{
		`\b(?:\d[ -]?){13,16}\b`, `[a-fA-F0-9]{40}`, `(?i)\b(sgp_[a-fA-F0-9]{40}|[a-fA-F0-9]{40})\b`,
		`\b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))(?:[\x60'"\s;]|\\[nr]|$)`, `(a|aa){400}b`, `e\w{5}\d`,
	} {
		rules = append(rules, streamrules.Rule{Name: fmt.Sprintf("shape%d", i), Scope: streamrules.ScopeText, Condition: p, Text: "x"})
	}
	verdicts := func() []string {
		var out []string
		for _, r := range rules {
			r.Normalize()
			out = append(out, fmt.Sprint(streamrules.Validate(&r, seeds.Environments())))
		}
		return out
	}
	free := verdicts()
	// The verdicts themselves, not only their agreement: every seed and the wide-class
	// shapes validate; the card number and (a|aa){400}b are refused.
	for i, v := range free {
		refused := rules[i].Name == "shape0" || rules[i].Name == "shape4"
		if (v != "<nil>") != refused {
			t.Errorf("%s with memory to spare: %s", rules[i].Name, v)
		}
	}

	// Hold the limit: a limit just above what the process holds, then DFAs that build
	// states until the next does not fit.
	limit := lazydfa.MemoryHeld() + 256<<10
	old := lazydfa.SetMemoryLimit(limit)
	defer lazydfa.SetMemoryLimit(old)
	var hold []*lazydfa.DFA
	for i := 0; ; i++ {
		d, err := lazydfa.Compile(fmt.Sprintf(`(?i)q%d\w{0,12}\b.{0,40}z`, i))
		if err != nil {
			t.Fatal(err)
		}
		hold = append(hold, d)
		if _, ok := d.Match(fmt.Sprintf("q%d abcdefghijkl mnop qrstuv wxyz q%dab cd ef", i, i)); !ok {
			break // no room left for this one's states
		}
		if i > 100000 {
			t.Fatal("the DFAs never reached the memory limit")
		}
	}
	if held := lazydfa.MemoryHeld(); limit-held > 128<<10 {
		t.Fatalf("the DFAs hold %d of a %d-byte limit: more than half the room is free", held, limit)
	}
	if _, err := seeds.Default(); err != nil {
		t.Fatalf("seeds.Default at the memory limit: %v", err)
	}
	for i, v := range verdicts() {
		if v != free[i] {
			t.Errorf("%s at the memory limit: %s; with memory to spare: %s", rules[i].Name, v, free[i])
		}
	}
	if len(hold) == 0 {
		t.Fatal("nothing held")
	}
}
