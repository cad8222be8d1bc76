package multimatch

import (
	"strings"
	"testing"
)

// wordList is the rule shape that the windows once made quadratic: a plain
// alternation of words between \b.
const wordList = `(?i)\b(damn|hell|crap|bloody|bugger|bollocks|arse|wanker|tosser|git)\b`

// packedWords returns about n bytes of the word list's words, each followed by pad
// (no match: with word characters as padding no \b holds around a word).
func packedWords(n int, pad string) string {
	words := strings.Split(wordList[len(`(?i)\b(`):len(wordList)-len(`)\b`)], "|")
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(words[i*7%len(words)])
		b.WriteString(pad)
	}
	return b.String()
}

// BenchmarkWordListPacked: the word list on packedWords with 60 word characters between
// the words (no match), 64 KB and 1 MB: its time per byte stays flat. The baseline,
// dense, packs the words with nothing between them: one run over the whole text.
func BenchmarkWordListPacked(b *testing.B) {
	set, err := New([]string{wordList})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		n    int
		pad  string
	}{
		{"dense1024KB", 1 << 20, ""},
		{"64KB", 64 << 10, strings.Repeat("q", 60)},
		{"1024KB", 1 << 20, strings.Repeat("q", 60)},
	} {
		text := packedWords(c.n, c.pad)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if set.Match(text, nil) != nil {
					b.Fatal("a match")
				}
			}
		})
	}
}
