// Package ruletest runs a rule's tests: the examples in its `tests` field that must fire
// it and must not, judged by the engine's own judge (streamrules.NewJudge), the one
// `validate` and `replay` use. `streamrules test FILE…` is this package on rule files; a
// console runs it on the rules of a store.
//
//	rep := ruletest.Run(set.Rules)
//	for _, rr := range rep.Rules {
//		for _, res := range rr.Failed() {
//			fmt.Println(rr.Rule, res) // no_lorem tests.passes[0] "Lorem ipsum.": must pass, but it fires: …
//		}
//	}
//
// # Examples
//
// A rule file writes them beside the rule's other fields:
//
//	tests:
//	  fires: ["Lorem ipsum dolor."]
//	  passes: ["A real answer."]
//
// For a text rule an example is an answer; for a tool rule it is the call's arguments,
// as the model sends them ('{"path":"/etc/hosts"}'), walked by the rule's field and read
// as shell commands when the rule says so, as in a move. A rule that reads the move (the
// context atoms: input_contains_regex, tool_succeeded, edited_unchecked, …) needs the
// move's context, which an example gives in its object form:
//
//	fires:
//	  - text: Done.
//	    input: Fix the failing test.
//	    tools: [{tool: write_file, ok: true}]
//
// Without input or tools, an example gives no context, and an atom that needs it is not
// applicable: a fires example then fails, saying so.
//
// # Environments
//
// An example is judged as in a move where every environment the rule's `when` names
// holds: a rule with when: [telegram] is tested as armed in a Telegram move. The judge
// does not look at environments otherwise (an example cannot say "outside Telegram");
// test that a rule stays quiet elsewhere in a replay. Disabled and shadow rules are
// tested as if live.
//
// # Verdicts
//
// A fires example must be a violation. A passes example must not be: a pass, or not
// applicable (outside the rule's applies_when, or context the rule needs is not given).
// A rule the judge refuses (invalid, or a shell rule without a shell reader) has
// RuleReport.Err and no results. Run costs one compile per rule and one check per
// example; it is safe to call concurrently.
package ruletest
