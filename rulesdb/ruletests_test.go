package rulesdb_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/streamrules/streamrules"
)

// testedRule is a text rule with both kinds of tests, one with context.
func testedRule() streamrules.Rule {
	input := "Send a voice message <please>."
	return streamrules.Rule{
		Name: "no_bare_done", Scope: streamrules.ScopeText, Condition: `^Done\.$`,
		Text: "Say what was done.",
		Tests: &streamrules.RuleTests{
			Fires: []streamrules.Example{{Text: "Done."}, {Text: "Done.", Input: &input, Tools: []streamrules.ToolRun{}}},
			Passes: []streamrules.Example{{Text: "Done: the file is saved & checked."},
				{Text: "Saved.", Tools: []streamrules.ToolRun{{Tool: "write_file", OK: true}, {Tool: "run_tests"}}}},
		},
	}
}

// TestRuleTestsRoundTrip: a rule's tests are written by create and update, read back
// exactly (an empty tool record stays a record), stored as the rule's own JSON, dropped
// by an update without them, and refused naming the example when bad; on both dialects.
func TestRuleTestsRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, nil)
		want := testedRule()
		if _, err := s.CreateRule(ctx, want); err != nil {
			t.Fatal(err)
		}
		got := ruleNamed(t, s, want.Name)
		if !reflect.DeepEqual(comparable(got), comparable(want)) {
			t.Errorf("read back\n%+v\nwant\n%+v", got.Tests, want.Tests)
		}
		if got.Tests.Fires[1].Tools == nil {
			t.Error("an empty tool record came back as none")
		}
		var col string
		if err := s.DB().Get(&col, s.DB().Rebind(`SELECT tests FROM stream_rules WHERE name = ?`), want.Name); err != nil {
			t.Fatal(err)
		}
		const stored = `{"fires":["Done.",{"text":"Done.","input":"Send a voice message <please>.","tools":[]}],` +
			`"passes":["Done: the file is saved & checked.",{"text":"Saved.","tools":[{"tool":"write_file","ok":true},{"tool":"run_tests","ok":false}]}]}`
		if col != stored {
			t.Errorf("tests column\n%s\nwant\n%s", col, stored)
		}

		want.Tests.Passes = want.Tests.Passes[:1]
		if _, err := s.UpdateRule(ctx, want.Name, want); err != nil {
			t.Fatal(err)
		}
		if got := ruleNamed(t, s, want.Name); !reflect.DeepEqual(comparable(got), comparable(want)) {
			t.Errorf("after update %+v, want %+v", got.Tests, want.Tests)
		}
		want.Tests = nil
		if _, err := s.UpdateRule(ctx, want.Name, want); err != nil {
			t.Fatal(err)
		}
		if got := ruleNamed(t, s, want.Name); got.Tests != nil {
			t.Errorf("after dropping the tests: %+v", got.Tests)
		}
		if err := s.DB().Get(&col, s.DB().Rebind(`SELECT tests FROM stream_rules WHERE name = ?`), want.Name); err != nil || col != "" {
			t.Errorf("tests column %q, %v; want ''", col, err)
		}

		bad := testedRule()
		bad.Name = "bad_tests"
		bad.Tests.Passes[0].Text = "a\x00b"
		_, err := s.CreateRule(ctx, bad)
		var ve *streamrules.ValidationError
		if !errors.As(err, &ve) || ve.Field != "tests.passes[0].text" {
			t.Errorf("CreateRule(NUL in an example) = %v, want a ValidationError on tests.passes[0].text", err)
		}
		if _, err := s.GetRule(ctx, bad.Name); !errors.Is(err, streamrules.ErrNotFound) {
			t.Errorf("the refused rule was written: %v", err)
		}
	})
}
