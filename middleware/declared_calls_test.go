package middleware_test

import (
	"slices"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/middleware"
)

// TestDeclaredCallsPerFormat: the calls a response declares are read as the agent of each
// format would run them: every tool call and a legacy FuncCall of every choice, with
// {"__arg1": s} unwrapped to s and any other arguments kept as written; the MRKL and
// conversational "Action:" / "Action Input:" step (a trailing Observation cut off), and no
// call when the choice is a final answer.
func TestDeclaredCallsPerFormat(t *testing.T) {
	t.Parallel()
	fc := func(name, args string) *llms.FunctionCall { return &llms.FunctionCall{Name: name, Arguments: args} }
	type call = streamrules.DeclaredCall
	dc := func(tool, input string) call { return call{Tool: tool, Input: input} }
	tests := []struct {
		name string
		f    middleware.AnswerFormat
		resp *llms.ContentResponse
		want []call
	}{
		{"nil response", middleware.FormatToolCalling, nil, nil},
		{"tool calls of every choice", middleware.FormatToolCalling, &llms.ContentResponse{Choices: []*llms.ContentChoice{
			nil,
			{Content: "text", ToolCalls: []llms.ToolCall{{FunctionCall: fc("shell", `{"__arg1":"rm -rf /"}`)}, {ID: "no function"}}},
			{ToolCalls: []llms.ToolCall{{FunctionCall: fc("deploy", `{"target":"prod"}`)}}},
			{FuncCall: fc("legacy", `{"__arg1":"x"}`)},
		}}, []call{dc("shell", "rm -rf /"), dc("deploy", `{"target":"prod"}`), dc("legacy", "x")}},
		// llms/openai sets FuncCall to the first tool call's function: one call, not two,
		// and a FuncCall beside tool calls is never run by the functions agent.
		{"FuncCall mirrored from the tool calls", middleware.FormatToolCalling, &llms.ContentResponse{Choices: []*llms.ContentChoice{
			{ToolCalls: []llms.ToolCall{{FunctionCall: fc("shell", `{"cmd":"ls"}`)}, {FunctionCall: fc("deploy", `{}`)}}, FuncCall: fc("shell", `{"cmd":"ls"}`)},
		}}, []call{dc("shell", `{"cmd":"ls"}`), dc("deploy", `{}`)}},
		{"__arg1 not a string or not JSON", middleware.FormatToolCalling, &llms.ContentResponse{Choices: []*llms.ContentChoice{
			{ToolCalls: []llms.ToolCall{{FunctionCall: fc("a", `{"__arg1":5}`)}, {FunctionCall: fc("b", `__arg1 broken {`)}}},
		}}, []call{dc("a", `{"__arg1":5}`), dc("b", `__arg1 broken {`)}},
		{"__arg1 as the agent decodes it: escaped, duplicated", middleware.FormatToolCalling, &llms.ContentResponse{Choices: []*llms.ContentChoice{
			{ToolCalls: []llms.ToolCall{{FunctionCall: fc("shell", `{"\u005f_arg1":"rm -rf /srv/data"}`)}, {FunctionCall: fc("shell", `{"__arg1":"ls","__arg1":"rm -rf /"}`)},
				{FunctionCall: fc("shell", `{"__ARG1":"rm -rf /"}`)}}},
		}}, []call{dc("shell", "rm -rf /srv/data"), dc("shell", "rm -rf /"), dc("shell", `{"__ARG1":"rm -rf /"}`)}},
		{"MRKL action", middleware.FormatMRKL, &llms.ContentResponse{Choices: []*llms.ContentChoice{
			{Content: "Thought: clean up\nAction:  shell \nAction Input:  rm -rf /tmp/x \nObservation:"},
		}}, []call{dc("shell", "rm -rf /tmp/x")}},
		{"MRKL final answer", middleware.FormatMRKL, &llms.ContentResponse{Choices: []*llms.ContentChoice{
			{Content: "Action: shell\nAction Input: ls\nFinal Answer: done"},
		}}, nil},
		{"conversational action", middleware.FormatConversational, &llms.ContentResponse{Choices: []*llms.ContentChoice{
			{Content: "Thought: Do I need to use a tool? Yes\nAction: deploy\nAction Input: prod"},
		}}, []call{dc("deploy", "prod")}},
		{"tool calls ignored in MRKL", middleware.FormatMRKL, &llms.ContentResponse{Choices: []*llms.ContentChoice{
			{Content: "thinking", ToolCalls: []llms.ToolCall{{FunctionCall: fc("shell", "ls")}}},
		}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := middleware.DeclaredCalls(tt.f, tt.resp); !slices.Equal(got, tt.want) {
				t.Errorf("DeclaredCalls\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
