package multimatch

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/streamrules/streamrules/internal/regexgen"
)

// TestRandomRegexps compares Set.Match with regexp on random patterns built
// from the constructs that matter to the literal extraction.
func TestRandomRegexps(t *testing.T) {
	iters := 3000
	if testing.Short() || raceEnabled {
		iters = 300
	}
	seed := uint64(42)
	if v, err := strconv.Atoi(os.Getenv("MULTIMATCH_RANDOM_ITERS")); err == nil {
		iters, seed = v, uint64(time.Now().UnixNano())
		t.Logf("seed %d", seed)
	}
	r := rand.New(rand.NewPCG(seed, 43))
	checked, matched := 0, 0
	for it := 0; it < iters; it++ {
		var pats []string
		var res []*regexp.Regexp
		for n := 1 + r.IntN(3); len(pats) < n; {
			p := regexgen.Pattern(r, 0)
			if r.IntN(3) == 0 {
				p = "(?i)" + p
			}
			re, err := regexp.Compile(p)
			if err != nil {
				continue
			}
			pats = append(pats, p)
			res = append(res, re)
		}
		set, err := New(pats)
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 12; k++ {
			s := sample(r, mustParse(pats[r.IntN(len(pats))]).Simplify(), 0)
			if k%3 == 1 {
				s = mutate(r, s)
			}
			text := []string{s, "x " + s + " y", "\n" + s + "\n", "é" + s + "\xff"}[k%4]
			want := naiveMatch(res, text)
			got := set.Match(text, nil)
			if !slices.Equal(got, want) {
				var g []string
				for _, p := range pats {
					g = append(g, renderGroups(t, p))
				}
				t.Fatalf("patterns %q text %q: got %v want %v\ngroups %s", pats, text, got, want, fmt.Sprint(g))
			}
			checked++
			matched += len(want)
		}
	}
	t.Logf("%d texts checked, %d matches", checked, matched)
}
