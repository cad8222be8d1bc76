package replay

import (
	"github.com/tmc/langchaingo/llms"
)

// FromChatMessages turns a LangChainGo chat history (what memory.ChatMessageHistory's
// Messages returns) into the moves of chat, each in the environments env. A human
// message opens a move; an AI message's tool calls are its tools; the next AI message
// without tool calls is its answer and closes it. A move left open at the end (no answer
// yet) is not returned. Moves are numbered from 1.
//
// The executor's memory saves only each run's input and output, so from a stock
// executor's memory the moves have answers and no tools: enough for text rules.
func FromChatMessages(chat string, env []string, msgs []llms.ChatMessage) []Move {
	var out []Move
	var cur *Move
	var n int64
	for _, msg := range msgs {
		switch m := msg.(type) {
		case llms.HumanChatMessage, *llms.HumanChatMessage:
			n++
			cur = &Move{Chat: chat, Move: n, Env: env}
		case llms.AIChatMessage:
			cur = aiMessage(cur, m, &out)
		case *llms.AIChatMessage:
			cur = aiMessage(cur, *m, &out)
		}
	}
	return out
}

func aiMessage(cur *Move, m llms.AIChatMessage, out *[]Move) *Move {
	if cur == nil {
		return nil // an AI message before any human one: no move to give it to
	}
	if len(m.ToolCalls) > 0 || m.FunctionCall != nil {
		for _, tc := range m.ToolCalls {
			if tc.FunctionCall != nil {
				cur.Tools = append(cur.Tools, ToolCall{Name: tc.FunctionCall.Name, Args: tc.FunctionCall.Arguments})
			}
		}
		if m.FunctionCall != nil {
			cur.Tools = append(cur.Tools, ToolCall{Name: m.FunctionCall.Name, Args: m.FunctionCall.Arguments})
		}
		return cur
	}
	cur.Answer = m.Content
	*out = append(*out, *cur)
	return nil
}
