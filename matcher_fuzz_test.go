package streamrules

import (
	"slices"
	"testing"
)

// FuzzTextMatcher: the engine's text matcher says exactly what the naive loop says.
func FuzzTextMatcher(f *testing.F) {
	f.Add(`(?i)\b(can'?t|cannot)\b.{0,40}\bsee\b`, `↩ #\d+\s*$`, "Sorry, I CAN'T really see it\n↩ #12")
	f.Add(`!\[[^\]]*\]\([^)\s]+\)`, `(?m)^\s*#{1,6} `, "# Title\n![x](y)")
	f.Add(`(?i)straße`, `KELVIN|ſ`, "STRASSE Straße \u212a ſ")
	f.Add(``, `\d{4}`, "\xff\xfe 2024")
	f.Fuzz(func(t *testing.T, p1, p2, text string) {
		patterns := []string{p1, p2}
		for _, p := range patterns {
			if checkCondition(p) != nil {
				t.Skip()
			}
		}
		want := newNaiveMatcher(patterns).Match(text, nil)
		got := newTextMatcher(patterns).Match(text, nil)
		if !slices.Equal(got, want) {
			t.Fatalf("patterns %q text %q: matcher %v, naive %v", patterns, text, got, want)
		}
	})
}
