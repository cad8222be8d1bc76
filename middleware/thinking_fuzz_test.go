package middleware_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
)

// thinkPieces make the random reasoning of checkThinking: the thinking rules' misses
// (whole, or split so a chunk boundary falls inside), the negate rule's word, and words.
var thinkPieces = []string{
	"I can't see the image", "can't", " see the picture", "I'll just rm -rf", " the folder", "a plan", "plan",
	"Let me think. ", "word ", "\n", " ", "Пока ", "👍", "the tests probably pass",
}

// checkThinking streams random reasoning, then a random answer, through LangChainGo's
// openai client against the local server, in a Telegram chat with the seeds and three
// thinking rules armed (a picture one time in two), and the host streaming both the text
// and the reasoning to its client. It reports where the client's reasoning or text, joined,
// differ from the accepted response's, or the output from the independent verdict: the
// whole reasoning, then the whole answer, judged in a fresh move, the output the replay
// when either discards. So no byte of a discarded response's reasoning reaches the client.
func checkThinking(t *testing.T, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 38))
	var b strings.Builder
	for n := r.IntN(12); n > 0; n-- {
		b.WriteString(thinkPieces[r.IntN(len(thinkPieces))])
	}
	reasoning := b.String()
	b.Reset()
	for n := 1 + r.IntN(5); n > 0; n-- {
		b.WriteString(blockPieces[r.IntN(len(blockPieces))])
	}
	text := b.String()
	env := []string{streamrules.EnvTelegram}
	if r.IntN(2) == 0 {
		env = append(env, streamrules.EnvPicture)
	}
	look := blindThinkingRule()
	look.When = []string{streamrules.EnvPicture}
	rmrf := streamrules.Rule{Name: "rm_rf_thinking", Scope: streamrules.ScopeThinking,
		Predicate: &streamrules.Predicate{AllOf: []streamrules.Predicate{{ContainsRegex: `rm -rf`}, {ContainsRegex: `folder`}}},
		Text:      "Never delete a folder to get on."}
	plan := streamrules.Rule{Name: "plan_first", Scope: streamrules.ScopeThinking, Condition: `\bplan\b`, Negate: true,
		AppliesWhen: &streamrules.Predicate{ContainsRegex: `tests`}, Text: "Make a plan before you claim the tests pass."}
	rules := append(allSeedRules(t), look, rmrf, plan)
	rg := newRig(t, nil, rules...)
	const replay, replayThought = "A replay.\n\n↩ #4711", "Looked again."
	srv := openaitest.New(t, scripted.Reply{Reasoning: reasoning, Text: text, Chunk: 1 + r.IntN(8)},
		scripted.Reply{Reasoning: replayThought, Text: replay, Chunk: 4})
	ctx, move := rg.eng.BeginMove(context.Background(), fmt.Sprintf("think-%d", seed), env...)
	move.SetVar("message_id", "4711")
	ctx = middleware.AgentTour(ctx, middleware.FormatToolCalling)
	var mu sync.Mutex
	var ctext, cthought strings.Builder
	resp, err := rg.guard.Model(srv.LLM(t)).GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")},
		llms.WithStreamingFunc(func(_ context.Context, c []byte) error { mu.Lock(); ctext.Write(c); mu.Unlock(); return nil }),
		llms.WithStreamingReasoningFunc(func(_ context.Context, rc, _ []byte) error {
			mu.Lock()
			cthought.Write(rc)
			mu.Unlock()
			return nil
		}))
	if err = move.End(ctx, err); err != nil {
		t.Fatal(err)
	}
	out, thought := resp.Choices[0].Content, middleware.Reasoning(resp)

	// The oracle: hold everything, then judge in a fresh move.
	wctx, whole := rg.eng.BeginMove(context.Background(), fmt.Sprintf("whole-%d", seed), env...)
	whole.SetVar("message_id", "4711")
	wantOut, wantThought := text, reasoning
	if v := whole.CheckThinking(wctx, reasoning); v.Discard {
		wantOut, wantThought = replay, replayThought
	} else if v := whole.CheckAnswer(wctx, text); v.Discard {
		wantOut, wantThought = replay, replayThought
	} else if v.Fixed != "" {
		wantOut = v.Fixed
	}
	if err := whole.End(wctx, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	switch {
	case out != wantOut || thought != wantThought:
		return fmt.Sprintf("reasoning %q text %q in %v:\noutput %q / %q\nwant   %q / %q", reasoning, text, env, thought, out, wantThought, wantOut)
	case cthought.String() != thought:
		return fmt.Sprintf("reasoning %q text %q in %v: the client's reasoning %q, the response's %q", reasoning, text, env, cthought.String(), thought)
	case ctext.String() != out:
		return fmt.Sprintf("reasoning %q text %q in %v: the client's text %q, the output %q", reasoning, text, env, ctext.String(), out)
	}
	return ""
}

// TestThinkingStreamSound: checkThinking over a fixed series of random responses.
func TestThinkingStreamSound(t *testing.T) {
	t.Parallel()
	n := uint64(40)
	if testing.Short() {
		n = 10
	}
	for seed := range n {
		if msg := checkThinking(t, seed); msg != "" {
			t.Fatalf("seed %d: %s", seed, msg)
		}
	}
}

// FuzzThinkingStream is TestThinkingStreamSound over the fuzzer's seeds:
//
//	go test ./middleware -run '^$' -fuzz FuzzThinkingStream -fuzztime 30s
func FuzzThinkingStream(f *testing.F) {
	for s := range uint64(4) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		if msg := checkThinking(t, seed); msg != "" {
			t.Fatal(msg)
		}
	})
}
