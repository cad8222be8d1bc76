package rulesdb_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/ruletest"
	"github.com/streamrules/streamrules/seeds"
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

// TestSeedWave5Tests: the calibration wave that gives the seeds their tests (seed
// version 5) rewrites the seeded rules nobody edited, which then carry the shipped
// tests, and leaves a rule the master edited as the master left it; on both dialects.
func TestSeedWave5Tests(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		shipped := defaultSeeds(t)
		if shipped.Version < 5 {
			t.Fatalf("shipped seed version %d, want 5 or later", shipped.Version)
		}
		v4 := seeds.Set{Version: 4}
		for _, r := range shipped.Rules {
			r.Tests = nil
			v4.Rules = append(v4.Rules, r)
		}
		s := open(t, dsn, &rulesdb.Config{Seed: &v4})
		edited := ruleNamed(t, s, "telegram_reply_tail")
		if edited.Tests != nil {
			t.Fatalf("version 4 seeded tests: %+v", edited.Tests)
		}
		edited.Text += " Always."
		if _, err := s.UpdateRule(ctx, edited.Name, edited); err != nil {
			t.Fatal(err)
		}
		rep, err := s.Seed(ctx, shipped)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Applied || len(rep.Updated) != len(shipped.Rules)-1 || !slices.Equal(rep.Kept, []string{"telegram_reply_tail"}) {
			t.Errorf("report %+v, want every rule updated but the edited one", rep)
		}
		for _, want := range shipped.Rules {
			got := ruleNamed(t, s, want.Name)
			switch {
			case want.Name == "telegram_reply_tail":
				if got.Tests != nil || got.Text != edited.Text {
					t.Errorf("the edited rule was rewritten: %+v", got)
				}
			case !reflect.DeepEqual(got.Tests, want.Tests):
				t.Errorf("%s: tests %+v, want %+v", want.Name, got.Tests, want.Tests)
			}
		}
		// What the store holds is what the judge agrees with.
		rules, err := s.ListRules(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if rep := ruletest.Run(rules, s.Environments()...); !rep.OK() {
			t.Errorf("the stored seeds fail their tests: %+v", rep)
		}
	})
}
