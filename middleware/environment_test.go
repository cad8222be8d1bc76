package middleware_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/seeds"
)

// pictureTool puts a picture into the model's context and says so to the move: from the
// next tour on, `picture` holds.
type pictureTool struct{ echoTool }

func (p *pictureTool) Call(ctx context.Context, input string) (string, error) {
	streamrules.MoveFrom(ctx).AddEnvironment(seeds.EnvPicture)
	return p.echoTool.Call(ctx, input)
}

// TestPictureArrivesMidMove: the seeded look_before_refusing rule (when: picture) lets
// "I can't see the picture" pass in the tour before the picture arrived, and discards it
// in the tour after an image tool brought it.
func TestPictureArrivesMidMove(t *testing.T) {
	t.Parallel()
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	rule, ok := set.Rule("look_before_refusing")
	if !ok {
		t.Fatal("no look_before_refusing seed")
	}
	r := newRig(t, nil, rule)
	const before = "I can't see the picture yet, let me fetch it."
	const refusal = "Sorry, I can't look at the picture."
	const good = "It shows a cat on a sofa."
	model := scripted.New(
		scripted.Reply{Text: before, Chunk: 5, ToolCalls: []llms.ToolCall{toolCall("fetch_picture", `{"__arg1":"cat.png"}`)}},
		scripted.Reply{Text: refusal, Chunk: 5},
		scripted.Reply{Text: good, Chunk: 5},
	)
	fetch := &pictureTool{echoTool{name: "fetch_picture"}}
	exec, _ := r.executor(kindFunctions, model, fetch)
	out, steps, err := r.run(context.Background(), exec, "chat-pic", "what is in cat.png?")
	if err != nil {
		t.Fatal(err)
	}
	if out != good {
		t.Fatalf("output %q", out)
	}
	if len(steps) != 1 || len(fetch.inputs()) != 1 {
		t.Fatalf("steps %d, tool calls %q", len(steps), fetch.inputs())
	}
	calls := model.Calls()
	if len(calls) != 3 {
		t.Fatalf("%d model calls, want 3 (fetch, refusal discarded, answer)", len(calls))
	}
	if strings.Contains(calls[1].Text(), "system-interrupt") {
		t.Error("the tour before the picture arrived was interrupted")
	}
	if tail := lastMessages(calls[2], 1); !strings.Contains(messageText(tail[0]), `rule="look_before_refusing"`) {
		t.Errorf("the tour after the picture arrived was not interrupted: %q", messageText(tail[0]))
	}
	f := r.store.AllFirings()
	if len(f) != 1 || f[0].Rule != "look_before_refusing" || !f[0].Retry {
		t.Errorf("firings %+v", f)
	}
	streamed := strings.Join(r.rec.streamed(), "")
	if !strings.Contains(streamed, before) || strings.Contains(streamed, refusal) || !strings.Contains(streamed, good) {
		t.Errorf("client stream %q", streamed)
	}
}
