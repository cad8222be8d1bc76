package middleware_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/scripted"
)

// TestStreamCutRuneWithTail: the answer "Merci" and a multi-byte space arrives in two
// chunks cut inside the space, through the stock functions agent, in a Telegram chat
// with the seeds armed. What the client is streamed, joined, is the accepted answer (the
// space trimmed, the tail appended), never a part of a rune. Before, the client got
// "Merci\xc2" and then the rest from the wrong offset.
func TestStreamCutRuneWithTail(t *testing.T) {
	t.Parallel()
	const want = "Merci\n\n↩ #4711"
	for _, space := range []string{"\u00a0", "\u3000", "\u202f"} {
		for cut := 1; cut < len(space); cut++ {
			pieces := []string{"Merci" + space[:cut], space[cut:]}
			out, got, _, _ := chatMove(t, scripted.New(scripted.Reply{Pieces: pieces}), nil, streamrules.EnvTelegram)
			client := joined(got)
			if out != want || client != want {
				t.Errorf("pieces %q: output %q, client %q; want %q", pieces, out, client, want)
			}
			for _, c := range got {
				if !utf8.ValidString(c.text) {
					t.Errorf("pieces %q: the client got %q, part of a rune", pieces, c.text)
				}
			}
			if strings.Contains(client, "\ufffd") {
				t.Errorf("pieces %q: the client got a character the answer never had: %q", pieces, client)
			}
		}
	}
}
