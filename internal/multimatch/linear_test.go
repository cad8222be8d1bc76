package multimatch

import (
	"math/rand/v2"
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

// TestWindowMergeVerdicts: windows widened and merged in one pass give regexp's verdict
// on texts of many hits at random spacings, separated by word characters, spaces,
// newlines and multi-byte runes, so that widened windows touch, overlap, merge across
// several hits or stay apart, and a match sits in a late window.
func TestWindowMergeVerdicts(t *testing.T) {
	patterns := []string{
		wordList, `\bcat\b`, `\Bcat\B`, `(?m)^cat$`, `(?m)^\s*cat`, `cat\s*$`,
		`\bhell\w{0,3}\b`, `(?m)\bgit\b.{0,5}$`, `(?i)\b(can'?t|cannot)\b.{0,10}\bsee\b`,
	}
	seps := []string{"q", "qq", " ", "\n", "é", "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq", "  \n ", "_", "1"}
	words := []string{"cat", "hell", "git", "damn", "can't", "see", "concat", "cats"}
	r := rand.New(rand.NewPCG(26, 4))
	set, res := compile(t, patterns)
	runs, whole := 0, 0
	for range 3000 {
		var b strings.Builder
		for n := 1 + r.IntN(60); n > 0; n-- {
			for k := r.IntN(4); k >= 0; k-- {
				b.WriteString(seps[r.IntN(len(seps))])
			}
			if r.IntN(3) == 0 {
				b.WriteString(strings.Repeat("w", r.IntN(300)))
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		text := b.String()
		if got, want := set.Match(text, nil), naiveMatch(res, text); !slices.Equal(got, want) {
			t.Fatalf("text %q: Match %v, regexp %v", text, got, want)
		}
		_, v, w := set.Explain(text)
		runs, whole = runs+v, whole+w
	}
	// Most runs must be windows, or the test proves little.
	if 2*whole > runs {
		t.Errorf("%d of %d runs over the whole text", whole, runs)
	}
	t.Logf("%d of %d runs over the whole text", whole, runs)
}
