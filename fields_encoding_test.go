package streamrules_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/rulewalk"
	"github.com/streamrules/streamrules/seeds"
)

// TestValidateEncodingEveryField: a NUL byte or invalid UTF-8 in any string of a rule,
// found by walking the rule (so a field added later is covered), is refused by Validate
// with a *ValidationError naming that field by its wire path. PostgreSQL refuses such
// text with an error that names no field, and SQLite stores it.
func TestValidateEncodingEveryField(t *testing.T) {
	base := rulewalk.RichRule()
	if err := streamrules.Validate(&base, seeds.Environments()); err != nil {
		t.Fatalf("the rich rule is invalid: %v", err)
	}
	var paths []string
	rulewalk.Strings(&base, func(path string, _ *string) { paths = append(paths, path) })
	if len(paths) < 30 {
		t.Fatalf("walked %d strings: %v", len(paths), paths)
	}
	for _, path := range paths {
		for _, bad := range []string{"a\x00b", "a\xffb", "\xc3"} {
			r := rulewalk.RichRule()
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
			err := streamrules.Validate(&r, seeds.Environments())
			if !errors.As(err, &ve) || ve.Field != want {
				t.Errorf("%s += %q: %v, want a ValidationError on %s", path, bad, err, want)
			}
		}
	}
}
