package lazydfa

import (
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/internal/regexgen"
)

// wideAtoms are the shapes of secret-scanning and PII rules that a DFA explored whole lets
// in: counted repetitions over wide classes, lazy ones, word boundaries, line anchors.
var wideAtoms = []string{
	`[\w.=-]{3,12}`, `[a-f0-9]{8}`, `\w{2,6}?`, `[\s\S]{4,}?`, `\b[a-z0-9]{5}\b`, `(?m)^\d{2,4}$`,
	`(?i)key[ \t]{0,3}`, `(?:\d[ -]?){3,5}`, `[^\s"]{2,9}`, `\B\d{3}`,
}

// TestRandomOwned compares owned DFAs (explored whole, then Own: no run gives up) with
// regexp, on random patterns (regexgen's constructs: \b, \B, (?m), (?i), non-ASCII, U+FFFD,
// lazy and counted repetitions, and the wide counted classes of secret rules) and random
// texts with invalid UTF-8, whole and streamed. An owned DFA must decide every text.
// LAZYDFA_CHECKS sets how many texts are checked (the suite's default is 50,000; the
// long run is 10,000,000).
func TestRandomOwned(t *testing.T) {
	want := 50_000
	if testing.Short() {
		want = 20_000
	}
	if n, err := strconv.Atoi(os.Getenv("LAZYDFA_CHECKS")); err == nil {
		want = n
	}
	r := rand.New(rand.NewPCG(33, 39))
	checked, owned, patterns := 0, 0, 0
	for checked < want {
		p := regexgen.Pattern(r, 1)
		if r.IntN(2) == 0 {
			p = wideAtoms[r.IntN(len(wideAtoms))] + p
		}
		if r.IntN(3) == 0 {
			p += wideAtoms[r.IntN(len(wideAtoms))]
		}
		re, err := regexp.Compile(p)
		if err != nil {
			continue
		}
		patterns++
		if x := mustDFA(t, p).Explore(300); !x.Complete {
			continue
		} else {
			d := mustDFA(t, p)
			d.Own(x.States)
			owned++
			for range 50 {
				text := randText(r)
				if r.IntN(4) == 0 {
					text = strings.Repeat(text, 1+r.IntN(6))
				}
				checked++
				if got, ok := d.Match(text); !ok || got != re.MatchString(text) {
					t.Fatalf("%q (owned, %d states) on %q: %v (decided %v), regexp %v", p, x.States, text, got, ok, re.MatchString(text))
				}
				cut := r.IntN(len(text) + 1)
				if got, ok := feedInTwo(d, text, cut); !ok || got != re.MatchString(text) {
					t.Fatalf("%q (owned) on %q cut at %d: %v (decided %v), regexp %v", p, text, cut, got, ok, re.MatchString(text))
				}
			}
		}
	}
	t.Logf("%d checks (whole and streamed) on %d owned DFAs of %d patterns: 0 mismatches", checked, owned, patterns)
}
