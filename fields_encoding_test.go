package streamrules_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/rulewalk"
)

// richRule is a valid text rule with every text field a rule has in use: each kind of
// predicate node, applies_when, a replace fix, the metadata.
func richRule() streamrules.Rule {
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
		When: []string{streamrules.EnvTelegram}, Text: "Say it plainly.", Repeat: "once",
		Fix:      &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: `!a(b)`, With: "$1"}},
		Severity: "low", Explanation: "Why it matters.", Hint: "Plainly.",
	}
	r.Normalize()
	return r
}

// TestValidateEncodingEveryField: a NUL byte or invalid UTF-8 in any string of a rule,
// found by walking the rule (so a field added later is covered), is refused by Validate
// with a *ValidationError naming that field by its wire path. PostgreSQL refuses such
// text with an error that names no field, and SQLite stores it.
func TestValidateEncodingEveryField(t *testing.T) {
	base := richRule()
	if err := streamrules.Validate(&base, nil); err != nil {
		t.Fatalf("the rich rule is invalid: %v", err)
	}
	var paths []string
	rulewalk.Strings(&base, func(path string, _ *string) { paths = append(paths, path) })
	if len(paths) < 30 {
		t.Fatalf("walked %d strings: %v", len(paths), paths)
	}
	for _, path := range paths {
		for _, bad := range []string{"a\x00b", "a\xffb", "\xc3"} {
			r := richRule()
			rulewalk.Strings(&r, func(p string, s *string) {
				if p == path {
					*s += bad
				}
			})
			want := path
			if strings.HasPrefix(path, "when[") {
				want = "when" // a list of names: the field is the list
			}
			var ve *streamrules.ValidationError
			err := streamrules.Validate(&r, nil)
			if !errors.As(err, &ve) || ve.Field != want {
				t.Errorf("%s += %q: %v, want a ValidationError on %s", path, bad, err, want)
			}
		}
	}
}
