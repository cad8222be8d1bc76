package replay

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// OpenAIOptions tune FromOpenAI. A nil *OpenAIOptions means all defaults.
type OpenAIOptions struct {
	// Name is how errors name the input (a file name). Default "openai log".
	Name string
	// Chat is the chat of records that name none (see FromOpenAI). Default "": such a
	// record's chat is named after its opening messages.
	Chat string
	// Env is the environments of moves whose record names none. Default none.
	Env []string
}

// openAIRecord is one line of an OpenAI log: a request and its response, or a bare
// request body. Fields beyond these are ignored: request bodies carry many.
type openAIRecord struct {
	Chat     string            `json:"chat"`
	Env      []string          `json:"env"`
	Request  *openAIRequest    `json:"request"`
	Response *openAIResponse   `json:"response"`
	Messages []openAIMessage   `json:"messages"` // a bare request body
	User     string            `json:"user"`
	Metadata map[string]string `json:"metadata"`
}

type openAIRequest struct {
	Messages []openAIMessage   `json:"messages"`
	User     string            `json:"user"`
	Metadata map[string]string `json:"metadata"`
}

type openAIResponse struct {
	Choices []struct {
		Message openAIMessage `json:"message"`
	} `json:"choices"`
}

type openAIMessage struct {
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content"` // a string, an array of parts, or null
	ToolCalls    []openAICall    `json:"tool_calls"`
	FunctionCall *openAIFunction `json:"function_call"` // the legacy form
	ToolCallID   string          `json:"tool_call_id"`  // a "tool" message: the call it answers
	OK           *bool           `json:"ok"`            // a "tool" message: false when the host logged a failure
	// ReasoningContent is an assistant message's reasoning (DeepSeek, vLLM…): the move's
	// Reasoning is its first, up to the answer.
	ReasoningContent string `json:"reasoning_content"`
}

type openAICall struct {
	ID       string         `json:"id"`
	Function openAIFunction `json:"function"`
}

type openAIFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// text returns a message's text: the string, or its text parts joined.
func (m openAIMessage) text() (string, error) {
	c := m.Content
	if len(c) == 0 || string(c) == "null" {
		return "", nil
	}
	if c[0] == '"' {
		var s string
		err := json.Unmarshal(c, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(c, &parts); err != nil {
		return "", errors.New(`"content" is neither a string nor an array of parts`)
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" || p.Type == "input_text" || p.Type == "output_text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// FromOpenAI converts an OpenAI chat-completions log into a transcript: it reads r and
// writes one move per line to w, returning how many moves it wrote.
//
// The log is JSON Lines, one model call per line, in either form:
//
//	{"chat":"tg-7","env":["telegram"],"request":{"model":"gpt-4o","messages":[…]},"response":{"choices":[{"message":{…}}]}}
//	{"model":"gpt-4o","messages":[…],"user":"tg-7","metadata":{"env":"telegram"}}
//
// the first a request body with the response it got (the response may be left out),
// the second a bare request body, as a proxy or a client-side hook logs them. Only the
// messages, and the first choice's message, are read; every other field is ignored.
// A streamed response is logged as its assembled message, not as its chunks.
//
// A call's messages, with the response's message after them, are the chat so far. Each
// "user" message opens a move; the "tool_calls" (or the legacy "function_call") of the
// "assistant" messages after it are its tools, with their "arguments" as args; the first
// "assistant" message without calls is its answer and closes it. The user message's text
// is the move's "input". A "tool" message is a call's result: the log format has no flag
// for a failed one, so a call is "ok" unless its tool message (matched by
// "tool_call_id") carries the field "ok": false, which a host that marks failures
// (streamrules.MarkToolFailed) can add to what it logs. "system" and "developer" messages
// are skipped; content may be a string or an array of text parts.
// A move with no answer yet is left for a later call to close.
//
// Every call of a chat repeats the chat so far, so a move is written once: the first
// time a call shows it closed. (Moves are told apart by what they hold and where they
// stand, so a chat whose history a memory window cuts still gives each move once.)
//
// The chat is the record's "chat", else the request's "metadata.chat_id", else its
// "user", else OpenAIOptions.Chat, else a name made from the chat's opening messages
// ("openai-" and 12 hex digits). Give one of the first three where you can: two chats
// that open with the same words would otherwise be one. The environments are the
// record's "env", else "metadata.env" (comma-separated), else OpenAIOptions.Env.
// Moves are written without numbers: in a replay they follow each other.
//
// A line that is not such a record is a *LineError; nothing after it is read.
func FromOpenAI(r io.Reader, w io.Writer, opts *OpenAIOptions) (int, error) {
	o := OpenAIOptions{Name: "openai log"}
	if opts != nil {
		o = *opts
		if o.Name == "" {
			o.Name = "openai log"
		}
	}
	out := NewWriter(w)
	seen := map[string]map[string]int{} // chat → move fingerprint → times written
	written := 0
	rd := newLineReader(r)
	for {
		line, n, err := rd.next()
		if errors.Is(err, io.EOF) {
			return written, nil
		}
		if err != nil {
			return written, fmt.Errorf("replay: %s: %w", o.Name, err)
		}
		moves, err := openAIMoves(line, &o)
		if err != nil {
			return written, &LineError{File: o.Name, Line: n, Err: err}
		}
		count := map[string]int{} // fingerprint → occurrences in this call's chat so far
		for _, m := range moves {
			fp := fingerprint(m)
			count[fp]++
			if seen[m.Chat] == nil {
				seen[m.Chat] = map[string]int{}
			}
			if count[fp] <= seen[m.Chat][fp] {
				continue // written from an earlier call of this chat
			}
			seen[m.Chat][fp] = count[fp]
			if err := out.Write(m); err != nil {
				return written, &LineError{File: o.Name, Line: n, Err: err}
			}
			written++
		}
	}
}

// openAIMoves returns the closed moves of one call's chat.
func openAIMoves(line []byte, o *OpenAIOptions) ([]Move, error) {
	var rec openAIRecord
	if err := json.Unmarshal(line, &rec); err != nil {
		return nil, cleanJSONError(err)
	}
	msgs, user, meta := rec.Messages, rec.User, rec.Metadata
	if rec.Request != nil {
		msgs, user, meta = rec.Request.Messages, rec.Request.User, rec.Request.Metadata
	}
	if msgs == nil {
		return nil, errors.New(`neither "request.messages" nor "messages": not a chat-completions record`)
	}
	if rec.Response != nil && len(rec.Response.Choices) > 0 {
		msgs = append(msgs, rec.Response.Choices[0].Message)
	}
	chat := firstNonEmpty(rec.Chat, meta["chat_id"], user, o.Chat)
	env := rec.Env
	if env == nil && meta["env"] != "" {
		for _, e := range strings.Split(meta["env"], ",") {
			if e = strings.TrimSpace(e); e != "" {
				env = append(env, e)
			}
		}
	}
	if env == nil {
		env = o.Env
	}
	var out []Move
	var cur *Move
	var callIndex map[string]int // the current move's call IDs → their index in its tools
	opening := sha256.New()      // the messages up to the first user message: the chat's name of last resort
	for i, m := range msgs {
		text, err := m.text()
		if err != nil {
			return nil, fmt.Errorf("messages[%d]: %v", i, err)
		}
		if len(out) == 0 && cur == nil {
			fmt.Fprintf(opening, "%s\x00%s\x00", m.Role, text)
		}
		switch m.Role {
		case "user":
			cur = &Move{Env: env, Input: &text}
			callIndex = nil
		case "tool":
			if cur == nil || m.OK == nil {
				continue
			}
			if j, ok := callIndex[m.ToolCallID]; ok {
				cur.Tools[j].OK = m.OK
			}
		case "assistant":
			if cur == nil {
				continue // an assistant message before any user one opens nothing
			}
			if cur.Reasoning == "" && strings.TrimSpace(m.ReasoningContent) != "" {
				cur.Reasoning = m.ReasoningContent
			}
			if len(m.ToolCalls) > 0 || m.FunctionCall != nil {
				for _, c := range m.ToolCalls {
					if c.ID != "" {
						if callIndex == nil {
							callIndex = map[string]int{}
						}
						callIndex[c.ID] = len(cur.Tools)
					}
					cur.Tools = append(cur.Tools, ToolCall{Name: c.Function.Name, Args: c.Function.Arguments})
				}
				if f := m.FunctionCall; f != nil {
					cur.Tools = append(cur.Tools, ToolCall{Name: f.Name, Args: f.Arguments})
				}
				continue
			}
			cur.Answer = text
			out = append(out, *cur)
			cur = nil
		}
	}
	if chat == "" {
		chat = "openai-" + hex.EncodeToString(opening.Sum(nil))[:12]
	}
	for i := range out {
		out[i].Chat = chat
		for j, c := range out[i].Tools {
			if c.Name == "" {
				return nil, fmt.Errorf("a tool call without a function name (move %d, call %d)", i+1, j+1)
			}
		}
	}
	return out, nil
}

// fingerprint tells moves apart by what they hold.
func fingerprint(m Move) string {
	h := sha256.New()
	b, _ := json.Marshal(m) // a Move always marshals
	h.Write(b)
	return string(h.Sum(nil))
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
