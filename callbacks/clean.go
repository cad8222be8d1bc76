package callbacks

import (
	"context"
	"slices"
	"sync"

	lcb "github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"

	"github.com/streamrules/streamrules"
)

// CleanHandler passes LangChainGo callback events to Next with every engine block removed
// and discarded answers dropped. Create it with Clean.
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

// HandleText implements callbacks.Handler.
func (c *CleanHandler) HandleText(ctx context.Context, text string) {
	c.Next.HandleText(ctx, streamrules.StripBlocks(text))
}

// HandleLLMStart implements callbacks.Handler.
func (c *CleanHandler) HandleLLMStart(ctx context.Context, prompts []string) {
	out := make([]string, len(prompts))
	for i, p := range prompts {
		out[i] = streamrules.StripBlocks(p)
	}
	c.Next.HandleLLMStart(ctx, out)
}

// HandleLLMGenerateContentStart implements callbacks.Handler: the messages without
// reminder blocks, without the retry's interrupt and the discarded answer before it.
func (c *CleanHandler) HandleLLMGenerateContentStart(ctx context.Context, ms []llms.MessageContent) {
	c.Next.HandleLLMGenerateContentStart(ctx, CleanMessages(ms))
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
	c.Next.HandleLLMError(ctx, err)
}

// HandleChainStart implements callbacks.Handler.
func (c *CleanHandler) HandleChainStart(ctx context.Context, inputs map[string]any) {
	c.Next.HandleChainStart(ctx, cleanValues(inputs))
}

// HandleChainEnd implements callbacks.Handler.
func (c *CleanHandler) HandleChainEnd(ctx context.Context, outputs map[string]any) {
	c.Next.HandleChainEnd(ctx, cleanValues(outputs))
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

// HandleAgentAction implements callbacks.Handler.
func (c *CleanHandler) HandleAgentAction(ctx context.Context, action schema.AgentAction) {
	action.Log = streamrules.StripBlocks(action.Log)
	c.Next.HandleAgentAction(ctx, action)
}

// HandleAgentFinish implements callbacks.Handler.
func (c *CleanHandler) HandleAgentFinish(ctx context.Context, finish schema.AgentFinish) {
	finish.ReturnValues = cleanValues(finish.ReturnValues)
	finish.Log = streamrules.StripBlocks(finish.Log)
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

// cleanValues strips blocks from the string values of a chain's inputs or outputs
// (the MRKL scratchpad carries the prompt copy of tool results).
func cleanValues(values map[string]any) map[string]any {
	var out map[string]any
	for k, v := range values {
		s, ok := v.(string)
		if !ok {
			continue
		}
		if clean := streamrules.StripBlocks(s); clean != s {
			if out == nil {
				out = make(map[string]any, len(values))
				for k2, v2 := range values {
					out[k2] = v2
				}
			}
			out[k] = clean
		}
	}
	if out == nil {
		return values
	}
	return out
}

// CleanMessages returns the messages as the client should see them: reminder blocks
// stripped from text and tool results, the retry's interrupt message and the discarded
// answer before it removed. The input is not modified.
func CleanMessages(ms []llms.MessageContent) []llms.MessageContent {
	out := make([]llms.MessageContent, 0, len(ms))
	for _, m := range ms {
		if m.Role == llms.ChatMessageTypeHuman && isInterrupt(m) {
			// The discarded answer went into the prompt right before its interrupt.
			if n := len(out); n > 0 && out[n-1].Role == llms.ChatMessageTypeAI {
				out = out[:n-1]
			}
			continue
		}
		parts := slices.Clone(m.Parts)
		for i, p := range parts {
			switch p := p.(type) {
			case llms.TextContent:
				parts[i] = llms.TextContent{Text: streamrules.StripBlocks(p.Text)}
			case llms.ToolCallResponse:
				p.Content = streamrules.StripBlocks(p.Content)
				parts[i] = p
			}
		}
		out = append(out, llms.MessageContent{Role: m.Role, Parts: parts})
	}
	return out
}

func isInterrupt(m llms.MessageContent) bool {
	if len(m.Parts) != 1 {
		return false
	}
	t, ok := m.Parts[0].(llms.TextContent)
	return ok && streamrules.IsInterruptMessage(t.Text)
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
