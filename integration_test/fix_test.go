package integration_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/seeds"
)

// TestFixOnPostgres: the seeded fixes (seed version 2) repair a Telegram answer in place through a
// stock LangChainGo executor on the real openai client: one model call, and the client's
// stream, memory, the output and the stats rows all hold the repaired answer.
func TestFixOnPostgres(t *testing.T) {
	t.Parallel()
	draft := "Here: ![disk](https://x/disk.png)"
	repaired := "Here: https://x/disk.png\n\n↩ #7"
	c := newChain(t, pgtest.DSN(t), scripted.Reply{Text: draft, Chunk: 4})

	var streamed strings.Builder
	ctx, move := c.eng.BeginMove(context.Background(), "tg-fix", seeds.EnvTelegram)
	move.SetVar("message_id", "7")
	out, err := chains.Run(ctx, c.exec, "how much disk is free?", chains.WithStreamingFunc(func(_ context.Context, b []byte) error {
		streamed.WriteString(string(b))
		return nil
	}))
	fired := move.Firings()
	if err = move.End(ctx, err); err != nil {
		t.Fatal(err)
	}
	if out != repaired {
		t.Errorf("output %q, want %q", out, repaired)
	}
	if streamed.String() != repaired {
		t.Errorf("client stream %q, want %q", streamed.String(), repaired)
	}
	if n := len(c.srv.Requests()); n != 1 {
		t.Errorf("%d model calls, want 1: a fix needs no replay", n)
	}
	hist, err := c.mem.ChatHistory.Messages(context.Background())
	if err != nil || len(hist) != 2 || hist[1].GetContent() != repaired {
		t.Errorf("memory %v %v, want the repaired answer last", hist, err)
	}

	wantDiff := []streamrules.Change{
		{Op: streamrules.ChangeEdit, OldLine: 1, NewLine: 1, Old: draft, New: "Here: https://x/disk.png"},
		{Op: streamrules.ChangeAdd, NewLine: 2},
		{Op: streamrules.ChangeAdd, NewLine: 3, New: "↩ #7"},
	}
	if len(fired) != 2 {
		t.Fatalf("firings %+v", fired)
	}
	for i, name := range []string{"telegram_markdown_image", "telegram_reply_tail"} {
		f := fired[i]
		if f.Rule != name || f.Outcome != streamrules.OutcomeFixed || f.Retry || !sameChanges(f.Diff, wantDiff) {
			t.Errorf("firing %d: %+v, want %s fixed with diff %v", i, f, name, wantDiff)
		}
	}
	rows, err := c.store.Firings(context.Background(), "tg-fix")
	if err != nil || len(rows) != 2 {
		t.Fatalf("stats rows %+v %v", rows, err)
	}
	for _, r := range rows {
		if r.Retry || !sameChanges(r.Diff, wantDiff) {
			t.Errorf("stats row %+v, want the diff stored", r)
		}
	}
}

// TestFixLeavesToolCalls: an answer that says something beside its tool calls is repaired
// in its text only; the declared call runs as declared, with no replay.
func TestFixLeavesToolCalls(t *testing.T) {
	t.Parallel()
	c := newChain(t, pgtest.DSN(t),
		scripted.Reply{Text: "Looking: ![df](https://x/df.png)", Chunk: 3, ToolCalls: []llms.ToolCall{call("shell", "df -h /")}},
		scripted.Reply{Text: "12G free\n↩ #9", Chunk: 3},
	)
	var streamed strings.Builder
	ctx, move := c.eng.BeginMove(context.Background(), "tg-calls", seeds.EnvTelegram)
	move.SetVar("message_id", "9")
	out, err := chains.Run(ctx, c.exec, "disk?", chains.WithStreamingFunc(func(_ context.Context, b []byte) error {
		streamed.WriteString(string(b))
		return nil
	}))
	if err = move.End(ctx, err); err != nil {
		t.Fatal(err)
	}
	if out != "12G free\n↩ #9" {
		t.Errorf("output %q", out)
	}
	if c.shell.ins == nil || len(c.shell.ins) != 1 || c.shell.ins[0] != "df -h /" {
		t.Errorf("shell got %q, want the declared call once", c.shell.ins)
	}
	reqs := c.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2 (the tool round, the answer): no replay", len(reqs))
	}
	if s := streamed.String(); strings.Contains(s, "![df]") || !strings.Contains(s, "Looking: https://x/df.png\n\n↩ #9") {
		t.Errorf("client stream %q, want the repaired text", s)
	}
}

func sameChanges(a, b []streamrules.Change) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
