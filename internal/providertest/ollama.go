package providertest

import (
	"encoding/json"
	"fmt"
	"time"
)

type ollamaBody struct {
	Model    string `json:"model"`
	Messages []struct {
		Role      string            `json:"role"`
		Content   *string           `json:"content"`
		ToolCalls []json.RawMessage `json:"tool_calls"`
	} `json:"messages"`
	Stream  *bool `json:"stream"`
	Options struct {
		Stop []string `json:"stop"`
	} `json:"options"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

func decodeOllama(raw []byte) (Request, error) {
	var b ollamaBody
	if err := json.Unmarshal(raw, &b); err != nil {
		return Request{}, err
	}
	// Like the real server: no "stream" key means streaming.
	req := Request{Stream: b.Stream == nil || *b.Stream, StopWords: b.Options.Stop}
	for _, t := range b.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	for i, m := range b.Messages {
		if m.Content == nil && len(m.ToolCalls) == 0 {
			return req, fmt.Errorf("messages[%d].content: missing", i)
		}
		msg := Message{Role: m.Role}
		if m.Content != nil {
			msg.Text, msg.TextBlocks = *m.Content, []string{*m.Content}
		}
		req.Messages = append(req.Messages, msg)
	}
	return req, nil
}

// validateOllama applies /api/chat's rules: known roles, a model, at least one message.
func validateOllama(req *Request) []string {
	var out []string
	if len(req.Messages) == 0 {
		out = append(out, "messages: at least one message is required")
	}
	for i, m := range req.Messages {
		switch m.Role {
		case "system", "user", "assistant", "tool":
		default:
			out = append(out, fmt.Sprintf("messages[%d].role: unknown %q", i, m.Role))
		}
	}
	return out
}

func ollamaLine(a *answer, content string, done bool) []byte {
	line := map[string]any{
		"model": a.model, "created_at": time.Now().UTC().Format(time.RFC3339Nano),
		"message": map[string]any{"role": "assistant", "content": content}, "done": done,
	}
	if done {
		line["done_reason"] = a.stop
		line["prompt_eval_count"] = 10
		line["eval_count"] = len(a.text)/4 + 1
	}
	return append(mustJSON(line), '\n')
}

// ollamaWhole is the non-streamed answer: one JSON object.
func ollamaWhole(a *answer) []byte {
	if len(a.calls) > 0 {
		panic("providertest: the v0.1.14 ollama client has no tool calls; script MRKL replies")
	}
	return ollamaLine(a, a.text, true)
}

func ollamaLines(a *answer) [][]byte {
	if len(a.calls) > 0 {
		panic("providertest: the v0.1.14 ollama client has no tool calls; script MRKL replies")
	}
	var out [][]byte
	for _, p := range a.pieces() {
		out = append(out, ollamaLine(a, p, false))
	}
	return append(out, ollamaLine(a, "", true))
}
