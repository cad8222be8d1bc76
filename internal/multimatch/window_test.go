package multimatch

import (
	"slices"
	"strings"
	"testing"
)

// TestWindowEdges: windows and anchored runs give regexp's verdict where the
// assertions at their edges would read differently from the whole text:
// a word running into the window, a line start or end outside it, the text's
// start and end, multi-byte and invalid runes at the cut.
func TestWindowEdges(t *testing.T) {
	patterns := []string{
		`\bcat\b`,
		`\Bcat\B`,
		`(?m)^cat$`,
		`(?m)^\s*cat`,
		`cat$`,
		`^.{0,12}cat`,
		`\bca[a-z]{0,3}t\b`,
		`(?i)\bcat\w{0,2}\b`,
		`é{1,2}cat\b`,
		`\x{FFFD}cat`,
		`[^a]cat`,
		`(?s).cat.`,
		`cat\s*\d+\s*$`,
		`\bcat[^\s]{0,4}\b`,
		`\w{2}cat`,
		`https?://[^\s/]*@`,
		`\b\d{1,3}\s+cat\w*`,
	}
	texts := []string{
		"cat", "bobcat", "cats", "a cat.", "x\ncat\ny", "xx cat", "concatenate",
		"ééécat ", "\xffcat", "acat", "\ncat", "cat 12  ", "cat 12 x",
		strings.Repeat("word ", 40) + "cat" + strings.Repeat(" word", 40),
		strings.Repeat("w", 100) + "cat" + strings.Repeat("w", 100),
		"see https://user@example.com and http://x/y@z",
		"12 cats and 345  catalogue, 7cat",
		"é" + strings.Repeat("a", 20) + "cat\xe2\x82",
	}
	for _, text := range texts {
		// Place each text in the middle of filler, so windows are cut out of it.
		for _, wrap := range []string{"%s", "lorem ipsum dolor %s sit amet", "line\n%s\nline"} {
			s := strings.Replace(wrap, "%s", text, 1)
			set, res := compile(t, patterns)
			want := naiveMatch(res, s)
			if got := set.Match(s, nil); !slices.Equal(got, want) {
				t.Errorf("text %q: Match %v, regexp %v", s, got, want)
			}
		}
	}
}
