package scripted_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules/internal/scripted"
)

// TestBench: one shell call per tour while the history holds fewer than Calls tool
// results, then the answer streamed in Chunk-byte pieces (one piece where Chunk is 0).
func TestBench(t *testing.T) {
	ctx := context.Background()
	history := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "list")}
	m := &scripted.Bench{Calls: 2, Answer: "done, all ten", Chunk: 4}
	for i := range 2 {
		resp, err := m.GenerateContent(ctx, history)
		if err != nil {
			t.Fatal(err)
		}
		tcs := resp.Choices[0].ToolCalls
		if len(tcs) != 1 || tcs[0].FunctionCall.Name != "shell" || tcs[0].FunctionCall.Arguments != `{"__arg1":"ls dir`+string(rune('0'+i))+`"}` {
			t.Fatalf("tour %d: %+v", i, tcs)
		}
		history = append(history, llms.MessageContent{Role: llms.ChatMessageTypeTool,
			Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: tcs[0].ID, Name: "shell", Content: "ok"}}})
	}
	for _, c := range []struct {
		chunk int
		want  []string
	}{{4, []string{"done", ", al", "l te", "n"}}, {0, []string{"done, all ten"}}} {
		m.Chunk = c.chunk
		var got []string
		resp, err := m.GenerateContent(ctx, history, llms.WithStreamingFunc(func(_ context.Context, p []byte) error {
			got = append(got, string(p))
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) || resp.Choices[0].Content != m.Answer || len(resp.Choices[0].ToolCalls) != 0 {
			t.Errorf("chunk %d: streamed %q, answered %+v", c.chunk, got, resp.Choices[0])
		}
	}
}
