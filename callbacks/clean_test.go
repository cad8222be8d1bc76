package callbacks_test

import (
	"context"
	"fmt"
	"testing"

	lcb "github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/callbacks"
)

type seen struct {
	lcb.SimpleHandler
	events []string
}

func (s *seen) HandleLLMGenerateContentStart(_ context.Context, ms []llms.MessageContent) {
	for _, m := range ms {
		s.events = append(s.events, fmt.Sprintf("start %s %v", m.Role, m.Parts))
	}
}
func (s *seen) HandleLLMGenerateContentEnd(_ context.Context, r *llms.ContentResponse) {
	s.events = append(s.events, "end "+r.Choices[0].Content)
}
func (s *seen) HandleChainStart(_ context.Context, in map[string]any) {
	s.events = append(s.events, fmt.Sprintf("chain %v", in["agent_scratchpad"]))
}
func (s *seen) HandleAgentFinish(_ context.Context, f schema.AgentFinish) {
	s.events = append(s.events, "finish "+f.Log)
}

func TestCleanMessages(t *testing.T) {
	t.Parallel()
	reminder := streamrules.Reminder{Rule: "r", Text: "psst"}.Block()
	interrupt := streamrules.InterruptBlock("t", "fix it")
	in := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeHuman, "question"),
		{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "c1", Content: reminder + "\nout"}}},
		llms.TextParts(llms.ChatMessageTypeAI, "discarded ![x](y)"),
		llms.TextParts(llms.ChatMessageTypeHuman, interrupt),
	}
	got := callbacks.CleanMessages(in)
	if len(got) != 2 {
		t.Fatalf("got %d messages: %+v", len(got), got)
	}
	if r := got[1].Parts[0].(llms.ToolCallResponse); r.Content != "out" || r.ToolCallID != "c1" {
		t.Errorf("tool result %+v", r)
	}
	if in[1].Parts[0].(llms.ToolCallResponse).Content != reminder+"\nout" {
		t.Error("CleanMessages modified its input")
	}
}

func TestCleanHandlerAndHold(t *testing.T) {
	t.Parallel()
	s := &seen{}
	h := callbacks.Clean(s)
	ctx := context.Background()
	h.HandleChainStart(ctx, map[string]any{"agent_scratchpad": "Observation: " + streamrules.Reminder{Rule: "r", Text: "x"}.Block() + "\nok"})
	h.HandleLLMGenerateContentStart(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, streamrules.InterruptBlock("t", "x"))})

	dropped, kept := &callbacks.Hold{}, &callbacks.Hold{}
	h.HandleLLMGenerateContentEnd(callbacks.WithHold(ctx, dropped), &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "bad"}}})
	h.HandleLLMGenerateContentEnd(callbacks.WithHold(ctx, kept), &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "good"}}})
	// The interrupt-only message list came through empty; the two answers are held.
	if len(s.events) != 1 {
		t.Fatalf("held events leaked: %q", s.events)
	}
	dropped.Drop()
	kept.Release()
	h.HandleLLMGenerateContentEnd(callbacks.WithHold(ctx, kept), &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "after"}}})
	want := []string{"chain Observation: ok", "end good", "end after"}
	if fmt.Sprint(s.events) != fmt.Sprint(want) {
		t.Errorf("events %q, want %q", s.events, want)
	}
	var toolEnd string
	h2 := callbacks.Clean(&toolEnds{out: &toolEnd})
	quoted := "file says: " + streamrules.Reminder{Rule: "r", Text: "x"}.Block()
	h2.HandleToolEnd(ctx, quoted)
	if toolEnd != quoted {
		t.Errorf("a tool's own output was altered: %q", toolEnd)
	}
	if callbacks.Clean(nil) != nil || callbacks.Clean(h) != h {
		t.Error("Clean(nil) must be nil and Clean must not wrap twice")
	}
}

type toolEnds struct {
	lcb.SimpleHandler
	out *string
}

func (h *toolEnds) HandleToolEnd(_ context.Context, out string) { *h.out = out }
