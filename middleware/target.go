package middleware

import (
	"context"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// AnswerFormat says where, in a model's response, the text the user would read is:
// the target of text rules.
type AnswerFormat int

const (
	// FormatToolCalling: the response's text content, whether or not it also declares tool
	// calls. A response with calls and no text says nothing and has no target.
	FormatToolCalling AnswerFormat = iota
	// FormatMRKL: a ReAct (MRKL) completion; the target is the text after "Final Answer:"
	// (and the variants agents.OneShotZeroAgent accepts). A Thought/Action step says
	// nothing to the user and has no target.
	FormatMRKL
	// FormatConversational: like FormatMRKL with the conversational agent's "AI:" marker.
	FormatConversational
)

type formatKey struct{}

func withAnswerFormat(ctx context.Context, f AnswerFormat) context.Context {
	if cur, ok := ctx.Value(formatKey{}).(AnswerFormat); ok && cur == f {
		return ctx
	}
	return context.WithValue(ctx, formatKey{}, f)
}

func answerFormatFrom(ctx context.Context) (AnswerFormat, bool) {
	f, ok := ctx.Value(formatKey{}).(AnswerFormat)
	return f, ok
}

// AgentTour marks ctx as a tour of an agent whose answers are in format f. The agent
// wrapper does this in Plan; a host running its own agent loop calls it around the model
// call that produces the answer. The model wrapper judges only such calls: any other
// model call made inside a move (a summariser, a router, a title generator) passes
// straight through and cannot spend the move's retry.
func AgentTour(ctx context.Context, f AnswerFormat) context.Context {
	return withAnswerFormat(ctx, f)
}

// AnswerTarget returns what a response says to the user, per format. Every choice is
// checked (Anthropic returns one choice per content block). For a tool-calling answer the
// choices' texts are joined back to back, exactly as a provider streams them, so the rules
// judge the bytes the client is streamed; a ReAct answer's targets (each cut out of its
// choice after its marker, and never released early) are joined with "\n".
func AnswerTarget(f AnswerFormat, resp *llms.ContentResponse) string {
	if resp == nil {
		return ""
	}
	if len(resp.Choices) == 1 {
		return choiceTarget(f, resp.Choices[0].Content)
	}
	var parts []string
	for _, c := range resp.Choices {
		if t := choiceTarget(f, c.Content); t != "" {
			parts = append(parts, t)
		}
	}
	if f == FormatToolCalling {
		return strings.Join(parts, "")
	}
	return strings.Join(parts, "\n")
}

// mrklMarkers mirror agents.OneShotZeroAgent.parseOutput: "Final Answer:" first, then
// case-insensitive variants.
var mrklMarkers = []string{"final answer:", "final answer :", "the final answer is:", "the answer is:"}

func choiceTarget(f AnswerFormat, content string) string {
	switch f {
	case FormatMRKL:
		if i := strings.LastIndex(content, "Final Answer:"); i >= 0 {
			return strings.TrimSpace(content[i+len("Final Answer:"):])
		}
		lower := strings.ToLower(content)
		for _, m := range mrklMarkers {
			if i := strings.Index(lower, m); i >= 0 {
				answer := strings.TrimSpace(content[i+len(m):])
				if !strings.Contains(strings.ToLower(answer), "\naction:") {
					return answer
				}
			}
		}
		return ""
	case FormatConversational:
		if i := strings.LastIndex(content, "AI:"); i >= 0 {
			return strings.TrimSpace(content[i+len("AI:"):])
		}
		return ""
	}
	return content
}
