package middleware_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/providertest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/seeds"
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
			out, got, _, _ := chatMove(t, scripted.New(scripted.Reply{Pieces: pieces}), nil, seeds.EnvTelegram)
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

// TestStreamContentBlocks: Claude answers in several text blocks, which LangChainGo's
// anthropic client returns as a choice each and streams back to back. What the client is
// streamed and what the rules judge are the same bytes: the blocks back to back, through
// the real anthropic client against the local server, in a Telegram chat with the seeds
// armed. Before, the verdict joined the blocks with "\n": the client saw the tail fix
// land at the wrong offset ("…for.It iis short."), or an image repair the verdict never
// made.
func TestStreamContentBlocks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		blocks []string
		want   string
	}{
		{"tail", []string{"Here is the summary you asked for.", "It is short."}, "Here is the summary you asked for.It is short.\n\n↩ #4711"},
		{"image across blocks", []string{"See ![cat](https://e.org/c.jpg", ") for the cat."}, "See https://e.org/c.jpg for the cat.\n\n↩ #4711"},
		{"tail in the last block", []string{"Done, see above.", "\n\n↩ #4711"}, "Done, see above.\n\n↩ #4711"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.New(t, providertest.Anthropic, scripted.Reply{Blocks: tt.blocks, Chunk: 4})
			out, got, _, _ := chatMoveOn(t, srv.LLM(t), false, nil, seeds.EnvTelegram)
			if client := joined(got); out != tt.want || client != tt.want {
				t.Errorf("blocks %q:\noutput %q\nclient %q\nwant   %q", tt.blocks, out, client, tt.want)
			}
		})
	}
}

// TestEarlyCutAgreesWithRepair: early interrupt on, a Telegram chat with a picture, the
// seeds armed. The answer's markdown image runs into "cannot view the picture"; judged
// whole, the image's repair leaves "…p.jpgcannot view…", which look_before_refusing's \b
// no longer matches, so the answer is repaired, not discarded. The early path must reach
// the same verdict: one model call, and the client gets the repaired answer. Before, it
// was cut on the raw text and the client got a replay.
func TestEarlyCutAgreesWithRepair(t *testing.T) {
	t.Parallel()
	const answer = "Here: ![photo](https://e.org/p.jpg)cannot view the picture, sorry, it did not load for me."
	const want = "Here: https://e.org/p.jpgcannot view the picture, sorry, it did not load for me.\n\n↩ #4711"
	for _, provider := range []string{"scripted", "openai"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			m := newGateModel(t, provider, scripted.Reply{Text: answer, Chunk: 8}, scripted.Reply{Text: "A replay.\n\n↩ #4711", Chunk: 8})
			out, got, _, _ := chatMove(t, m.llm, &streamrules.Config{EarlyInterrupt: true}, seeds.EnvTelegram, seeds.EnvPicture)
			if client := joined(got); out != want || client != want {
				t.Errorf("output %q\nclient %q\nwant   %q", out, client, want)
			}
			if n := len(m.prompts()); n != 1 {
				t.Errorf("%d model calls, want 1: the whole answer is repaired, never replayed", n)
			}
		})
	}
}

// blockPieces make the random answers of checkBlocks: pieces of images, tails, refusals,
// multi-byte spaces and plain words, so block boundaries fall inside what the rules read.
var blockPieces = []string{
	"See ", "![cat](https://e.org/c.jpg", ")", "![", "](x)", " for the cat.", "↩ #4711", "\n\n", " ",
	"\u00a0", "\u3000", "Merci", "Пока", "I cannot view the picture", ".", "word ", "👍",
}

// checkBlocks streams a random answer of several text blocks through LangChainGo's
// anthropic client against the local server, in a Telegram chat with the seeds armed
// (with a picture one time in three), and reports where what the client was streamed,
// joined, differs from the accepted answer.
func checkBlocks(t *testing.T, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 7))
	blocks := make([]string, 1+r.IntN(3))
	for i := range blocks {
		var b strings.Builder
		for n := 1 + r.IntN(5); n > 0; n-- {
			b.WriteString(blockPieces[r.IntN(len(blockPieces))])
		}
		if strings.TrimSpace(b.String()) == "" {
			b.WriteString("ok") // the Messages API has no blank text blocks
		}
		blocks[i] = b.String()
	}
	env := []string{seeds.EnvTelegram}
	if r.IntN(3) == 0 {
		env = append(env, seeds.EnvPicture)
	}
	srv := providertest.New(t, providertest.Anthropic, scripted.Reply{Blocks: blocks, Chunk: 1 + r.IntN(8)},
		scripted.Reply{Text: "A replay.\n\n↩ #4711", Chunk: 4})
	out, got, rg, _ := chatMoveOn(t, srv.LLM(t), false, nil, env...)
	if client := joined(got); client != out {
		return fmt.Sprintf("blocks %q in %v:\nclient %q\noutput %q", blocks, env, client, out)
	}
	for _, c := range got {
		if !utf8.ValidString(c.text) {
			return fmt.Sprintf("blocks %q in %v: chunk %q cuts a rune", blocks, env, c.text)
		}
	}
	// The independent verdict: the blocks back to back, judged whole in a fresh move with
	// the same facts. The output is its repair, or the replay when it discards.
	ctx, whole := rg.eng.BeginMove(context.Background(), fmt.Sprintf("whole-%d", seed), env...)
	whole.SetVar("message_id", "4711")
	v := whole.CheckAnswer(ctx, strings.Join(blocks, ""))
	if err := whole.End(ctx, nil); err != nil {
		t.Fatal(err)
	}
	want := strings.Join(blocks, "")
	switch {
	case v.Discard:
		want = "A replay.\n\n↩ #4711"
	case v.Fixed != "":
		want = v.Fixed
	}
	if out != want {
		return fmt.Sprintf("blocks %q in %v:\noutput %q\nwhole verdict %q (discard %v)", blocks, env, out, want, v.Discard)
	}
	return ""
}

// TestStreamBlocksSound: checkBlocks over a fixed series of random answers.
func TestStreamBlocksSound(t *testing.T) {
	t.Parallel()
	n := uint64(30)
	if testing.Short() {
		n = 8
	}
	for seed := range n {
		if msg := checkBlocks(t, seed); msg != "" {
			t.Fatalf("seed %d: %s", seed, msg)
		}
	}
}

// FuzzStreamBlocks is TestStreamBlocksSound over the fuzzer's seeds:
//
//	go test ./middleware -run '^$' -fuzz FuzzStreamBlocks -fuzztime 30s
func FuzzStreamBlocks(f *testing.F) {
	for s := range uint64(4) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		if msg := checkBlocks(t, seed); msg != "" {
			t.Fatal(msg)
		}
	})
}
