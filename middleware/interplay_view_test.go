package middleware_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
)

// Early cut + provider callbacks: the replay's HandleLLMGenerateContentStart must not show
// the interrupt nor the cut answer.
func TestInterplayEarlyCutCleanView(t *testing.T) {
	cutCleanView(t, earlyImageRule(), true)
}

// Same with the end-of-answer path: control.
func TestInterplayLateCutCleanView(t *testing.T) {
	cutCleanView(t, imageRule(), false)
}

// cutCleanView runs a move whose first answer rule cuts (early or at its end) through the
// real openai client and checks what the provider's callbacks showed.
func cutCleanView(t *testing.T, rule streamrules.Rule, early bool) {
	t.Helper()
	bad, _ := doomed(0)
	bad.ToolCalls = nil
	const good = "Here it is: https://x/c.png"
	r := newRig(t, nil, rule)
	srv := openaitest.New(t, bad, scripted.Reply{Text: good, Chunk: 5})
	exec, _ := r.executorOf(kindFunctions, srv.LLM(t, openai.WithCallback(r.clean)), &echoTool{name: "shell"})
	out, _, err := r.run(context.Background(), exec, "chat-view", "show the cat", "telegram")
	if err != nil || out != good {
		t.Fatalf("%q %v", out, err)
	}
	if f := r.store.AllFirings(); len(f) != 1 || f[0].Early != early {
		t.Fatalf("want one firing with Early %v: %+v", early, f)
	}
	assertClean(t, r.rec.all(), "![cat]")
	assertReplayStartsClean(t, r.rec.all())
}

// assertReplayStartsClean checks that the client saw both calls' start events, and saw them
// alike: the first call's prompt, then the replay's with the discarded answer and the
// interrupt removed (not merely free of block markers, and not missing altogether).
func assertReplayStartsClean(t *testing.T, view string) {
	t.Helper()
	var starts []string
	for _, l := range strings.Split(view, "\n") {
		if strings.HasPrefix(l, "llm start ") {
			starts = append(starts, l)
		}
	}
	prompt := []string{"llm start system: You are a helpful AI assistant.", "llm start human: show the cat"}
	if want := append(prompt, prompt...); !slices.Equal(starts, want) {
		t.Errorf("start events %q, want the prompt twice, unchanged: %q", starts, want)
	}
}

// Fixed answer via the real openai client: the provider's held End event carries the repair.
func TestInterplayFixedHeldEvent(t *testing.T) {
	tail := tailRule()
	tail.Fix = &streamrules.Fix{AppendIfMissing: "\n\n↩ #{{message_id}}"}
	r := newRig(t, nil, tail)
	srv := openaitest.New(t, scripted.Reply{Text: "Up 3 days.", Chunk: 3})
	exec, mem := r.executorOf(kindFunctions, srv.LLM(t, openai.WithCallback(r.clean)), &echoTool{name: "shell"})
	ctx, move := r.eng.BeginMove(context.Background(), "chat-fix-ev", "telegram")
	move.SetVar("message_id", "41")
	res, err := chains.Call(ctx, exec, map[string]any{"input": "uptime?"}, chains.WithStreamingFunc(func(ctx context.Context, b []byte) error {
		r.rec.HandleStreamingFunc(ctx, b)
		return nil
	}))
	out, _ := res["output"].(string)
	t.Logf("memory: %q", memoryText(t, mem))
	if err = move.End(ctx, err); err != nil {
		t.Fatal(err)
	}
	want := "Up 3 days.\n\n↩ #41"
	if out != want {
		t.Fatalf("out %q", out)
	}
	if !strings.Contains(r.rec.all(), "llm end: "+want) {
		t.Errorf("held End event not repaired:\n%s", r.rec.all())
	}
	if got := strings.Join(r.rec.streamed(), ""); got != want {
		t.Errorf("stream %q", got)
	}
}
