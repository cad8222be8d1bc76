package providertest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/streamrules/streamrules/internal/scripted"
)

// anthropicBody is the part of a Messages API request the server reads.
type anthropicBody struct {
	Model     string             `json:"model"`
	Messages  []anthropicMessage `json:"messages"`
	System    json.RawMessage    `json:"system"`
	MaxTokens int                `json:"max_tokens"`
	Stream    bool               `json:"stream"`
	Stop      []string           `json:"stop_sequences"`
	Tools     []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string or a list of blocks
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

func decodeAnthropic(raw []byte) (Request, error) {
	var b anthropicBody
	if err := json.Unmarshal(raw, &b); err != nil {
		return Request{}, err
	}
	req := Request{Stream: b.Stream, StopWords: b.Stop}
	if len(b.System) > 0 && string(b.System) != "null" {
		if err := json.Unmarshal(b.System, &req.System); err != nil {
			return req, fmt.Errorf("system: want a string: %w", err)
		}
	}
	for _, t := range b.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	if b.MaxTokens <= 0 {
		req.Violations = append(req.Violations, "max_tokens: required")
	}
	for i, m := range b.Messages {
		msg := Message{Role: m.Role}
		var s string
		if err := json.Unmarshal(m.Content, &s); err == nil {
			msg.Text, msg.TextBlocks = s, []string{s}
			req.Messages = append(req.Messages, msg)
			continue
		}
		var blocks []anthropicBlock
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return req, fmt.Errorf("messages[%d].content: %w", i, err)
		}
		for j, bl := range blocks {
			switch bl.Type {
			case "text":
				if bl.Text == nil {
					return req, fmt.Errorf("messages[%d].content[%d].text: missing", i, j)
				}
				msg.TextBlocks = append(msg.TextBlocks, *bl.Text)
			case "tool_use":
				msg.ToolUses = append(msg.ToolUses, ToolUse{ID: bl.ID, Name: bl.Name, Input: string(bl.Input)})
			case "tool_result":
				var content string
				if err := json.Unmarshal(bl.Content, &content); err != nil {
					content = string(bl.Content)
				}
				msg.ToolResults = append(msg.ToolResults, ToolResult{ToolUseID: bl.ToolUseID, Content: content})
			case "image":
			default:
				return req, fmt.Errorf("messages[%d].content[%d].type: unknown %q", i, j, bl.Type)
			}
		}
		msg.Text = strings.Join(msg.TextBlocks, "\n")
		req.Messages = append(req.Messages, msg)
	}
	return req, nil
}

// validateAnthropic applies the Messages API's documented rules.
func validateAnthropic(req *Request) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if len(req.Messages) == 0 {
		bad("messages: at least one message is required")
	}
	usesTools := false
	for i, m := range req.Messages {
		switch {
		case m.Role != "user" && m.Role != "assistant":
			bad("messages[%d].role: %q (system content goes in the top-level system field)", i, m.Role)
		case i == 0 && m.Role != "user":
			bad("messages[0].role: the first message must be a user message")
		case i > 0 && m.Role == req.Messages[i-1].Role:
			bad("messages[%d].role: roles must alternate between user and assistant", i)
		}
		for j, t := range m.TextBlocks {
			if strings.TrimSpace(t) == "" {
				bad("messages[%d].content[%d]: text content blocks must be non-empty", i, j)
			}
		}
		if len(m.TextBlocks) == 0 && len(m.ToolUses) == 0 && len(m.ToolResults) == 0 {
			bad("messages[%d].content: empty", i)
		}
		for _, u := range m.ToolUses {
			usesTools = true
			if m.Role != "assistant" {
				bad("messages[%d]: tool_use blocks belong to assistant messages", i)
			}
			if jsonObject(u.Input) == nil {
				bad("messages[%d]: tool_use %s: input must be an object", i, u.ID)
			}
			if !hasResult(req.Messages, i+1, u.ID) {
				bad("messages[%d]: tool_use ids were found without tool_result blocks immediately after: %s", i, u.ID)
			}
		}
		for _, r := range m.ToolResults {
			usesTools = true
			if i == 0 || !hasUse(req.Messages[i-1], r.ToolUseID) {
				bad("messages[%d]: unexpected tool_use_id found in tool_result blocks: %s", i, r.ToolUseID)
			}
		}
	}
	if usesTools && len(req.Tools) == 0 {
		bad("tools: requests which include tool_use or tool_result blocks must define tools")
	}
	return out
}

func hasResult(ms []Message, i int, id string) bool {
	if i >= len(ms) {
		return false
	}
	for _, r := range ms[i].ToolResults {
		if r.ToolUseID == id {
			return true
		}
	}
	return false
}

func hasUse(m Message, id string) bool {
	for _, u := range m.ToolUses {
		if u.ID == id {
			return true
		}
	}
	return false
}

// blocks is the answer's content, as Claude lays it out: thinking and redacted_thinking
// first, then text, then tool_use.
func (a *answer) anthropicBlocks() []map[string]any {
	var out []map[string]any
	if a.reasoning != "" {
		out = append(out, map[string]any{"type": "thinking", "thinking": a.reasoning, "signature": "sig-" + a.id})
	}
	if a.redacted != "" {
		out = append(out, map[string]any{"type": "redacted_thinking", "data": a.redacted})
	}
	for _, b := range a.blocks {
		out = append(out, map[string]any{"type": "text", "text": b})
	}
	if a.blocks == nil && (a.text != "" || len(a.calls) == 0) {
		out = append(out, map[string]any{"type": "text", "text": a.text})
	}
	for _, c := range a.calls {
		input := jsonObject(c.Input)
		if input == nil {
			input = map[string]any{}
		}
		out = append(out, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": input})
	}
	return out
}

func (a *answer) usage() map[string]any {
	return map[string]any{"input_tokens": 10, "output_tokens": len(a.text)/4 + 1}
}

func anthropicWhole(a *answer) []byte {
	return mustJSON(map[string]any{
		"id": a.id, "type": "message", "role": "assistant", "model": a.model,
		"content": a.anthropicBlocks(), "stop_reason": a.stop, "stop_sequence": nil, "usage": a.usage(),
	})
}

func sse(event string, data any) []byte {
	return []byte("event: " + event + "\ndata: " + string(mustJSON(data)) + "\n\n")
}

func anthropicEvents(a *answer) [][]byte {
	out := [][]byte{sse("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": a.id, "type": "message", "role": "assistant", "model": a.model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1},
	}})}
	for i, b := range a.anthropicBlocks() {
		start := map[string]any{}
		for k, v := range b {
			start[k] = v
		}
		switch b["type"] {
		case "text":
			start["text"] = ""
		case "thinking":
			start["thinking"], start["signature"] = "", ""
		case "tool_use":
			start["input"] = map[string]any{}
		}
		out = append(out, sse("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start}))
		switch b["type"] {
		case "redacted_thinking": // whole in its start event
		case "thinking":
			for _, p := range scripted.SplitChunks(b["thinking"].(string), a.chunk) {
				out = append(out, sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "thinking_delta", "thinking": p}}))
			}
			out = append(out, sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "signature_delta", "signature": b["signature"]}}))
		case "text":
			for _, p := range scripted.SplitChunks(b["text"].(string), a.chunk) {
				out = append(out, sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": p}}))
			}
		default:
			input := string(mustJSON(b["input"]))
			for _, p := range scripted.SplitChunks(input, a.chunk) {
				out = append(out, sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": p}}))
			}
		}
		out = append(out, sse("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}))
	}
	out = append(out,
		sse("message_delta", map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": a.stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": len(a.text)/4 + 1}}),
		sse("message_stop", map[string]any{"type": "message_stop"}))
	return out
}
