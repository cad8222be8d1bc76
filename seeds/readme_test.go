package seeds_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

// The README's seeded-rule table has a row per seeded rule, and its speech column says
// what streamrules.SpeechHoldOf says of the rule: the same kind, and for a repair that
// streams around its matches, the same opener.
func TestReadmeSpeechColumn(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| (?:soft|hard|gate) \\| .* \\| ([^|]+) \\|$")
	cols := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		cols[m[1]] = strings.TrimSpace(m[2])
	}
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	phrase := map[streamrules.HoldKind]string{
		streamrules.HoldNone: "streams", streamrules.HoldTail: "holds a bounded tail", streamrules.HoldHead: "holds the answer's start",
		streamrules.HoldOpen: "holds while a", streamrules.HoldTour: "holds the whole tour",
	}
	for i := range set.Rules {
		r := &set.Rules[i]
		col, ok := cols[r.Name]
		if !ok {
			t.Errorf("the README's seeded table has no row for %s", r.Name)
			continue
		}
		h := streamrules.SpeechHoldOf(r)
		if !strings.HasPrefix(col, phrase[h.Kind]) && !strings.HasPrefix(col, strings.Replace(phrase[h.Kind], " a", " an", 1)) {
			t.Errorf("%s: the README says %q, validate says %q", r.Name, col, h)
		}
		if h.Kind == streamrules.HoldOpen && !strings.Contains(col, "`"+h.Opener+"`") {
			t.Errorf("%s: the README says %q, the opener is %q", r.Name, col, h.Opener)
		}
	}
	if len(cols) != len(set.Rules) {
		t.Errorf("the README's table has %d rows, the seeds %d rules", len(cols), len(set.Rules))
	}
}
