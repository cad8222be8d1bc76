package callbacks

import (
	"context"
	"maps"
	"sync"

	lcb "github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"
)

// CleanHandler passes LangChainGo callback events to Next as the client should see them:
// the engine's insertions in prompt copies removed (located by the record in the context,
// see Inserted), discarded answers dropped, everything a user or model said byte for byte.
// Create it with Clean.
type CleanHandler struct {
	Next lcb.Handler
}

var _ lcb.Handler = (*CleanHandler)(nil)

// Clean wraps next so it only sees the clean view. Clean(nil) returns nil.
func Clean(next lcb.Handler) lcb.Handler {
	if next == nil {
		return nil
	}
	if c, ok := next.(*CleanHandler); ok {
		return c
	}
	return &CleanHandler{Next: next}
}

// HandleText implements callbacks.Handler: recorded splices are cleaned (see Inserted).
func (c *CleanHandler) HandleText(ctx context.Context, text string) {
	if in := InsertedFrom(ctx); in != nil {
		text = in.text(text)
	}
	c.Next.HandleText(ctx, text)
}

// HandleLLMStart implements callbacks.Handler: the prompts without the reminder blocks the
// engine laid on tool results.
func (c *CleanHandler) HandleLLMStart(ctx context.Context, prompts []string) {
	if in := InsertedFrom(ctx); in != nil {
		out := make([]string, len(prompts))
		for i, p := range prompts {
			out[i] = in.text(p)
		}
		prompts = out
	}
	c.Next.HandleLLMStart(ctx, prompts)
}

// HandleLLMGenerateContentStart implements callbacks.Handler: the messages without the
// reminder blocks on tool results, without the retry's interrupt and the discarded answer
// before it (see CleanMessages).
func (c *CleanHandler) HandleLLMGenerateContentStart(ctx context.Context, ms []llms.MessageContent) {
	c.Next.HandleLLMGenerateContentStart(ctx, CleanMessages(ctx, ms))
}

// HandleLLMGenerateContentEnd implements callbacks.Handler. Inside a tour whose speech
// is held, the event waits for the verdict and is dropped if the answer is discarded.
func (c *CleanHandler) HandleLLMGenerateContentEnd(ctx context.Context, res *llms.ContentResponse) {
	if h := holdFrom(ctx); h != nil && h.add(func() { c.Next.HandleLLMGenerateContentEnd(ctx, res) }) {
		return
	}
	c.Next.HandleLLMGenerateContentEnd(ctx, res)
}

// HandleLLMError implements callbacks.Handler.
func (c *CleanHandler) HandleLLMError(ctx context.Context, err error) {
	if h := holdFrom(ctx); h != nil && h.add(func() { c.Next.HandleLLMError(ctx, err) }) {
		return
	}
	c.Next.HandleLLMError(ctx, err)
}

// HandleChainStart implements callbacks.Handler. An agent's inner chain gets the
// intermediate steps as its "agent_scratchpad" input: that string is the prompt copy, and
// loses the reminder blocks the engine laid on tool results there. Every other input (the
// user's words, the chat history) passes exactly as it came.
func (c *CleanHandler) HandleChainStart(ctx context.Context, inputs map[string]any) {
	if in := InsertedFrom(ctx); in != nil {
		if pad, ok := inputs[scratchpadKey].(string); ok {
			if clean := in.text(pad); clean != pad {
				inputs = maps.Clone(inputs)
				inputs[scratchpadKey] = clean
			}
		}
	}
	c.Next.HandleChainStart(ctx, inputs)
}

// scratchpadKey is the input under which LangChainGo's MRKL and conversational agents
// hand the intermediate steps to their chain.
const scratchpadKey = "agent_scratchpad"

// HandleChainEnd implements callbacks.Handler. Outputs are what the model said: unchanged.
func (c *CleanHandler) HandleChainEnd(ctx context.Context, outputs map[string]any) {
	c.Next.HandleChainEnd(ctx, outputs)
}

// HandleChainError implements callbacks.Handler.
func (c *CleanHandler) HandleChainError(ctx context.Context, err error) {
	c.Next.HandleChainError(ctx, err)
}

// HandleToolStart implements callbacks.Handler.
func (c *CleanHandler) HandleToolStart(ctx context.Context, input string) {
	c.Next.HandleToolStart(ctx, input)
}

// HandleToolEnd implements callbacks.Handler. The output is the tool's own, never a
// prompt copy, so it passes unchanged (even if it quotes a tag: that is its content).
func (c *CleanHandler) HandleToolEnd(ctx context.Context, output string) {
	c.Next.HandleToolEnd(ctx, output)
}

// HandleToolError implements callbacks.Handler.
func (c *CleanHandler) HandleToolError(ctx context.Context, err error) {
	c.Next.HandleToolError(ctx, err)
}

// HandleAgentAction implements callbacks.Handler. The action is what the model said: unchanged.
func (c *CleanHandler) HandleAgentAction(ctx context.Context, action schema.AgentAction) {
	c.Next.HandleAgentAction(ctx, action)
}

// HandleAgentFinish implements callbacks.Handler. The accepted answer passes byte for byte,
// even when it holds text shaped like an engine block.
func (c *CleanHandler) HandleAgentFinish(ctx context.Context, finish schema.AgentFinish) {
	c.Next.HandleAgentFinish(ctx, finish)
}

// HandleRetrieverStart implements callbacks.Handler.
func (c *CleanHandler) HandleRetrieverStart(ctx context.Context, query string) {
	c.Next.HandleRetrieverStart(ctx, query)
}

// HandleRetrieverEnd implements callbacks.Handler.
func (c *CleanHandler) HandleRetrieverEnd(ctx context.Context, query string, documents []schema.Document) {
	c.Next.HandleRetrieverEnd(ctx, query, documents)
}

// HandleStreamingFunc implements callbacks.Handler. Held speech arrives here only once
// accepted: the middleware's model wrapper holds it below.
func (c *CleanHandler) HandleStreamingFunc(ctx context.Context, chunk []byte) {
	c.Next.HandleStreamingFunc(ctx, chunk)
}

// Hold collects callback events of one tour while the middleware holds its speech.
// The middleware calls Release on an accepted answer and Drop on a discarded one.
type Hold struct {
	mu      sync.Mutex
	pending []func()
	done    bool
}

type holdKey struct{}

// WithHold returns a context whose clean handlers defer their answer events into h.
func WithHold(ctx context.Context, h *Hold) context.Context {
	return context.WithValue(ctx, holdKey{}, h)
}

func holdFrom(ctx context.Context) *Hold {
	h, _ := ctx.Value(holdKey{}).(*Hold)
	return h
}

// add defers fn; it reports false once the hold is over (the event then passes at once).
func (h *Hold) add(fn func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return false
	}
	h.pending = append(h.pending, fn)
	return true
}

// Release runs the held events in order; later events pass at once.
func (h *Hold) Release() {
	h.mu.Lock()
	fns := h.pending
	h.pending, h.done = nil, true
	h.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// Drop forgets the held events: the answer they describe was discarded.
func (h *Hold) Drop() {
	h.mu.Lock()
	h.pending, h.done = nil, true
	h.mu.Unlock()
}
