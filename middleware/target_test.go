package middleware_test

import (
	"testing"

	"github.com/tmc/langchaingo/llms"

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
