package streamrules_test

import (
	"testing"

	"github.com/streamrules/streamrules"
)

// TestContextAtomString: every context atom prints as its wire name and operands, alone
// and inside a tree.
func TestContextAtomString(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		p    streamrules.Predicate
		want string
	}{
		{streamrules.InputContains("de(ploy)?"), `input_contains_regex("de(ploy)?")`},
		{streamrules.InputNotContains("x"), `input_not_contains_regex("x")`},
		{streamrules.ToolCalled("grep"), `tool_called("grep")`},
		{streamrules.ToolSucceeded("go_test"), `tool_succeeded("go_test")`},
		{streamrules.ToolFailed("deploy"), `tool_failed("deploy")`},
		{streamrules.EditedUncheckedBy([]string{"write"}, []string{"go_test"}), `edited_unchecked(edits=["write"], checks=["go_test"])`},
	} {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("String() = %s, want %s", got, tt.want)
		}
	}
	tree := streamrules.Predicate{AllOf: []streamrules.Predicate{streamrules.ToolSucceeded("a"), streamrules.ToolFailed("b")}}
	if got := tree.String(); got != `all_of(tool_succeeded("a"), tool_failed("b"))` {
		t.Errorf("tree String() = %s", got)
	}
}
