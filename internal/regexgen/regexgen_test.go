package regexgen

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// TestPatternsCompile: most generated patterns compile, and they vary.
func TestPatternsCompile(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	ok := 0
	for range 1000 {
		p := Pattern(r, 0)
		seen[p] = true
		if _, err := regexp.Compile(p); err == nil {
			ok++
		}
	}
	if ok < 900 || len(seen) < 900 {
		t.Fatalf("%d of 1000 compile, %d distinct", ok, len(seen))
	}
}
