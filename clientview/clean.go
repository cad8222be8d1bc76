package clientview

import (
	"context"
	"maps"

	lcb "github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"

	"github.com/streamrules/streamrules/internal/cleanview"
)

// CleanHandler passes LangChainGo callback events to Next as the client should see them:
// the engine's insertions in prompt copies removed (located by the record the middleware
// puts in the context of each tour), discarded answers dropped, everything a user or model said byte for byte.
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

// HandleText implements callbacks.Handler: recorded splices are cleaned (see CleanMessages).
func (c *CleanHandler) HandleText(ctx context.Context, text string) {
	if in := cleanview.InsertedFrom(ctx); in != nil {
		text = in.Text(text)
	}
	c.Next.HandleText(ctx, text)
}

// HandleLLMStart implements callbacks.Handler: the prompts without the reminder blocks the
// engine laid on tool results.
func (c *CleanHandler) HandleLLMStart(ctx context.Context, prompts []string) {
	if in := cleanview.InsertedFrom(ctx); in != nil {
		out := make([]string, len(prompts))
		for i, p := range prompts {
			out[i] = in.Text(p)
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
	if h := cleanview.HoldFrom(ctx); h != nil && h.Add(func() { c.Next.HandleLLMGenerateContentEnd(ctx, res) }) {
		return
	}
	c.Next.HandleLLMGenerateContentEnd(ctx, res)
}

// HandleLLMError implements callbacks.Handler.
func (c *CleanHandler) HandleLLMError(ctx context.Context, err error) {
	if h := cleanview.HoldFrom(ctx); h != nil && h.Add(func() { c.Next.HandleLLMError(ctx, err) }) {
		return
	}
	c.Next.HandleLLMError(ctx, err)
}

// HandleChainStart implements callbacks.Handler. An agent's inner chain gets the
// intermediate steps as its "agent_scratchpad" input: that string is the prompt copy, and
// loses the reminder blocks the engine laid on tool results there. Every other input (the
// user's words, the chat history) passes exactly as it came.
func (c *CleanHandler) HandleChainStart(ctx context.Context, inputs map[string]any) {
	if in := cleanview.InsertedFrom(ctx); in != nil {
		if pad, ok := inputs[scratchpadKey].(string); ok {
			if clean := in.Text(pad); clean != pad {
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

// CleanMessages returns the messages of a model call made under ctx as the client should
// see them: each tool result without the reminder blocks the engine laid on it, each
// retry's interrupt message and the discarded answer right before it removed. Only what
// the middleware recorded in ctx as the engine's own is removed; with nothing recorded
// (a call outside a guarded agent's tour) the messages are returned as they are. The
// input is not modified.
func CleanMessages(ctx context.Context, ms []llms.MessageContent) []llms.MessageContent {
	return cleanview.InsertedFrom(ctx).CleanMessages(ms)
}
