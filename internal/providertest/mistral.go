package providertest

import (
	"encoding/json"
	"fmt"
	"strings"
)

type mistralBody struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string  `json:"role"`
		Content    *string `json:"content"`
		ToolCallID string  `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Stream bool `json:"stream"`
	Stop   any  `json:"stop"`
	Tools  []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

func decodeMistral(raw []byte) (Request, error) {
	var b mistralBody
	if err := json.Unmarshal(raw, &b); err != nil {
		return Request{}, err
	}
	req := Request{Stream: b.Stream}
	for _, t := range b.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	for _, m := range b.Messages {
		msg := Message{Role: m.Role, ToolCallID: m.ToolCallID}
		if m.Content != nil && *m.Content != "" {
			msg.Text, msg.TextBlocks = *m.Content, []string{*m.Content}
		}
		for _, c := range m.ToolCalls {
			msg.ToolUses = append(msg.ToolUses, ToolUse{ID: c.ID, Name: c.Function.Name, Input: c.Function.Arguments})
		}
		if m.Role == "tool" {
			msg.ToolResults = []ToolResult{{ToolUseID: m.ToolCallID, Content: msg.Text}}
		}
		req.Messages = append(req.Messages, msg)
	}
	return req, nil
}

// validateMistral applies the chat-completions rules Mistral documents and enforces:
// known roles, system only first, every tool message answers a declared call by its
// tool_call_id, assistant messages say something, and the last message is the user's
// or a tool's.
func validateMistral(req *Request) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if len(req.Messages) == 0 {
		bad("messages: at least one message is required")
		return out
	}
	declared := map[string]bool{}
	for i, m := range req.Messages {
		switch m.Role {
		case "system":
			if i > 0 && req.Messages[i-1].Role != "system" {
				bad("messages[%d]: system messages must come first", i)
			}
		case "user":
			if strings.TrimSpace(m.Text) == "" {
				bad("messages[%d].content: empty", i)
			}
		case "assistant":
			if m.Text == "" && len(m.ToolUses) == 0 {
				bad("messages[%d]: an assistant message needs content or tool_calls", i)
			}
			for _, u := range m.ToolUses {
				declared[u.ID] = true
			}
		case "tool":
			if m.ToolCallID == "" {
				bad("messages[%d].tool_call_id: required for a tool message", i)
			} else if !declared[m.ToolCallID] {
				bad("messages[%d].tool_call_id: %q answers no tool call", i, m.ToolCallID)
			}
		default:
			bad("messages[%d].role: unknown %q", i, m.Role)
		}
	}
	if last := req.Messages[len(req.Messages)-1].Role; last != "user" && last != "tool" {
		bad("messages: expected last role user or tool, got %s", last)
	}
	return out
}

func (a *answer) mistralCalls() []map[string]any {
	var out []map[string]any
	for _, c := range a.calls {
		out = append(out, map[string]any{"id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": c.Input}})
	}
	return out
}

func mistralWhole(a *answer) []byte {
	msg := map[string]any{"role": "assistant", "content": a.text}
	if calls := a.mistralCalls(); len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	return mustJSON(map[string]any{
		"id": a.id, "object": "chat.completion", "created": 1700000000, "model": a.model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": a.stop}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": len(a.text)/4 + 1, "total_tokens": 11 + len(a.text)/4},
	})
}

func mistralChunk(a *answer, delta map[string]any, finish any) []byte {
	return []byte("data: " + string(mustJSON(map[string]any{
		"id": a.id, "object": "chat.completion.chunk", "created": 1700000000, "model": a.model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
	})) + "\n\n")
}

func mistralEvents(a *answer) [][]byte {
	out := [][]byte{mistralChunk(a, map[string]any{"role": "assistant", "content": ""}, nil)}
	for _, p := range a.pieces() {
		out = append(out, mistralChunk(a, map[string]any{"content": p}, nil))
	}
	if calls := a.mistralCalls(); len(calls) > 0 {
		// Mistral sends each call whole, in one delta.
		out = append(out, mistralChunk(a, map[string]any{"content": "", "tool_calls": calls}, nil))
	}
	out = append(out, mistralChunk(a, map[string]any{"content": ""}, a.stop))
	return append(out, []byte("data: [DONE]\n\n"))
}
