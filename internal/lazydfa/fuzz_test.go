package lazydfa

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"testing"
)

// FuzzMatch compares the DFA with regexp on one pattern and text, whole and streamed
// in three pieces.
func FuzzMatch(f *testing.F) {
	for i, p := range tricky {
		f.Add(p, texts[i%len(texts)], uint8(i), uint8(i*7))
	}
	f.Fuzz(func(t *testing.T, pattern, text string, cut1, cut2 uint8) {
		if len(pattern) > 200 || len(text) > 1000 {
			return
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			return
		}
		d, err := Compile(pattern)
		if err != nil {
			t.Fatalf("regexp compiles %q, lazydfa does not: %v", pattern, err)
		}
		a, b := int(cut1)%(len(text)+1), int(cut2)%(len(text)+1)
		check(t, pattern, re, d, text, []int{min(a, b), max(a, b)})
	})
}

// FuzzWhich compares Which, over a DFA of two patterns, with regexp on each: whole, and
// stopped at the first match (then it may only name patterns that match).
func FuzzWhich(f *testing.F) {
	for i, p := range tricky {
		f.Add(p, tricky[(i*5+3)%len(tricky)], texts[i%len(texts)]+texts[(i*3)%len(texts)])
	}
	f.Fuzz(func(t *testing.T, p1, p2, text string) {
		if len(p1) > 200 || len(p2) > 200 || len(text) > 1000 {
			return
		}
		var progs []*syntax.Prog
		var want []int32
		for k, p := range []string{p1, p2} {
			re, err := regexp.Compile(p)
			if err != nil {
				return
			}
			progs = append(progs, mustProg(t, p))
			if re.MatchString(text) {
				want = append(want, int32(k))
			}
		}
		d := New(progs...)
		if got, done, ok := d.Which(text, nil, 0, len(text)+1, 2); ok && (!done || !slices.Equal(got, want)) {
			t.Fatalf("%q, %q over %q: Which %v (done %v), regexp %v", p1, p2, text, got, done, want)
		}
		if got, _, ok := d.Which(text, nil, 0b10, 1, 2); ok {
			for _, k := range got {
				if !slices.Contains(want, k) {
					t.Fatalf("%q, %q over %q: Which stopped with %v, regexp %v", p1, p2, text, got, want)
				}
			}
		}
	})
}
