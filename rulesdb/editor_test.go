package rulesdb_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulesdb"
)

func TestCRUD(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, &rulesdb.Config{Environments: []string{"prod"}})
		var notified int
		var mu sync.Mutex
		cancel := s.Subscribe(func() { mu.Lock(); notified++; mu.Unlock() })
		defer cancel()
		count := func() int { mu.Lock(); defer mu.Unlock(); return notified }

		r, err := s.CreateRule(ctx, streamrules.Rule{
			Name: " deploy_ticket ", Scope: "tool:deploy", Condition: `"env":"prod"`,
			When: []string{"prod", "master", "prod"}, Text: " Deploys to prod need a ticket number. ",
		})
		if err != nil {
			t.Fatal(err)
		}
		if r.ID == 0 || r.Name != "deploy_ticket" || r.Mode != streamrules.ModeRemind || !reflect.DeepEqual(r.When, []string{"master", "prod"}) ||
			r.CreatedAt.IsZero() || !r.CreatedAt.Equal(r.UpdatedAt) || r.Text != "Deploys to prod need a ticket number." {
			t.Errorf("created %+v", r)
		}
		if count() < 1 { // synchronously; on PostgreSQL the NOTIFY may add one more
			t.Errorf("create did not notify")
		}
		got := ruleNamed(t, s, "deploy_ticket")
		if !reflect.DeepEqual(got, r) {
			t.Errorf("GetRule = %+v\nwant      %+v", got, r)
		}

		if _, err := s.CreateRule(ctx, r); !errors.Is(err, streamrules.ErrExists) {
			t.Errorf("duplicate create: %v", err)
		}
		if _, err := s.GetRule(ctx, "nope"); !errors.Is(err, streamrules.ErrNotFound) {
			t.Errorf("GetRule(nope): %v", err)
		}

		// Edits bump updated_at strictly, even several within one clock tick.
		prev := r
		for i := range 5 {
			r.Text = fmt.Sprintf("Deploys to prod need a ticket number (%d).", i)
			upd, err := s.UpdateRule(ctx, "deploy_ticket", r)
			if err != nil {
				t.Fatal(err)
			}
			if !upd.UpdatedAt.After(prev.UpdatedAt) || !upd.CreatedAt.Equal(prev.CreatedAt) || upd.ID != prev.ID {
				t.Fatalf("update %d: %v -> %v", i, prev.UpdatedAt, upd.UpdatedAt)
			}
			if stored := ruleNamed(t, s, "deploy_ticket"); !stored.UpdatedAt.Equal(upd.UpdatedAt) || stored.Text != r.Text {
				t.Fatalf("stored %+v, returned %+v", stored, upd)
			}
			prev = upd
		}

		// Disabled rules are listed but not loaded.
		r.Disabled = true
		if _, err := s.UpdateRule(ctx, "deploy_ticket", r); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateRule(ctx, streamrules.Rule{Name: "b_rule", Scope: "text", Condition: "x", Text: "no x"}); err != nil {
			t.Fatal(err)
		}
		list, _ := s.ListRules(ctx)
		loaded, _ := s.LoadRules(ctx)
		// LoadRules returns the disabled rule too, marked (the engine counts it and skips it).
		if strings.Join(names(list), ",") != "b_rule,deploy_ticket" || strings.Join(names(loaded), ",") != "b_rule,deploy_ticket" || !loaded[1].Disabled {
			t.Errorf("list %v, loaded %v", names(list), names(loaded))
		}

		// Rename; a rename onto a taken name is ErrExists.
		r.Name = "prod_deploy_ticket"
		if _, err := s.UpdateRule(ctx, "deploy_ticket", r); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetRule(ctx, "deploy_ticket"); !errors.Is(err, streamrules.ErrNotFound) {
			t.Errorf("old name still there: %v", err)
		}
		r.Name = "b_rule"
		if _, err := s.UpdateRule(ctx, "prod_deploy_ticket", r); !errors.Is(err, streamrules.ErrExists) {
			t.Errorf("rename onto b_rule: %v", err)
		}
		if _, err := s.UpdateRule(ctx, "nope", r); !errors.Is(err, streamrules.ErrNotFound) {
			t.Errorf("update nope: %v", err)
		}

		if err := s.DeleteRule(ctx, "prod_deploy_ticket"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteRule(ctx, "prod_deploy_ticket"); !errors.Is(err, streamrules.ErrNotFound) {
			t.Errorf("second delete: %v", err)
		}
		list, _ = s.ListRules(ctx)
		if strings.Join(names(list), ",") != "b_rule" {
			t.Errorf("after delete: %v", names(list))
		}
	})
}

// TestValidationRejected: every bad input of DESIGN.md's list is rejected by create and
// by edit, with the field named, and nothing is written.
func TestValidationRejected(t *testing.T) {
	good := streamrules.Rule{Name: "tail_rule", Scope: "text", Condition: `↩ #\d+\s*$`, Negate: true,
		When: []string{"telegram"}, Text: "End with the tail."}
	cases := []struct {
		name  string
		edit  func(r *streamrules.Rule)
		field string
	}{
		{"invalid regex", func(r *streamrules.Rule) { r.Condition = `(unclosed` }, "condition"},
		{"invalid regex lookahead", func(r *streamrules.Rule) { r.Condition = `foo(?!bar)` }, "condition"},
		{"unknown scope", func(r *streamrules.Rule) { r.Scope = "thought" }, "scope"},
		{"empty tool scope", func(r *streamrules.Rule) { r.Scope = "tool:" }, "scope"},
		{"scope/mode mismatch", func(r *streamrules.Rule) { r.Mode = streamrules.ModeRemind }, "mode"},
		{"tool scope with an unknown mode", func(r *streamrules.Rule) { r.Scope, r.Mode = "tool:shell", "block" }, "mode"},
		{"shell on a text rule", func(r *streamrules.Rule) { r.Shell = true }, "shell"},
		{"unknown when", func(r *streamrules.Rule) { r.When = []string{"telegram", "whatsapp"} }, "when"},
		{"text over 400", func(r *streamrules.Rule) { r.Text = strings.Repeat("ü", 401) }, "text"},
		{"empty text", func(r *streamrules.Rule) { r.Text = "   " }, "text"},
		{"bad repeat", func(r *streamrules.Rule) { r.Repeat = "twice" }, "repeat"},
		{"after:0", func(r *streamrules.Rule) { r.Repeat = "after:0" }, "repeat"},
		{"bad name", func(r *streamrules.Rule) { r.Name = "Tail-Rule" }, "name"},
		{"empty name", func(r *streamrules.Rule) { r.Name = "" }, "name"},
		{"negate without condition", func(r *streamrules.Rule) { r.Condition = "" }, "negate"},
		{"duplicate name", func(r *streamrules.Rule) { r.Name = "other_rule" }, "name"},
		// NUL and invalid UTF-8: PostgreSQL would refuse them naming no field, SQLite would
		// store them; Validate names the field for both.
		{"NUL in name", func(r *streamrules.Rule) { r.Name = "tail\x00rule" }, "name"},
		{"NUL in scope", func(r *streamrules.Rule) { r.Scope = "tool:sh\x00" }, "scope"},
		{"NUL in condition", func(r *streamrules.Rule) { r.Condition = "x\x00" }, "condition"},
		{"NUL in text", func(r *streamrules.Rule) { r.Text = "End\x00." }, "text"},
		{"NUL in when", func(r *streamrules.Rule) { r.When = []string{"tele\x00gram"} }, "when"},
		{"NUL in repeat", func(r *streamrules.Rule) { r.Repeat = "once\x00" }, "repeat"},
		{"bad UTF-8 in condition", func(r *streamrules.Rule) { r.Condition = "x\xff" }, "condition"},
		{"bad UTF-8 in text", func(r *streamrules.Rule) { r.Text = "End\xfe." }, "text"},
		{"bad UTF-8 in when", func(r *streamrules.Rule) { r.When = []string{"\xfftelegram"} }, "when"},
		// The metadata, the fix and the trees are text fields too.
		{"NUL in hint", func(r *streamrules.Rule) { r.Hint = "a\x00b" }, "hint"},
		{"NUL in explanation", func(r *streamrules.Rule) { r.Explanation = "a\x00b" }, "explanation"},
		{"NUL in fix append", func(r *streamrules.Rule) {
			r.Negate, r.Condition = false, "x"
			r.Fix = &streamrules.Fix{AppendIfMissing: "a\x00b"}
		}, "fix.append_if_missing"},
		{"NUL in fix prepend", func(r *streamrules.Rule) {
			r.Negate, r.Condition = false, "x"
			r.Fix = &streamrules.Fix{PrependIfMissing: "a\x00b"}
		}, "fix.prepend_if_missing"},
		{"NUL in fix pattern", func(r *streamrules.Rule) {
			r.Negate, r.Condition = false, "x"
			r.Fix = &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: "x\x00", With: "y"}}
		}, "fix.replace_regex.pattern"},
		{"NUL in fix with", func(r *streamrules.Rule) {
			r.Negate, r.Condition = false, "x"
			r.Fix = &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: "x", With: "a\x00b"}}
		}, "fix.replace_regex.with"},
		{"NUL in a predicate atom", func(r *streamrules.Rule) {
			r.Condition = ""
			p := streamrules.AllOf(streamrules.Contains("a"), streamrules.Not(streamrules.Contains("b\x00")))
			r.Predicate = &p
		}, "predicate.all_of[1].not_.contains_regex"},
		{"NUL in applies_when", func(r *streamrules.Rule) {
			p := streamrules.InputContains("a\x00")
			r.AppliesWhen = &p
		}, "applies_when.input_contains_regex"},
		{"bad UTF-8 in fix append", func(r *streamrules.Rule) {
			r.Negate, r.Condition = false, "x"
			r.Fix = &streamrules.Fix{AppendIfMissing: "a\xffb"}
		}, "fix.append_if_missing"},
		{"bad UTF-8 in fix prepend", func(r *streamrules.Rule) {
			r.Negate, r.Condition = false, "x"
			r.Fix = &streamrules.Fix{PrependIfMissing: "a\xffb"}
		}, "fix.prepend_if_missing"},
		{"bad UTF-8 in fix with", func(r *streamrules.Rule) {
			r.Negate, r.Condition = false, "x"
			r.Fix = &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: "x", With: "a\xffb"}}
		}, "fix.replace_regex.with"},
	}
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn, nil)
		for _, r := range []streamrules.Rule{good, {Name: "other_rule", Scope: "tool:shell", Text: "Careful."}} {
			if _, err := s.CreateRule(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		before, _ := s.ListRules(ctx)
		for _, c := range cases {
			bad := good
			bad.When = append([]string(nil), good.When...)
			c.edit(&bad)
			check := func(op string, err error) {
				t.Helper()
				if c.name == "duplicate name" && !errors.Is(err, streamrules.ErrExists) {
					t.Errorf("%s %s: %v, want ErrExists", op, c.name, err)
				}
				var ve *streamrules.ValidationError
				if !errors.As(err, &ve) || ve.Field != c.field || !strings.Contains(err.Error(), c.field) {
					t.Errorf("%s %s: %v, want a ValidationError on %q", op, c.name, err, c.field)
				}
			}
			_, err := s.CreateRule(ctx, bad)
			check("create", err)
			_, err = s.UpdateRule(ctx, "tail_rule", bad)
			check("update", err)
		}
		after, _ := s.ListRules(ctx)
		if !reflect.DeepEqual(before, after) {
			t.Errorf("something was written:\nbefore %+v\nafter  %+v", before, after)
		}
	})
}
