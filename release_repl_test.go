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
				for i := releaseBatchBytes; i < len(text); i += releaseBatchBytes {
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

// naiveNormalForm is the normal form by its definition: the leftmost match replaced by
// regexp, again and again, until none is left (quadratic: the oracle, not the code).
func naiveNormalForm(p *replPlan, text string) string {
	for {
		loc := p.re.FindStringSubmatchIndex(text)
		if loc == nil {
			return text
		}
		text = text[:loc[0]] + string(p.re.ExpandString(nil, p.with, text, loc)) + text[loc[1]:]
	}
}

// FuzzNormalForm: the repair, whole and streamed in batches of any size, is the normal
// form by its definition (naiveNormalForm), for the image rule, a rule whose kept group
// may be empty and a claim-shaped rule, on any text; what a stream made final is a prefix
// of it at every batch.
func FuzzNormalForm(f *testing.F) {
	plans := []*replPlan{
		nfFix(&ReplaceRegex{Pattern: `!\[[^\]]*\]\(([^)\s]+)\)`, With: "$1"}),
		nfFix(&ReplaceRegex{Pattern: `<(?P<x>[a-z]*)>`, With: "${x}"}),
		planLit(&Rule{Condition: `\bI sent`, Fix: &Fix{ReplaceRegex: &ReplaceRegex{Pattern: `\bI sent\w*`, With: "I could not send"}}}).repl,
	}
	for _, s := range []string{"![a](b)", "![a](![b](c))", "![](x y) ![a](b)c)", "<<a>>", "<a<b>>c", "I sent it, I sentence, xI sent", "é![é](é)\xff"} {
		f.Add(s, uint8(0), uint8(3))
	}
	f.Fuzz(func(t *testing.T, text string, which, batch uint8) {
		p := plans[int(which)%len(plans)]
		want := naiveNormalForm(p, text)
		if got := p.normalForm(text); got != want {
			t.Fatalf("normalForm(%q) = %q, want %q", text, got, want)
		}
		step := int(batch)%32 + 1
		x := replState{p: p, ls: -1, ufrom: -1}
		buf := []byte(text)
		for i := step; i < len(buf); i += step {
			x.feed(buf[:i])
			if !strings.HasPrefix(want, string(x.out[:x.r])) {
				t.Fatalf("%q fed to %d: final %q is not a prefix of %q", text, i, x.out[:x.r], want)
			}
		}
		x.feed(buf)
		x.flush()
		if got := string(x.out[:x.g]); got != want {
			t.Fatalf("streamed in %d-byte batches: %q, want %q", step, got, want)
		}
	})
}
