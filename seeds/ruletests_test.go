package seeds_test

import (
	"testing"

	"github.com/streamrules/streamrules/ruletest"
	"github.com/streamrules/streamrules/seeds"
)

// TestSeedsCarryTests: every seeded rule has at least two examples that must fire it and
// two that must not (a rule with an empty condition, which fires on every call, has no
// passes), and the engine's judge agrees with all of them.
func TestSeedsCarryTests(t *testing.T) {
	t.Parallel()
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range set.Rules {
		if r.Tests == nil || len(r.Tests.Fires) < 2 {
			t.Errorf("%s: tests %+v, want at least two fires examples", r.Name, r.Tests)
			continue
		}
		if everything := r.Condition == "" && r.Predicate == nil && r.AppliesWhen == nil; everything {
			if len(r.Tests.Passes) != 0 {
				t.Errorf("%s fires on every target, yet has passes examples", r.Name)
			}
		} else if len(r.Tests.Passes) < 2 {
			t.Errorf("%s: %d passes examples, want at least two", r.Name, len(r.Tests.Passes))
		}
	}
	rep := ruletest.Run(set.Rules, set.Environments...)
	for _, rr := range rep.Rules {
		if rr.Err != nil {
			t.Errorf("%s: %v", rr.Rule, rr.Err)
		}
		for _, res := range rr.Failed() {
			t.Errorf("%s: %s", rr.Rule, res)
		}
	}
}
