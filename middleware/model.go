package middleware

import (
	"context"
	"slices"
	"sync"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/callbacks"
)

// guardedModel checks every finished answer against the text rules and replays a
// violating tour once with an interrupt. While a text rule is armed, streamed speech is
// held and released in one piece for the accepted answer only.
type guardedModel struct {
	llms.Model
	g *Guard
}

var _ llms.Model = (*guardedModel)(nil)

// Model wraps a LangChainGo model. It judges the calls made in a tour of a guarded agent
// (see Agent, or AgentTour for a loop of your own); any other call, and any call outside
// a move, passes straight through. A provider client with a known gap that breaks stock
// agents (see compat.go) gets its shims below the rules.
func (g *Guard) Model(m llms.Model) llms.Model {
	if gm, ok := m.(*guardedModel); ok && gm.g == g {
		return m
	}
	return &guardedModel{Model: adaptProvider(m), g: g}
}

// Unwrap returns the wrapped model, as given to Guard.Model.
func (m *guardedModel) Unwrap() llms.Model {
	if c, ok := m.Model.(*compatModel); ok {
		return c.Model
	}
	return m.Model
}

// SupportsReasoning forwards the wrapped model's answer (llms.ReasoningModel).
func (m *guardedModel) SupportsReasoning() bool { return llms.SupportsReasoningModel(m.Model) }

// Call implements the deprecated llms.Model.Call through GenerateContent.
func (m *guardedModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// GenerateContent runs the tour. On a text rule's miss with a retry left, the answer is
// discarded (never streamed, never returned, its tool calls never run) and the tour is
// played again with the same messages plus the discarded answer and a human-role
// interrupt. Provider and streaming errors are returned as they come.
func (m *guardedModel) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	move := streamrules.MoveFrom(ctx)
	format, isTour := answerFormatFrom(ctx)
	if move == nil || !isTour {
		return m.Model.GenerateContent(ctx, messages, options...)
	}
	var opts llms.CallOptions
	for _, o := range options {
		o(&opts)
	}
	for {
		if !move.TextArmed() {
			// No rule can discard this answer: stream through, chunk by chunk. An answer
			// missed after the ceiling still gets checked, so its rule speaks softly later.
			resp, err := m.Model.GenerateContent(ctx, messages, options...)
			if err == nil {
				move.CheckAnswer(ctx, AnswerTarget(format, resp))
			}
			return resp, err
		}
		t := &tour{} // one allocation for the tour's held speech and held callback events
		held, hold := &t.speech, &t.events
		resp, err := m.Model.GenerateContent(callbacks.WithHold(ctx, hold), messages, held.options(options, opts)...)
		if err == nil {
			// The openai client returns a partial answer and no error when the context is
			// cancelled mid-stream: never judge, release or replay a cut answer.
			err = ctx.Err()
		}
		if err != nil {
			hold.Drop()
			return nil, err
		}
		verdict := move.CheckAnswer(ctx, AnswerTarget(format, resp))
		if verdict.Fixed != "" {
			repair(format, resp, held, verdict.Fixed) // repaired in place: no replay (fix.go)
		}
		if !verdict.Discard {
			if err := held.release(ctx, opts, resp); err != nil {
				hold.Drop()
				return nil, err
			}
			hold.Release()
			return resp, nil
		}
		hold.Drop()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := len(messages)
		messages = withInterrupt(messages, resp, verdict.Interrupt)
		ctx = noteRetry(ctx, messages[n:]) // the clean view drops exactly these (view.go)
	}
}

// withInterrupt returns a new history: the old one, the discarded answer's text as an AI
// message (its tool calls are dropped: they were never run and have no results), and the
// interrupt as a human message (Anthropic would lift a system message into its system
// prompt; Ollama rejects a second text part).
func withInterrupt(messages []llms.MessageContent, discarded *llms.ContentResponse, interrupt string) []llms.MessageContent {
	out := slices.Clip(slices.Clone(messages))
	var text string
	for i, c := range discarded.Choices {
		if i > 0 && c.Content != "" && text != "" {
			text += "\n"
		}
		text += c.Content
	}
	if text != "" {
		// The model's own words, but neutralised: an answer that mimics an engine block must
		// not pose as one, nor be stripped from the client's view as one.
		out = append(out, llms.TextParts(llms.ChatMessageTypeAI, streamrules.Neutralize(text)))
	}
	return append(out, llms.TextParts(llms.ChatMessageTypeHuman, interrupt))
}

// tour is what one held tour keeps until the verdict.
type tour struct {
	speech heldSpeech
	events callbacks.Hold
}

// heldSpeech collects the chunks of one tour. Providers may call the streaming funcs
// from another goroutine (Anthropic), hence the lock.
type heldSpeech struct {
	mu        sync.Mutex
	text      []byte // the held chunks, back to back
	ends      []int  // where each chunk ends in text
	reasoning []byte
	rtext     []byte // content chunks the reasoning func saw
	anyR      bool
}

// options returns the caller's options with the streaming funcs replaced by holders.
// Providers read the streaming funcs after all options, so appending ours wins. A func the
// caller did not set stays unset (so a non-streaming call stays non-streaming).
func (h *heldSpeech) options(options []llms.CallOption, opts llms.CallOptions) []llms.CallOption {
	out := slices.Clip(options)
	if opts.StreamingFunc != nil {
		out = append(out, llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
			h.mu.Lock()
			if h.ends == nil {
				// Most answers fit: one allocation each instead of a growth series.
				h.text, h.ends = make([]byte, 0, 2048), make([]int, 0, 128)
			}
			h.text = append(h.text, chunk...)
			h.ends = append(h.ends, len(h.text))
			h.mu.Unlock()
			return nil
		}))
	}
	if opts.StreamingReasoningFunc != nil {
		out = append(out, llms.WithStreamingReasoningFunc(func(_ context.Context, reasoning, chunk []byte) error {
			h.mu.Lock()
			h.reasoning = append(h.reasoning, reasoning...)
			h.rtext = append(h.rtext, chunk...)
			h.anyR = true
			h.mu.Unlock()
			return nil
		}))
	}
	return out
}

// release sends the held speech to the caller's funcs; their errors propagate.
// When the chunks were the answer's text, it goes in one piece. Providers that also
// stream other things through the same func (the openai client sends tool-call JSON
// fragments and empty chunks) get their chunks replayed as they came, back to back,
// so a client parsing them sees exactly what pass-through would have shown.
func (h *heldSpeech) release(ctx context.Context, opts llms.CallOptions, resp *llms.ContentResponse) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.anyR && opts.StreamingReasoningFunc != nil {
		if err := opts.StreamingReasoningFunc(ctx, h.reasoning, h.rtext); err != nil {
			return err
		}
	}
	if opts.StreamingFunc == nil || len(h.ends) == 0 {
		return nil
	}
	if string(h.text) == responseText(resp) {
		if len(h.text) == 0 {
			return nil
		}
		return opts.StreamingFunc(ctx, h.text)
	}
	start := 0
	for _, end := range h.ends {
		if err := opts.StreamingFunc(ctx, h.text[start:end:end]); err != nil {
			return err
		}
		start = end
	}
	return nil
}

func responseText(resp *llms.ContentResponse) string {
	var b []byte
	for _, c := range resp.Choices {
		b = append(b, c.Content...)
	}
	return string(b)
}
