package rulefile_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/rawjson"
	"github.com/streamrules/streamrules/internal/rulewalk"
	"github.com/streamrules/streamrules/rulefile"
	"github.com/streamrules/streamrules/seeds"
)

// nulOnly reports whether s has a NUL, is valid UTF-8 and has no other control: a value
// only the NUL makes bad, whatever the field.
func nulOnly(s string) bool {
	if strings.IndexByte(s, 0) < 0 || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r != 0 && (r < 0x20 || r == 0x7f) {
			return false
		}
	}
	return true
}

// hasBadText reports the first string of the set's rules with a NUL or invalid UTF-8.
func hasBadText(set rulefile.Set) string {
	bad := ""
	for i := range set.Rules {
		rulewalk.Strings(&set.Rules[i], func(path string, s *string) {
			if bad == "" && (strings.IndexByte(*s, 0) >= 0 || !utf8.ValidString(*s)) {
				bad = path
			}
		})
	}
	return bad
}

// FuzzFieldEncoding: one string field of a rule file, any of them (the rule is walked,
// so every field is a target), set to any value, in JSON and in YAML: a set Parse
// accepts holds no NUL and no invalid UTF-8 anywhere, and a NUL written as \u0000 is
// refused with the field named (the *streamrules.ValidationError of Validate).
func FuzzFieldEncoding(f *testing.F) {
	var n int
	base := rulewalk.RichRule()
	rulewalk.Strings(&base, func(string, *string) { n++ })
	for i := range n {
		f.Add(uint16(i), "a\x00b")
		f.Add(uint16(i), "a\xffb")
	}
	f.Add(uint16(0), "é\xc3")
	f.Fuzz(func(t *testing.T, index uint16, value string) {
		r := rulewalk.RichRule()
		want, i := "", 0
		rulewalk.Strings(&r, func(path string, s *string) {
			if i == int(index)%n {
				want, *s = path, "PLACEHOLDER_VALUE"
			}
			i++
		})
		data, err := rulefile.Marshal(rulefile.Set{Version: 1, Rules: []streamrules.Rule{r}}, rulefile.JSON)
		if err != nil {
			t.Fatal(err)
		}
		data = bytes.Replace(data, []byte(`"PLACEHOLDER_VALUE"`), []byte(rawjson.String(value)), 1)
		if strings.HasPrefix(want, "when[") {
			want = "when"
		}
		yamlPath := filepath.Join(t.TempDir(), "rules.yaml")
		if err := os.WriteFile(yamlPath, data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"json", "yaml"} {
			var set rulefile.Set
			if format == "json" {
				set, err = rulefile.Parse(data, seeds.Environments()...)
			} else {
				set, err = rulefile.Load(yamlPath, seeds.Environments()...) // JSON is YAML: the YAML reader's path
			}
			if err == nil {
				if bad := hasBadText(set); bad != "" {
					t.Fatalf("%s: Parse accepted a NUL or invalid UTF-8 in %s: %q", format, bad, value)
				}
				continue
			}
			var ve *streamrules.ValidationError
			if nulOnly(value) && (!errors.As(err, &ve) || ve.Field != want) {
				t.Fatalf("%s: a NUL in %s (%q) was refused, but not for it: %v", format, want, value, err)
			}
		}
	})
}
