package scripted

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tmc/langchaingo/llms"
)

// defaultChunk is the streaming chunk size, in bytes, used when Reply.Chunk is 0.
const defaultChunk = 4

// ErrNoReply is returned (wrapped, as "scripted: no reply left for call N")
// when a model built by [New] is called more often than it has replies.
var ErrNoReply = errors.New("scripted: no reply left")

// Reply is one scripted answer of the model.
type Reply struct {
	// Text is the content of the answer. Stop words from the call options cut
	// it before it is streamed or returned.
	Text string
	// Reasoning, if set, is streamed through StreamingReasoningFunc before
	// Text and returned in ContentChoice.ReasoningContent.
	Reasoning string
	// ToolCalls are the tool calls the model declares. Type defaults to
	// "function"; an empty ID is filled with "call_N", N counting from 1 per
	// model (per server in openaitest), so IDs are unique like real ones.
	ToolCalls []llms.ToolCall
	// Chunk is the size in bytes of the streamed pieces (0 means 4). A piece
	// is stretched to the end of a rune rather than splitting it, since real
	// providers stream whole tokens.
	Chunk int
	// Pieces, in this package only, are streamed exactly as given, in place of
	// Text cut by Chunk: they may end inside a UTF-8 sequence, as a provider
	// that streams bytes does. The answer's content is their concatenation
	// (Text is then ignored).
	Pieces []string
	// Blocks, in providertest's Anthropic only, is the answer's text as several
	// text content blocks, streamed one after the other before any tool_use
	// block (Text is then ignored).
	Blocks []string
	// Redacted, in providertest's Anthropic only, adds a redacted_thinking block with
	// this data after the thinking block (Reasoning): what Claude sends where its safety
	// systems encrypt part of the reasoning.
	Redacted string
	// Delay makes the model wait before answering; cancelling the context
	// interrupts the wait. Useful for timeout and cancellation tests.
	Delay time.Duration
	// Err, if set, is returned instead of a response.
	Err error
	// Pace, in openaitest only, is the wait between streamed chunks: a provider
	// generating at a steady rate. Cancelling the request interrupts it.
	Pace time.Duration
	// DropAfter, in openaitest only, closes the connection after that many streamed
	// chunks (the role chunk counts), without finishing the stream: a connection lost
	// mid-answer. 0: never.
	DropAfter int
}

// Call is one recorded GenerateContent call.
type Call struct {
	// Messages is what the model was sent.
	Messages []llms.MessageContent
	// Options is the result of applying all call options in order.
	// Tool parameter schemas, ToolChoice and Metadata values are shared with
	// the caller, so treat them as read-only.
	Options llms.CallOptions
	// N is the 0-based index of the call.
	N int
}

// Text returns the text parts of all messages, joined by newlines. For a
// completion-style agent (MRKL) this is the whole prompt.
func (c Call) Text() string {
	var parts []string
	for _, m := range c.Messages {
		for _, p := range m.Parts {
			if t, ok := p.(llms.TextContent); ok {
				parts = append(parts, t.Text)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// Model is a scripted [llms.Model]. It is safe for concurrent use.
type Model struct {
	reply func(Call) Reply

	mu    sync.Mutex
	calls []Call
	ids   int // last tool call ID handed out
}

var _ llms.Model = (*Model)(nil)

// New returns a model that answers call N with replies[N]. Once the script
// has run out, calls fail with an error wrapping [ErrNoReply].
func New(replies ...Reply) *Model {
	replies = slices.Clone(replies)
	return NewFunc(func(c Call) Reply {
		if c.N >= len(replies) {
			return Reply{Err: fmt.Errorf("%w for call %d", ErrNoReply, c.N)}
		}
		return replies[c.N]
	})
}

// Sequence returns a function that hands out replies in order, one per call,
// and false once they have run out. It is safe for concurrent use. The test
// servers answer with it, since a request they reject consumes no reply (so
// the request's number cannot index the script the way [New] does).
func Sequence(replies ...Reply) func() (Reply, bool) {
	replies = slices.Clone(replies)
	var mu sync.Mutex
	next := 0
	return func() (Reply, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(replies) {
			return Reply{}, false
		}
		next++
		return replies[next-1], true
	}
}

// NewFunc returns a model that answers each call with f(call). f may be
// called concurrently (one goroutine per GenerateContent) and gets its own
// copy of the call, so it can drive many independent chats, e.g. by looking
// at call.Messages.
func NewFunc(f func(call Call) Reply) *Model {
	return &Model{reply: f}
}

// Calls returns a deep copy of every call that reached the model, in order.
// Calls rejected because their context was already done are not recorded.
func (m *Model) Calls() []Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Call, len(m.calls))
	for i, c := range m.calls {
		out[i] = cloneCall(c)
	}
	return out
}

// Call implements the deprecated single-prompt interface the way providers
// do, through [llms.GenerateFromSinglePrompt].
func (m *Model) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// GenerateContent records the call and answers it with the next reply.
func (m *Model) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var opts llms.CallOptions
	for _, opt := range options {
		opt(&opts)
	}
	// A request on a dead context never reaches a real provider, so it is
	// neither recorded nor allowed to consume a reply.
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	m.mu.Lock()
	call := Call{Messages: cloneMessages(messages), Options: cloneOptions(opts), N: len(m.calls)}
	m.calls = append(m.calls, call)
	m.mu.Unlock()

	reply := m.reply(cloneCall(call))
	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if reply.Err != nil {
		return nil, reply.Err
	}

	pieces := reply.Pieces
	if pieces != nil {
		reply.Text = strings.Join(pieces, "")
	}
	text := CutAtStop(reply.Text, opts.StopWords)
	if pieces == nil || text != reply.Text {
		pieces = SplitChunks(text, reply.Chunk)
	}
	if opts.StreamingFunc != nil || opts.StreamingReasoningFunc != nil {
		if err := stream(ctx, &opts, reply.Reasoning, pieces, reply.Chunk); err != nil {
			return nil, err
		}
	}

	choice := &llms.ContentChoice{
		Content:          text,
		ReasoningContent: reply.Reasoning,
		StopReason:       "stop",
		ToolCalls:        m.toolCalls(reply.ToolCalls),
	}
	if len(choice.ToolCalls) > 0 {
		// llms/openai sets FuncCall to the very same *FunctionCall as
		// ToolCalls[0]; agents that only look at FuncCall depend on it.
		choice.StopReason = "tool_calls"
		choice.FuncCall = choice.ToolCalls[0].FunctionCall
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{choice}}, nil
}

// stream delivers reasoning, then text, piece by piece. StreamingFunc only
// sees non-empty text pieces; StreamingReasoningFunc sees every piece as
// (reasoning, text) with the other half empty, which is how llms/openai calls
// it. Callback errors are wrapped with the same words llms/openai and
// llms/anthropic use, so errors.Is keeps working.
func stream(ctx context.Context, opts *llms.CallOptions, reasoning string, pieces []string, size int) error {
	for _, piece := range SplitChunks(reasoning, size) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if opts.StreamingReasoningFunc != nil {
			if err := opts.StreamingReasoningFunc(ctx, []byte(piece), []byte{}); err != nil {
				return fmt.Errorf("streaming reasoning func returned an error: %w", err)
			}
		}
	}
	for _, piece := range pieces {
		if err := ctx.Err(); err != nil {
			return err
		}
		if opts.StreamingFunc != nil {
			if err := opts.StreamingFunc(ctx, []byte(piece)); err != nil {
				return fmt.Errorf("streaming func returned an error: %w", err)
			}
		}
		if opts.StreamingReasoningFunc != nil {
			if err := opts.StreamingReasoningFunc(ctx, []byte{}, []byte(piece)); err != nil {
				return fmt.Errorf("streaming reasoning func returned an error: %w", err)
			}
		}
	}
	return nil
}

// toolCalls copies the scripted calls (so callers cannot mutate the script)
// and fills in defaults.
func (m *Model) toolCalls(in []llms.ToolCall) []llms.ToolCall {
	if len(in) == 0 {
		return nil
	}
	out := make([]llms.ToolCall, len(in))
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, tc := range in {
		if tc.ID == "" {
			m.ids++
			tc.ID = fmt.Sprintf("call_%d", m.ids)
		}
		out[i] = NormalizeToolCall(tc)
	}
	return out
}

// NormalizeToolCall returns a copy of tc with its own FunctionCall and Type
// defaulted to "function". It does not touch the ID.
func NormalizeToolCall(tc llms.ToolCall) llms.ToolCall {
	if tc.Type == "" {
		tc.Type = "function"
	}
	var fc llms.FunctionCall
	if tc.FunctionCall != nil {
		fc = *tc.FunctionCall
	}
	tc.FunctionCall = &fc
	return tc
}

// CutAtStop cuts text at the earliest occurrence of any non-empty stop word,
// excluding the stop word itself, as the OpenAI API does with "stop".
func CutAtStop(text string, stop []string) string {
	end := len(text)
	for _, s := range stop {
		if s == "" {
			continue
		}
		if i := strings.Index(text[:end], s); i >= 0 {
			end = i
		}
	}
	return text[:end]
}

// SplitChunks splits text into pieces of size bytes (4 if size <= 0),
// stretching a piece rather than splitting a UTF-8 sequence. It returns nil
// for empty text.
func SplitChunks(text string, size int) []string {
	if size <= 0 {
		size = defaultChunk
	}
	var out []string
	for len(text) > 0 {
		n := min(size, len(text))
		for n < len(text) && !utf8.RuneStart(text[n]) {
			n++
		}
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

func cloneCall(c Call) Call {
	return Call{Messages: cloneMessages(c.Messages), Options: cloneOptions(c.Options), N: c.N}
}

func cloneMessages(ms []llms.MessageContent) []llms.MessageContent {
	if ms == nil {
		return nil
	}
	out := make([]llms.MessageContent, len(ms))
	for i, m := range ms {
		out[i] = llms.MessageContent{Role: m.Role, Parts: cloneParts(m.Parts)}
	}
	return out
}

func cloneParts(ps []llms.ContentPart) []llms.ContentPart {
	if ps == nil {
		return nil
	}
	out := make([]llms.ContentPart, len(ps))
	for i, p := range ps {
		switch p := p.(type) {
		case llms.ToolCall:
			if p.FunctionCall != nil {
				fc := *p.FunctionCall
				p.FunctionCall = &fc
			}
			out[i] = p
		case llms.BinaryContent:
			p.Data = bytes.Clone(p.Data)
			out[i] = p
		default:
			// TextContent, ImageURLContent and ToolCallResponse hold only
			// strings; anything else is kept as is.
			out[i] = p
		}
	}
	return out
}

func cloneOptions(o llms.CallOptions) llms.CallOptions {
	o.StopWords = slices.Clone(o.StopWords)
	o.Functions = slices.Clone(o.Functions)
	o.Metadata = maps.Clone(o.Metadata)
	if o.Tools != nil {
		tools := make([]llms.Tool, len(o.Tools))
		for i, t := range o.Tools {
			if t.Function != nil {
				fd := *t.Function
				t.Function = &fd
			}
			tools[i] = t
		}
		o.Tools = tools
	}
	return o
}
