package scripted

import (
	"context"
	"fmt"

	"github.com/tmc/langchaingo/llms"
)

// Bench is a zero-latency model for benchmarks that records nothing and allocates little,
// so the cost of what wraps it shows: it declares one call of the tool "shell"
// ({"__arg1":"ls dirN"}) per tour until the history holds Calls tool results, then
// answers Answer, streamed in Chunk-byte pieces (in one piece where Chunk is 0).
type Bench struct {
	Calls  int
	Answer string
	Chunk  int
}

// Call implements llms.Model.
func (m *Bench) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// GenerateContent implements llms.Model.
func (m *Bench) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, opt := range options {
		opt(&o)
	}
	results := 0
	for _, msg := range messages {
		if msg.Role == llms.ChatMessageTypeTool {
			results++
		}
	}
	if results < m.Calls {
		tc := llms.ToolCall{ID: fmt.Sprintf("call_%d", results), Type: "function",
			FunctionCall: &llms.FunctionCall{Name: "shell", Arguments: fmt.Sprintf(`{"__arg1":"ls dir%d"}`, results)}}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{tc}, FuncCall: tc.FunctionCall}}}, nil
	}
	if o.StreamingFunc != nil {
		chunk := m.Chunk
		if chunk <= 0 {
			chunk = max(len(m.Answer), 1)
		}
		for i := 0; i < len(m.Answer); i += chunk {
			if err := o.StreamingFunc(ctx, []byte(m.Answer[i:min(i+chunk, len(m.Answer))])); err != nil {
				return nil, err
			}
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: m.Answer, StopReason: "stop"}}}, nil
}
