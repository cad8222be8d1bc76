package middleware_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
)

func TestAnswerTarget(t *testing.T) {
	t.Parallel()
	choices := func(texts ...string) *llms.ContentResponse {
		r := &llms.ContentResponse{}
		for _, s := range texts {
			r.Choices = append(r.Choices, &llms.ContentChoice{Content: s})
		}
		return r
	}
	withCall := &llms.ContentResponse{Choices: []*llms.ContentChoice{{
		Content: "Let me check.", ToolCalls: []llms.ToolCall{{ID: "c", Type: "function", FunctionCall: &llms.FunctionCall{Name: "shell"}}},
	}}}
	callOnly := &llms.ContentResponse{Choices: []*llms.ContentChoice{{
		ToolCalls: []llms.ToolCall{{ID: "c", Type: "function", FunctionCall: &llms.FunctionCall{Name: "shell"}}},
	}}}
	cases := []struct {
		name   string
		format middleware.AnswerFormat
		resp   *llms.ContentResponse
		want   string
	}{
		{"tool-calling text", middleware.FormatToolCalling, choices("hello"), "hello"},
		{"text beside tool calls is said", middleware.FormatToolCalling, withCall, "Let me check."},
		{"calls without text say nothing", middleware.FormatToolCalling, callOnly, ""},
		{"every choice is checked (Anthropic: one per block), back to back as they stream", middleware.FormatToolCalling, choices("first block", "", "second block"), "first blocksecond block"},
		{"MRKL targets of several choices", middleware.FormatMRKL, choices("Final Answer: a", "Final Answer: b"), "a\nb"},
		{"nil response", middleware.FormatToolCalling, nil, ""},
		{"MRKL final answer", middleware.FormatMRKL, choices("Thought: done\nFinal Answer: 42 ↩ #1"), "42 ↩ #1"},
		{"MRKL last final answer", middleware.FormatMRKL, choices("Final Answer: a\nFinal Answer: b"), "b"},
		{"MRKL lower-case variant", middleware.FormatMRKL, choices("thought: ok\nfinal answer: yes"), "yes"},
		{"MRKL action step says nothing", middleware.FormatMRKL, choices("Thought: look\nAction: shell\nAction Input: ls"), ""},
		{"MRKL 'the answer is' before an action is a step", middleware.FormatMRKL, choices("the answer is: maybe\nAction: shell\nAction Input: ls"), ""},
		{"conversational", middleware.FormatConversational, choices("Thought: Do I need a tool? No\nAI: Hi there"), "Hi there"},
		{"conversational step", middleware.FormatConversational, choices("Action: search\nAction Input: x"), ""},
	}
	for _, c := range cases {
		if got := middleware.AnswerTarget(c.format, c.resp); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// TestConversationalAgentTarget runs a real agents.ConversationalAgent: its "Action:"
// step says nothing to the user (no "AI:"), so a negate rule ("the tail is missing") must
// not judge it and its tool must run; the final answer after "AI:" is judged.
func TestConversationalAgentTarget(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil, tailRule())
	shell := &echoTool{name: "shell"}
	model := scripted.New(
		scripted.Reply{Text: "Thought: Do I need to use a tool? Yes\nAction: shell\nAction Input: uptime"},
		scripted.Reply{Text: "Thought: Do I need to use a tool? No\nAI: Up 3 days."},
		scripted.Reply{Text: "Thought: Do I need to use a tool? No\nAI: Up 3 days.\n↩ #5"},
	)
	a := agents.NewConversationalAgent(r.guard.Model(model), r.guard.Tools(shell))
	exec := agents.NewExecutor(r.guard.Agent(a), agents.WithReturnIntermediateSteps())
	out, _, err := r.run(context.Background(), exec, "chat-conv", "uptime?", "telegram")
	if err != nil {
		t.Fatal(err)
	}
	if got := shell.inputs(); len(got) != 1 || got[0] != "uptime" {
		t.Fatalf("tool inputs %q: the Action step was judged as an answer", got)
	}
	if strings.TrimSpace(out) != "Up 3 days.\n↩ #5" {
		t.Fatalf("output %q", out)
	}
	calls := model.Calls()
	if len(calls) != 3 {
		t.Fatalf("%d model calls, want 3 (action, discarded answer, retry)", len(calls))
	}
	if tail := lastMessages(calls[2], 1); !strings.HasPrefix(messageText(tail[0]), `<system-interrupt reason="rule_violation" rule="telegram_reply_tail">`) {
		t.Errorf("retry tail %q", messageText(tail[0]))
	}
}

// customAgent is an agent type the wrapper does not know: it is judged as tool-calling
// unless told otherwise.
type customAgent struct{ agents.Agent }

// TestWithAnswerFormat: a custom agent that speaks MRKL, declared with WithAnswerFormat,
// gets MRKL targets: its Thought/Action step runs its tool unjudged.
func TestWithAnswerFormat(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil, tailRule())
	shell := &echoTool{name: "shell"}
	model := scripted.New(
		scripted.Reply{Text: "Thought: check\nAction: shell\nAction Input: uptime"},
		scripted.Reply{Text: "Thought: done\nFinal Answer: Up 3 days.\n↩ #6"},
	)
	inner := agents.NewOneShotAgent(r.guard.Model(model), r.guard.Tools(shell))
	a := r.guard.Agent(customAgent{inner}, middleware.WithAnswerFormat(middleware.FormatMRKL))
	exec := agents.NewExecutor(a)
	out, _, err := r.run(context.Background(), exec, "chat-custom", "uptime?", "telegram")
	if err != nil {
		t.Fatal(err)
	}
	if got := shell.inputs(); len(got) != 1 || got[0] != "uptime" {
		t.Fatalf("tool inputs %q: the Action step was judged as an answer", got)
	}
	if out != "Up 3 days.\n↩ #6" || len(model.Calls()) != 2 {
		t.Fatalf("output %q after %d calls", out, len(model.Calls()))
	}
}
