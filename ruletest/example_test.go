package ruletest_test

import (
	"fmt"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/ruletest"
)

func ExampleRun() {
	rules := []streamrules.Rule{{
		Name: "no_lorem", Scope: streamrules.ScopeText, Condition: "(?i)lorem ipsum",
		Text: "Never send placeholder text.",
		Tests: &streamrules.RuleTests{
			Fires:  []streamrules.Example{{Text: "Lorem ipsum dolor."}},
			Passes: []streamrules.Example{{Text: "A real answer."}, {Text: "Here is the lorem ipsum you asked for."}},
		},
	}}
	rep := ruletest.Run(rules)
	examples, failed, _ := rep.Counts()
	fmt.Printf("%d examples, %d failed\n", examples, failed)
	for _, rr := range rep.Rules {
		for _, res := range rr.Failed() {
			fmt.Println(rr.Rule, res)
		}
	}
	// Output:
	// 3 examples, 1 failed
	// no_lorem tests.passes[1] "Here is the lorem ipsum you asked for.": must pass, but it fires: the rule matched "lorem ipsum" at bytes 12-23
}
