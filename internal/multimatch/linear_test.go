package multimatch

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestVerifyReadLinear: what verification reads (Set.Read) per byte of text stays flat
// from 64 KB to 1 MB, for patterns whose windows widen (\b, (?m)^ and $) over texts
// that pack their literals at every spacing, runs of word characters or one long line
// between them: each window widening over the whole run made the word list quadratic
// (3.6 s on 1 MB). The verdicts are regexp's.
func TestVerifyReadLinear(t *testing.T) {
	patterns := []string{wordList, `\bcat\b`, `(?m)^cat$`, `(?m)^\s*(?:damn|hell)\s*$`, `\bhell\w{0,3}\b`}
	pads := []string{"", "q", "qqqqqqqq", strings.Repeat("q", 40), strings.Repeat("q", 60),
		strings.Repeat("q", 200), strings.Repeat("é", 30), " ", strings.Repeat("q ", 30) + "cat",
		"qq\n", strings.Repeat("q", 100) + "\n"}
	for _, p := range patterns {
		set, err := New([]string{p})
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(p)
		for _, pad := range pads {
			var perByte [2]float64
			for k, n := range []int{64 << 10, 1 << 20} {
				text := packedWords(n, pad)
				got, read := set.Read(text)
				if want := re.MatchString(text); (len(got) == 1) != want {
					t.Errorf("%s, pad %.12q, %d bytes: Read says %v, regexp %v", p, pad, n, got, want)
				}
				if want := set.Match(text, nil); !slices.Equal(got, want) {
					t.Errorf("%s, pad %.12q: Read says %v, Match %v", p, pad, got, want)
				}
				perByte[k] = float64(read) / float64(len(text))
			}
			// Flat: a run over the whole text reads 1 byte a byte; windows, widening and
			// a fallback after them at most a few.
			if perByte[1] > 3 || perByte[1] > 2*perByte[0]+0.5 {
				t.Errorf("%s, pad %.12q: verification read %.2f bytes a byte on 64 KB, %.2f on 1 MB", p, pad, perByte[0], perByte[1])
			}
		}
	}
}
