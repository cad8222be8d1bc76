package streamrules

import (
	"strings"
	"testing"
)

// TestReplaceLinearWork: a replace fix in normal form does work linear in the answer,
// however many matches it repairs. Work is counted, not timed: replState.work is every
// byte the repair feeds a DFA, scans, moves or hands to regexp. On answers dense with
// matches (images, nested images, claims, matches split by near misses), whole
// (normalForm, CheckAnswer's path) and streamed in 16-byte batches (the held stream's
// path), the bytes of work per byte at 1 MB stay within a small factor of those at 64 KB.
// Rescanning from the batch's start and copying the tail after each rewrite made both
// quadratic: 8,000 images took 120 ms.
func TestReplaceLinearWork(t *testing.T) {
	images := nfFix(&ReplaceRegex{Pattern: `!\[[^\]]*\]\(([^)\s]+)\)`, With: "$1"})
	claim := planLit(&Rule{Condition: `\bI sent`, Fix: &Fix{ReplaceRegex: &ReplaceRegex{Pattern: `\bI sent\w*`, With: "I could not send"}}})
	if images == nil || claim == nil {
		t.Fatal("no plan")
	}
	cases := []struct {
		name  string
		p     *replPlan
		piece string
	}{
		{"images", images, "![a](b) "},
		{"images back to back", images, "![alt text](https://example.org/x.png)"},
		{"nested images", images, "![a](![b](![c](d))) "},
		{"near misses", images, "![a](b c) ![x] !(y) ![a](b) "},
		{"claims", claim.repl, "I sent it. "},
		{"claims joined", claim.repl, "I sentI sent "},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			var perByte [2][2]float64 // [whole, streamed][64 KB, 1 MB]
			for k, size := range []int{64 << 10, 1 << 20} {
				text := strings.Repeat(tt.piece, size/len(tt.piece))
				want := tt.p.re.ReplaceAllString(text, tt.p.with) // one pass: these matches never nest deeper than regexp sees
				whole := replState{p: tt.p, ls: -1, ufrom: -1, end: true}
				whole.feed([]byte(text))
				whole.flush()
				streamed := replState{p: tt.p, ls: -1, ufrom: -1}
				buf := []byte(text)
				final := string(whole.out[:whole.g])
				for i := ReleaseBatchBytes; i < len(text); i += ReleaseBatchBytes {
					streamed.feed(buf[:i])
					if i%(16<<10) == 0 && !strings.HasPrefix(final, string(streamed.out[:streamed.r])) {
						t.Fatalf("streamed %d bytes: what is final is not a prefix of the repair", i)
					}
				}
				streamed.feed(buf)
				streamed.end = true
				streamed.flush()
				for j, x := range []*replState{&whole, &streamed} {
					got := string(x.out[:x.g])
					if !strings.Contains(tt.name, "nested") && got != want {
						t.Fatalf("%d bytes: the repair differs from regexp's", size)
					}
					perByte[j][k] = float64(x.work) / float64(len(text))
				}
				if string(whole.out[:whole.g]) != string(streamed.out[:streamed.g]) {
					t.Fatalf("%d bytes: streamed and whole repairs differ", size)
				}
			}
			for j, path := range []string{"whole", "streamed"} {
				small, large := perByte[j][0], perByte[j][1]
				t.Logf("%s: %.1f bytes of work a byte on 64 KB, %.1f on 1 MB", path, small, large)
				if large > 1.2*small+1 || large > 64 {
					t.Errorf("%s: %.1f bytes of work a byte on 64 KB, %.1f on 1 MB: not linear", path, small, large)
				}
			}
		})
	}
}
