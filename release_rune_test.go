package streamrules_test

import (
	"context"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/streamrules/streamrules/seeds"
)

// TestReleaseNeverSplitsARune: the seeded image and tail rules armed, message_id 4711,
// and an answer ending in a multi-byte space cut inside it by the chunking. The client
// must never get part of a rune: what it is streamed, joined, is the accepted answer
// byte for byte. Before, the image rule's fast path moved the release point past the cut
// rune and the tail's trailing-space trim saw a non-space byte: the client got
// "Merci\xc2", then the rest sent from the wrong offset.
func TestReleaseNeverSplitsARune(t *testing.T) {
	t.Parallel()
	eng := quietEngine(t, nil, seedRules(t)...)
	ctx := context.Background()
	// Every multi-byte space of Unicode's White_Space property (PropList.txt, as Go's
	// unicode tables carry it), not only the three the bug was found with.
	var spaces []string
	for _, rg := range unicode.White_Space.R16 {
		for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
			if utf8.RuneLen(r) > 1 {
				spaces = append(spaces, string(r))
			}
		}
	}
	if len(spaces) < 15 {
		t.Fatalf("only %d multi-byte spaces in unicode.White_Space", len(spaces))
	}
	for _, space := range spaces {
		answer := "Merci" + space
		for cut := len("Merci") + 1; cut < len(answer); cut++ {
			_, m := eng.BeginMove(ctx, "c", seeds.EnvTelegram)
			m.SetVar("message_id", "4711")
			s := m.HeldScanner()
			var sent []byte
			for _, text := range []string{answer[:cut], answer} {
				got := s.Release([]byte(text))
				if !strings.HasPrefix(string(got), string(sent)) {
					t.Fatalf("%q cut at %d: release went back from %q to %q", answer, cut, sent, got)
				}
				sent = append(sent[:0], got...)
				if !utf8.Valid(sent) {
					t.Errorf("%q cut at %d: released %q, part of a rune", answer, cut, sent)
				}
			}
			v := m.CheckAnswer(ctx, answer)
			if v.Discard || v.Fixed != "Merci\n\n↩ #4711" {
				t.Fatalf("%q: verdict %+v", answer, v)
			}
			if !strings.HasPrefix(v.Fixed, string(sent)) {
				t.Errorf("%q cut at %d: released %q, the accepted answer is %q", answer, cut, sent, v.Fixed)
			}
		}
	}
}
