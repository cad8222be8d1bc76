package tagskel

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/internal/forged"
)

// The neutraliser's cost is counted, not timed: tagScan.work is every byte its scan reads
// (strings.IndexByte's passes and each character read at a trigger). One pass reads each
// byte once per trigger it looks for, and a trigger's escape, white space and name a few
// times more: a bound of costPerByte reads per byte holds for any text, however dense its
// tags (the most found is 16; the bound leaves room for constant factors, not for growth); the old scan, which looked for every trigger again from each tag on, read
// 10 × 16 bytes per 16-byte tag, each time to the end of the text.
const (
	costPerByte  = len(triggers) + 16
	costConstant = 64
)

// costPieces are what a text dense with tags repeats: tags and the near misses that make a
// scan read on, in every form the neutraliser reads.
var costPieces = func() []string {
	p := []string{
		"<system-reminder", "</system-interrupt>", "<", "<<", "< ", "</", "< / ", "&", "&amp;", "&lt;",
		"&#0000", "&#60;", "%", "%25", "%3C", `\`, `\\`, `\u003c`, `\\\u003C`, `\074`, `\U0000003c`,
		`\u{3c}`, "\u200b", "<\u200b", "<s\u200b", "<system-", "<system-\u200b", "-", " ", "x", "ж",
		"\u2039", "\uff1c", "\U000e003c", forged.Tags(`\\\`), forged.Tags("&amp;amp;"), forged.Tags("<system-"),
		"\U000e0001", "<\U000e0020", "\xff", "\xf3\xa0", "<syste\u1d0d-", "<SYSTEM_REM",
	}
	for _, v := range forged.Variants {
		p = append(p, v.Tag)
	}
	return p
}()

// checkCost fails when neutralising piece repeated to about small and to 16 × small bytes
// reads more than the bound per byte, or more per byte in the long text than in the short
// one (beyond rounding: the texts hold the same pieces, only more of them).
func checkCost(t *testing.T, piece string, small int) {
	t.Helper()
	if piece == "" {
		return
	}
	var perByte [2]float64
	for k, size := range []int{small, 16 * small} {
		s := strings.Repeat(piece, size/len(piece)+1)
		_, work := neutralize(s)
		if bound := costPerByte*len(s) + costConstant; work > bound {
			t.Fatalf("%d bytes of %q: %d reads, over the bound %d (%.1f a byte)", len(s), piece, work, bound, float64(work)/float64(len(s)))
		}
		perByte[k] = float64(work) / float64(len(s))
	}
	if perByte[1] > perByte[0]*1.1+0.1 {
		t.Fatalf("%q: %.2f reads a byte at %d bytes, %.2f at 16 times that: the cost grows with the text", piece, perByte[0], small, perByte[1])
	}
}

// TestNeutralizeCostFlat: each piece, and random mixes of them, repeated to 16 KB and to
// 256 KB: the reads per byte stay under the bound and do not grow with the text.
func TestNeutralizeCostFlat(t *testing.T) {
	t.Parallel()
	for _, p := range costPieces {
		checkCost(t, p, 16<<10)
	}
	rng := rand.New(rand.NewPCG(26, 2))
	for range 200 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteString(costPieces[rng.IntN(len(costPieces))])
		}
		checkCost(t, b.String(), 16<<10)
	}
}

// TestNeutralizeCostCounts: the count is what the scan reads, so it tells a pass from a
// rescan: clean text is read once per trigger, and a dense text's reads grow with its
// length only.
func TestNeutralizeCostCounts(t *testing.T) {
	t.Parallel()
	clean := strings.Repeat("abcdefgh", 1<<10)
	if _, work := neutralize(clean); work != len(triggers)*len(clean) {
		t.Errorf("clean text of %d bytes: %d reads, want one pass per trigger (%d)", len(clean), work, len(triggers)*len(clean))
	}
	dense := strings.Repeat("<system-reminder", 1<<10)
	out, work := neutralize(dense)
	if strings.Count(out, "[system-reminder") != 1<<10 {
		t.Fatalf("not every tag neutralised: %q…", out[:64])
	}
	if work > costPerByte*len(dense) {
		t.Errorf("%d bytes of tags: %d reads, over %d a byte", len(dense), work, costPerByte)
	}
}

// FuzzNeutralizeCost: any piece, repeated, costs no more per byte in a long text than in a
// short one, and stays under the bound.
//
//	go test -run '^$' -fuzz FuzzNeutralizeCost -fuzztime 60s ./internal/tagskel
func FuzzNeutralizeCost(f *testing.F) {
	for _, p := range costPieces {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, piece string) {
		if len(piece) > 64 {
			piece = piece[:64]
		}
		checkCost(t, piece, 1<<10)
	})
}

// denseTags is size bytes of "<system-reminder" back to back.
func denseTags(size int) string { return strings.Repeat("<system-reminder", size/16) }

// BenchmarkNeutralizeDense: text that is all tags (the old scan: 64 KB took 47 ms, 1 MB 9.7 s),
// or all backslashes (each of which used to read the rest of the run), at 64 KB, 1 MB and
// 16 MB; MB/s stays flat across sizes. The baseline finds every '<' with strings.IndexByte
// in the same text, in the same run.
//
//	go test -run '^$' -bench NeutralizeDense -benchmem -count 6 ./internal/tagskel
func BenchmarkNeutralizeDense(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"64KB", 64 << 10}, {"1MB", 1 << 20}, {"16MB", 16 << 20}} {
		texts := []struct{ name, text string }{
			{"tags", denseTags(size.n)},
			{"backslashes", strings.Repeat(`\`, size.n)},
		}
		for _, in := range texts {
			b.Run(in.name+"/"+size.name+"/neutralize", func(b *testing.B) {
				b.SetBytes(int64(len(in.text)))
				for b.Loop() {
					_ = Neutralize(in.text)
				}
			})
		}
		b.Run("tags/"+size.name+"/baseline", func(b *testing.B) {
			text := texts[0].text
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				n := 0
				for s := text; ; {
					i := strings.IndexByte(s, '<')
					if i < 0 {
						break
					}
					n++
					s = s[i+1:]
				}
				_ = n
			}
		})
	}
}
