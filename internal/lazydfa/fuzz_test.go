package lazydfa

import (
	"regexp"
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
