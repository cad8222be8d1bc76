package middleware

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

// held builds held speech from chunks, as the streaming func would have.
func held(chunks ...string) *heldSpeech {
	h := &heldSpeech{}
	for _, c := range chunks {
		h.text = append(h.text, c...)
		h.ends = append(h.ends, len(h.text))
	}
	return h
}

func (h *heldSpeech) chunks() []string {
	var out []string
	start := 0
	for _, e := range h.ends {
		out = append(out, string(h.text[start:e]))
		start = e
	}
	return out
}

// TestRepair: the repaired text replaces what the answer said, per format, in the
// response and in the held chunks; tool calls and the chunks beside the text stay.
func TestRepair(t *testing.T) {
	t.Parallel()
	call := llms.ToolCall{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "shell", Arguments: `{"cmd":"ls"}`}}
	tests := []struct {
		name        string
		format      AnswerFormat
		contents    []string
		chunks      []string
		fixed       string
		wantContent []string
		wantChunks  []string
	}{
		{"tool-calling, text only", FormatToolCalling, []string{"Hi ![a](u)"}, []string{"Hi ", "![a", "](u)"},
			"Hi u\n↩ #1", []string{"Hi u\n↩ #1"}, []string{"Hi u\n↩ #1"}},
		{"tool-calling, fragments after the text stay", FormatToolCalling, []string{"Hi ![a](u)"}, []string{"Hi ", "![a](u)", `[{"id":"c1"`, `}]`},
			"Hi u", []string{"Hi u"}, []string{"Hi u", `[{"id":"c1"`, `}]`}},
		{"MRKL: only the final answer changes", FormatMRKL, []string{"Thought: done\nFinal Answer: 4"}, []string{"Thought: done\n", "Final Answer: 4"},
			"4\n\n↩ #5", []string{"Thought: done\nFinal Answer: 4\n\n↩ #5"}, []string{"Thought: done\nFinal Answer: 4\n\n↩ #5"}},
		{"conversational", FormatConversational, []string{"AI: hello"}, []string{"AI: hello"},
			"hello ↩ #2", []string{"AI: hello ↩ #2"}, []string{"AI: hello ↩ #2"}},
		{"two text blocks: the first gets the whole repair", FormatToolCalling, []string{"one", "", "two"}, []string{"one", "two"},
			"one\ntwo\n↩ #3", []string{"one\ntwo\n↩ #3", "", ""}, []string{"one\ntwo\n↩ #3"}},
		{"nothing streamed", FormatToolCalling, []string{"x"}, nil, "x ↩ #4", []string{"x ↩ #4"}, nil},
	}
	for _, tt := range tests {
		resp := &llms.ContentResponse{}
		for i, c := range tt.contents {
			ch := &llms.ContentChoice{Content: c}
			if i == 0 {
				ch.ToolCalls = []llms.ToolCall{call}
			}
			resp.Choices = append(resp.Choices, ch)
		}
		h := held(tt.chunks...)
		repair(tt.format, resp, h, tt.fixed)
		var got []string
		for _, c := range resp.Choices {
			got = append(got, c.Content)
		}
		if !slices.Equal(got, tt.wantContent) {
			t.Errorf("%s: contents %q, want %q", tt.name, got, tt.wantContent)
		}
		if len(resp.Choices[0].ToolCalls) != 1 || resp.Choices[0].ToolCalls[0].FunctionCall.Arguments != `{"cmd":"ls"}` {
			t.Errorf("%s: tool calls changed: %+v", tt.name, resp.Choices[0].ToolCalls)
		}
		if got := h.chunks(); !slices.Equal(got, tt.wantChunks) {
			t.Errorf("%s: held chunks %q, want %q", tt.name, got, tt.wantChunks)
		}
		// Released: one piece when the held text is the answer's text, else the chunks.
		var sent []string
		opts := llms.CallOptions{StreamingFunc: func(_ context.Context, b []byte) error { sent = append(sent, string(b)); return nil }}
		if err := h.release(context.Background(), opts, resp, false); err != nil {
			t.Fatal(err)
		}
		if want := strings.Join(tt.wantChunks, ""); strings.Join(sent, "") != want {
			t.Errorf("%s: released %q, want %q", tt.name, sent, want)
		}
	}
}
