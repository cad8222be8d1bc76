package middleware_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/chains"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/scripted"
)

// TestFixMRKL: a ReAct agent's final answer missing the tail is repaired in place: one
// model call for the answer, no replay; the client's stream (held, then released), the
// callbacks, the output and memory all carry the repaired answer; the thoughts before
// "Final Answer:" are untouched.
func TestFixMRKL(t *testing.T) {
	t.Parallel()
	tail := tailRule()
	tail.Fix = &streamrules.Fix{AppendIfMissing: "\n\n↩ #{{message_id}}"}
	r := newRig(t, nil, tail)
	shell := &echoTool{name: "shell"}
	model := scripted.New(
		scripted.Reply{Text: "Thought: check\nAction: shell\nAction Input: uptime", Chunk: 6},
		scripted.Reply{Text: "Thought: done\nFinal Answer: Up 3 days.", Chunk: 5},
	)
	exec, mem := r.executor(kindMRKL, model, shell)
	ctx, move := r.eng.BeginMove(context.Background(), "chat-fix", "telegram")
	move.SetVar("message_id", "41")
	res, err := chains.Call(ctx, exec, map[string]any{"input": "uptime?"}, chains.WithStreamingFunc(func(ctx context.Context, b []byte) error {
		r.rec.HandleStreamingFunc(ctx, b)
		return nil
	}))
	fired := move.Firings()
	if err = move.End(ctx, err); err != nil {
		t.Fatal(err)
	}
	want := "Up 3 days.\n\n↩ #41"
	if out, _ := res["output"].(string); out != want {
		t.Fatalf("output %q, want %q", out, want)
	}
	if n := len(model.Calls()); n != 2 {
		t.Errorf("%d model calls, want 2 (the tool step, the answer): a fix needs no replay", n)
	}
	streamed := strings.Join(r.rec.streamed(), "")
	if !strings.HasSuffix(streamed, "Thought: done\nFinal Answer: "+want) || strings.Count(streamed, "Up 3 days.") != 1 {
		t.Errorf("client stream %q, want the repaired final answer once", streamed)
	}
	if !strings.Contains(r.rec.all(), want) {
		t.Errorf("the callbacks never saw the repaired answer:\n%s", r.rec.all())
	}
	if m := memoryText(t, mem); !strings.Contains(m, "ai: "+want) {
		t.Errorf("memory %q, want the repaired answer", m)
	}
	if len(fired) != 1 || fired[0].Outcome != streamrules.OutcomeFixed || fired[0].Retry || len(fired[0].Diff) != 2 {
		t.Errorf("firings %+v", fired)
	}
	if shell.inputs()[0] != "uptime" {
		t.Errorf("the tool step changed: %q", shell.inputs())
	}
}
