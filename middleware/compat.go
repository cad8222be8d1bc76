package middleware

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/tmc/langchaingo/llms"
)

// Provider shims, written for LangChainGo v0.1.14. Some of its provider clients break a
// stock agent with no middleware at all; where the wrapper can close the gap without
// forking the client, Guard.Model does, around the client and below the rules (so the
// rules judge what the agent will act on). Each shim is named after the client behaviour
// it covers and has a test that fails without it (compat_test.go). The client is
// recognised by its Go type, without importing its package, so a host that never uses
// Mistral does not compile the Mistral SDK.
type providerShims struct {
	// readsOnlyTools: the anthropic client sends CallOptions.Tools and ignores
	// CallOptions.Functions, which is what the functions agent passes; without tools
	// Claude never calls one, and a history with tool blocks is rejected.
	readsOnlyTools bool
	// choicePerBlock: the anthropic client returns one choice per content block, and
	// Claude answers [text, tool_use]; the functions agent reads only Choices[0], so the
	// run would end on "Let me check." with the tool never run.
	choicePerBlock bool
	// objectArgsOnly: the anthropic client re-parses a history tool call's arguments as a
	// JSON object, but the functions agent unwraps {"__arg1": s} to the bare s; the next
	// turn then fails with "failed to unmarshal tool call arguments".
	objectArgsOnly bool
	// firstPartOnly: the anthropic client sends only Parts[0] of an AI message, so of
	// parallel tool calls only the first reaches Claude and its siblings' results dangle.
	firstPartOnly bool
	// cutStreamNilError: on a context cancelled mid-stream the ollama client returns the
	// answer so far and no error (it never reads scanner.Err()), the mistral SDK takes no
	// context at all and streams on, and the anthropic client's reader goroutine may finish
	// the answer from what was already buffered; each would hand a cut answer to the agent
	// as done, and keep streaming to the client after the cancel.
	cutStreamNilError bool
	// redactedThinking: the anthropic client fails a response with a redacted_thinking
	// block ("unknown content type"); see compat_thinking.go.
	redactedThinking bool
}

func (s providerShims) any() bool { return s != providerShims{} }

// shimsFor returns the shims a client needs, by its type.
func shimsFor(m llms.Model) providerShims {
	t := reflect.TypeOf(m)
	if t == nil {
		return providerShims{}
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.PkgPath() + "." + t.Name() {
	case "github.com/tmc/langchaingo/llms/anthropic.LLM":
		return providerShims{readsOnlyTools: true, choicePerBlock: true, objectArgsOnly: true, firstPartOnly: true, cutStreamNilError: true,
			redactedThinking: true}
	case "github.com/tmc/langchaingo/llms/ollama.LLM", "github.com/tmc/langchaingo/llms/mistral.Model":
		return providerShims{cutStreamNilError: true}
	}
	return providerShims{}
}

// adaptProvider wraps m in the shims its client needs, or returns m unchanged.
func adaptProvider(m llms.Model) llms.Model {
	if s := shimsFor(m); s.any() {
		c := &compatModel{Model: m, given: m, shims: s}
		if s.redactedThinking {
			c.Model = withRedactedThinking(m) // a copy of the client (compat_thinking.go)
		}
		return c
	}
	return m
}

// compatModel applies providerShims around one client.
type compatModel struct {
	llms.Model
	given llms.Model // the client as the host gave it (Model may be a shimmed copy)
	shims providerShims
}

func (c *compatModel) SupportsReasoning() bool { return llms.SupportsReasoningModel(c.Model) }

func (c *compatModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, c, prompt, options...)
}

func (c *compatModel) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	s := c.shims
	if s.objectArgsOnly || s.firstPartOnly {
		messages = fitToolHistory(messages, s.firstPartOnly, s.objectArgsOnly)
	}
	if s.readsOnlyTools || s.cutStreamNilError {
		opts := callOptions(options) // once: neither shim changes what the other reads
		if s.readsOnlyTools {
			options = toolsFromFunctions(options, &opts)
		}
		if s.cutStreamNilError {
			options = quietAfterCancel(ctx, options, &opts)
		}
	}
	resp, err := c.Model.GenerateContent(ctx, messages, options...)
	if s.cutStreamNilError && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err == nil && s.choicePerBlock {
		resp = mergeBlockChoices(resp)
	}
	return resp, err
}

// toolsFromFunctions adds the functions the agent passed as tools, for a client that
// reads only tools. Options the caller set as tools win.
// opts is options parsed.
func toolsFromFunctions(options []llms.CallOption, opts *llms.CallOptions) []llms.CallOption {
	if len(opts.Tools) > 0 || len(opts.Functions) == 0 {
		return options
	}
	ts := make([]llms.Tool, len(opts.Functions))
	for i := range opts.Functions {
		fn := opts.Functions[i]
		ts[i] = llms.Tool{Type: "function", Function: &fn}
	}
	return append(slices.Clip(options), llms.WithTools(ts))
}

// quietAfterCancel stops the streaming func from passing chunks on once ctx has ended: a
// client that does not watch ctx would otherwise keep streaming a call whose caller gave
// up. The chunks are still consumed, and an error from the chunk that ended ctx (an early
// cut) is swallowed, so the client's own reader drains and exits: the mistral SDK's reader
// goroutine blocks forever on its channel if the stream is abandoned.
// opts is options parsed.
func quietAfterCancel(ctx context.Context, options []llms.CallOption, opts *llms.CallOptions) []llms.CallOption {
	if opts.StreamingFunc == nil {
		return options
	}
	next := opts.StreamingFunc
	var cancelled atomic.Bool
	return append(slices.Clip(options), llms.WithStreamingFunc(func(cctx context.Context, chunk []byte) error {
		if cancelled.Load() || ctx.Err() != nil {
			cancelled.Store(true)
			return nil
		}
		if err := next(cctx, chunk); err != nil {
			if ctx.Err() != nil {
				// Cancelled by this chunk (an early cut): keep draining, as above.
				cancelled.Store(true)
				return nil
			}
			return err
		}
		return nil
	}))
}

// mergeBlockChoices folds a response of one choice per content block into the one
// choice an agent's parser reads: the text blocks back to back, exactly as the client
// streams them (the rules judge and the client is streamed the same bytes), every tool
// call in order.
func mergeBlockChoices(resp *llms.ContentResponse) *llms.ContentResponse {
	if resp == nil || len(resp.Choices) < 2 {
		return resp
	}
	merged := &llms.ContentChoice{GenerationInfo: map[string]any{}}
	var texts []string
	for _, c := range resp.Choices {
		if c == nil {
			continue
		}
		if c.Content != "" {
			texts = append(texts, c.Content)
		}
		merged.ToolCalls = append(merged.ToolCalls, c.ToolCalls...)
		if c.StopReason != "" {
			merged.StopReason = c.StopReason
		}
		if merged.ReasoningContent == "" {
			merged.ReasoningContent = c.ReasoningContent
		}
		for k, v := range c.GenerationInfo {
			if _, ok := merged.GenerationInfo[k]; !ok {
				merged.GenerationInfo[k] = v
			}
		}
	}
	merged.Content = strings.Join(texts, "")
	if len(merged.ToolCalls) > 0 {
		merged.FuncCall = merged.ToolCalls[0].FunctionCall
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{merged}}
}

// fitToolHistory rewrites a history's tool calls for a client's gaps. With split (a
// client that sends only the first part of an AI message), an AI message of k tool calls
// followed by their k results becomes k (call, result) pairs, which the Messages API
// accepts and which alternate roles. With objectArgs, arguments that are not a JSON
// object are wrapped back as {"__arg1": s}, the form the functions agent unwrapped them from.
func fitToolHistory(messages []llms.MessageContent, split, objectArgs bool) []llms.MessageContent {
	if !needsRewrite(messages, split, objectArgs) {
		return messages
	}
	out := make([]llms.MessageContent, 0, len(messages))
	for i := 0; i < len(messages); i++ {
		m := messages[i]
		calls, ok := toolCallParts(m)
		if !ok {
			out = append(out, m)
			continue
		}
		if objectArgs {
			for j, c := range calls {
				calls[j] = withObjectArgs(c)
			}
		}
		results := messages[i+1 : min(i+1+len(calls), len(messages))]
		if !split || len(calls) < 2 || !answersInOrder(calls, results) {
			parts := make([]llms.ContentPart, len(calls))
			for j, c := range calls {
				parts[j] = c
			}
			out = append(out, llms.MessageContent{Role: m.Role, Parts: parts})
			continue
		}
		for j, c := range calls {
			out = append(out, llms.MessageContent{Role: m.Role, Parts: []llms.ContentPart{c}}, results[j])
		}
		i += len(calls)
	}
	return out
}

func needsRewrite(messages []llms.MessageContent, split, objectArgs bool) bool {
	for _, m := range messages {
		calls, ok := toolCallParts(m)
		if !ok {
			continue
		}
		if split && len(calls) > 1 {
			return true
		}
		if objectArgs && !isJSONObject(calls[0].FunctionCall) {
			return true
		}
	}
	return false
}

// toolCallParts returns an AI message's parts when they are all tool calls.
func toolCallParts(m llms.MessageContent) ([]llms.ToolCall, bool) {
	if m.Role != llms.ChatMessageTypeAI || len(m.Parts) == 0 {
		return nil, false
	}
	calls := make([]llms.ToolCall, 0, len(m.Parts))
	for _, p := range m.Parts {
		c, ok := p.(llms.ToolCall)
		if !ok {
			return nil, false
		}
		calls = append(calls, c)
	}
	return calls, true
}

func answersInOrder(calls []llms.ToolCall, results []llms.MessageContent) bool {
	if len(results) != len(calls) {
		return false
	}
	for j, r := range results {
		if r.Role != llms.ChatMessageTypeTool || len(r.Parts) != 1 {
			return false
		}
		resp, ok := r.Parts[0].(llms.ToolCallResponse)
		if !ok || resp.ToolCallID != calls[j].ID {
			return false
		}
	}
	return true
}

func isJSONObject(fc *llms.FunctionCall) bool {
	if fc == nil {
		return true
	}
	var obj map[string]json.RawMessage
	return json.Unmarshal([]byte(fc.Arguments), &obj) == nil && obj != nil
}

func withObjectArgs(c llms.ToolCall) llms.ToolCall {
	if isJSONObject(c.FunctionCall) {
		return c
	}
	b, err := json.Marshal(map[string]string{"__arg1": c.FunctionCall.Arguments})
	if err != nil {
		return c
	}
	fc := *c.FunctionCall
	fc.Arguments = string(b)
	c.FunctionCall = &fc
	return c
}
