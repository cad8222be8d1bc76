package rulewalk

import "github.com/streamrules/streamrules"

// RichRule returns a valid, normalized text rule with every text field a rule has in use:
// each kind of predicate node, applies_when, a replace fix, the metadata. Walked with
// Strings, it reaches every string field of Rule.
func RichRule() streamrules.Rule {
	tree := streamrules.AllOf(
		streamrules.Contains("a"), streamrules.NotContains("b"), streamrules.StartsWith("c"), streamrules.EndsWith("d"),
		streamrules.InputContains("e"), streamrules.InputNotContains("f"),
		streamrules.AnyOf(streamrules.ToolCalled("t1"), streamrules.ToolSucceeded("t2"), streamrules.ToolFailed("t3"),
			streamrules.Predicate{EditedUnchecked: &streamrules.EditedUnchecked{Edits: []string{"write_file"}, Checks: []string{"run_tests"}}}),
		streamrules.Not(streamrules.MaxWords(30)),
	)
	applies := streamrules.AnyOf(streamrules.InputContains("z"), streamrules.ToolCalled("t4"))
	r := streamrules.Rule{
		Name: "rich_rule", Scope: streamrules.ScopeText, Predicate: &tree, AppliesWhen: &applies,
		When: []string{"telegram"}, Text: "Say it plainly.", Repeat: "once",
		Fix:      &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: `!a(b)`, With: "$1"}},
		Severity: "low", Explanation: "Why it matters.", Hint: "Plainly.",
	}
	input := "Say it."
	r.Tests = &streamrules.RuleTests{
		Fires:  []streamrules.Example{{Text: "A long answer."}},
		Passes: []streamrules.Example{{Text: "Plain.", Input: &input, Tools: []streamrules.ToolRun{{Tool: "t1", OK: true}}}},
	}
	r.Normalize()
	return r
}
