package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	"github.com/tmc/langchaingo/llms"
)

// LangChainGo's openai client streams a response's tool calls through the same streaming
// func as the answer's text: each tool-call delta as the JSON of the delta list
// (`[{"id":"call_1","type":"function","function":{"name":"shell","arguments":""}}]`), a
// legacy function call as `{"name":…,"arguments":…}`. A client printing its stream would
// show them to the user. Inside a move the model wrapper keeps them out (unless
// Config.StreamToolCalls): the executor reads the calls from the response, never from the
// stream, so nothing else needs them.

// withoutToolChunks returns options with the caller's streaming funcs wrapped to drop
// tool-call chunks, and opts updated to match. A caller without a streaming func gets
// options as they are.
func withoutToolChunks(options []llms.CallOption, opts *llms.CallOptions) []llms.CallOption {
	if opts.StreamingFunc == nil && opts.StreamingReasoningFunc == nil {
		return options
	}
	out := slices.Clip(options)
	if f := opts.StreamingFunc; f != nil {
		opts.StreamingFunc = func(ctx context.Context, chunk []byte) error {
			if isToolChunk(chunk) {
				return nil
			}
			return f(ctx, chunk)
		}
		out = append(out, llms.WithStreamingFunc(opts.StreamingFunc))
	}
	if f := opts.StreamingReasoningFunc; f != nil {
		opts.StreamingReasoningFunc = func(ctx context.Context, reasoning, chunk []byte) error {
			if isToolChunk(chunk) {
				if len(reasoning) == 0 {
					return nil
				}
				chunk = nil
			}
			return f(ctx, reasoning, chunk)
		}
		out = append(out, llms.WithStreamingReasoningFunc(opts.StreamingReasoningFunc))
	}
	return out
}

// streamedCall is the JSON the openai client streams for one tool call, or for a legacy
// function call (Name and Arguments at the top).
type streamedCall struct {
	ID        *string          `json:"id"`
	Type      *string          `json:"type"`
	Function  *json.RawMessage `json:"function"`
	Name      *string          `json:"name"`
	Arguments *string          `json:"arguments"`
}

// isToolChunk reports whether chunk is a tool-call delta as the openai client streams it:
// a JSON list of objects each with "type" and "function", or one object with exactly
// "name" and "arguments". A text chunk is JSON of that shape only if the model wrote that
// JSON as its answer, word for word in one chunk. The first byte decides for almost
// every text chunk, so text pays one comparison.
func isToolChunk(chunk []byte) bool {
	if len(chunk) < 2 || (chunk[0] != '[' && chunk[0] != '{') {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(chunk))
	dec.DisallowUnknownFields()
	if chunk[0] == '{' {
		var c streamedCall
		return dec.Decode(&c) == nil && !dec.More() && c.Name != nil && c.Arguments != nil && c.Function == nil && c.Type == nil
	}
	var cs []streamedCall
	if dec.Decode(&cs) != nil || dec.More() || len(cs) == 0 {
		return false
	}
	for _, c := range cs {
		if c.Type == nil || c.Function == nil || c.Name != nil || c.Arguments != nil {
			return false
		}
	}
	return true
}
