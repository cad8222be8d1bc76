package replay_test

import (
	"testing"

	"github.com/streamrules/streamrules"
)

func TestRunAppliesWhen(t *testing.T) {
	t.Parallel()
	applies := streamrules.StartsWith(`Q:`)
	rules := []streamrules.Rule{{Name: "no_x", Scope: "text", Condition: `x`, AppliesWhen: &applies, Text: "t"}}
	rep := run(t, rules, `{"chat":"c","answer":"Q: x"}
{"chat":"c","answer":"A: x"}
{"chat":"c","answer":"Q: y"}`, nil)
	r := rep.Rules[0]
	if r.InScope != 2 || r.NotApplicable != 1 || r.Fired != 1 {
		t.Errorf("%+v", r)
	}
}
