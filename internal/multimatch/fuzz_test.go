package multimatch

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"
)

// FuzzMatch compares a two-pattern Set with regexp's own verdicts.
func FuzzMatch(f *testing.F) {
	seeds := [][3]string{
		{`(?i)kiss`, "KI\u017fS me", `x`},
		{`(?i)\bkelvin\b`, "273 \u212aELVIN", `(?i)k`},
		{`a\x{FFFD}b`, "a\xffb", `\x{FFFD}`},
		{`[^a]bc`, "\xffbc", `(?s).bc`},
		{`abc(?i)def`, "abcDEF ABCdef", `(?i:abc)DEF`},
		{`(?m)^\s*#{1,6} `, "text\n  ## Title", `!\[[^\]]*\]\([^)]*\)`},
		{`(?i)\b(can'?t|cannot|unable to)\b.{0,40}\b(see|view|look at)\b`, "I CAN'T really \u017fee it", `\d{4}`},
		{`^.{0,3}$`, "ab\xff", ``},
		{`(?i)straße`, "STRAẞE", `(?i)ss|ß`},
		{`x{2,5}y`, "xxxxy", `(ab){2,}`},
		{`[\x{1F600}-\x{1F64F}]`, "hi 😀", `[\x{4e00}-\x{9fff}]{2}`},
		{`(?i)σ`, "ς", `(?i)ǅ`},
		{`\bfoo\b`, "a foo_", `\Bfoo\B`},
		{`-----BEGIN (RSA |EC )?PRIVATE KEY-----`, "-----BEGIN RSA PRIVATE KEY-----", `(?i)[k-m]ey`},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, pattern, text, pattern2 string) {
		re1, err := regexp.Compile(pattern)
		if err != nil {
			return
		}
		re2, err := regexp.Compile(pattern2)
		if err != nil {
			return
		}
		set, err := New([]string{pattern, pattern2})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		// Besides text itself, try strings generated from the patterns
		// (most fuzzed texts match nothing), embedded in text and mutated.
		texts := []string{text}
		r := rand.New(rand.NewPCG(uint64(len(text)), uint64(len(pattern))<<32|uint64(len(pattern2))))
		syn1, syn2 := mustParse(pattern).Simplify(), mustParse(pattern2).Simplify()
		for k := 0; k < 4; k++ {
			s := sample(r, syn1, 0)
			if k&1 == 1 {
				s += sample(r, syn2, 0)
			}
			if k&2 == 2 {
				s = mutate(r, s)
			}
			at := r.IntN(len(text) + 1)
			texts = append(texts, s, text[:at]+s+text[at:])
		}
		for _, text := range texts {
			var want []int
			if re1.MatchString(text) {
				want = append(want, 0)
			}
			if re2.MatchString(text) {
				want = append(want, 1)
			}
			got := set.Match(text, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("patterns %q, %q text %q: got %v want %v\ngroups: %s ; %s",
					pattern, pattern2, text, got, want, renderGroups(t, pattern), renderGroups(t, pattern2))
			}
		}
	})
}
