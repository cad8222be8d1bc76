package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/cleanview"
)

// guardedModel checks every finished answer against the text rules and replays a
// violating tour once with an interrupt. While a text rule is armed, streamed speech is
// held: what becomes final goes to the client as it streams, the rest with the accepted
// answer only.
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
		return c.given
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
// interrupt. With early interrupt, a miss certain before the answer is complete stops the
// provider at once and is discarded the same way. Provider and streaming errors are
// returned as they come, after the Guard's transport retries; when ctx has ended, the
// result is ctx's error whatever the provider returned.
func (m *guardedModel) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	move := streamrules.MoveFrom(ctx)
	format, isTour := answerFormatFrom(ctx)
	if move == nil || !isTour {
		if m.g.tracer != nil {
			return m.tracedPassThrough(ctx, messages, options)
		}
		return m.passThrough(ctx, messages, options, nil)
	}
	opts := callOptions(options)
	if !m.g.toolChunks {
		options = withoutToolChunks(options, &opts) // tool-call JSON stays out of the client's stream (chunks.go)
	}
	var rec *moveRec // the move's transcript record (transcript.go); nil when not recording
	if m.g.rec != nil {
		rec = recordOf(ctx)
	}
	replay := false // the call replays a discarded answer (trace.go)
	for {
		move.BeginTour() // an environment set since the last model call holds from here on
		if !mustHold(move) {
			// No rule can discard this answer: stream through, chunk by chunk. An answer
			// missed after the ceiling still gets checked, so its rule speaks softly later.
			cctx, sp := m.startCall(ctx, messages, &opts, false, replay, true)
			resp, err := m.passThrough(cctx, messages, options, &opts)
			var v streamrules.Verdict
			if err == nil {
				keptThinking(cctx, move, resp)                     // after the ceiling, or in shadow (thinking.go)
				v = checkResponse(cctx, move, format, resp, false) // text and declared calls (gate.go)
				if rec != nil {
					rec.thinking(Reasoning(resp)) // thinking.go
					rec.response(AnswerTarget(format, resp), false, nil)
					rec.accept(resp, format)
				}
			}
			endCall(sp, ModelResult{Response: resp, Err: err, Fixed: v.Fixed != "", Rules: v.Rules})
			return resp, err
		}
		cctx, sp := m.startCall(ctx, messages, &opts, true, replay, true)
		t, resp, err := m.heldCall(cctx, move, format, messages, options, opts)
		if err != nil {
			endCall(sp, ModelResult{Err: err})
			return nil, err
		}
		hold := &t.events
		replay = true
		if t.speech.cut.Discard {
			t.speech.report(ctx, move, true)
			// Cut early: the provider was stopped at the first certain miss; the firings are
			// recorded. Replay exactly as below, with the part generated so far.
			endCall(sp, t.speech.cutResult())
			hold.Drop()
			cut := t.speech.cutAnswer()
			if rec != nil {
				rec.thinking(t.speech.cutReasoning())
				rec.response(AnswerTarget(format, cut), true, nil)
			}
			n := len(messages)
			if t.speech.cutInThinking() {
				cut = thinkingDiscarded(cut) // never the reasoning (thinking.go)
			}
			messages = withInterrupt(messages, cut, t.speech.cut.Interrupt)
			ctx = noteRetry(ctx, messages[n:])
			continue
		}
		verdict := thinkingVerdict(cctx, move, &t.speech, resp) // the reasoning first (thinking.go)
		byThinking := verdict.Discard
		if !byThinking {
			verdict = checkResponse(cctx, move, format, resp, t.speech.shownAny()) // text and declared calls (gate.go)
		}
		if rec != nil {
			// What the rules judged, before a fix repairs it in place.
			var declared []streamrules.DeclaredCall
			if verdict.Discard {
				declared = DeclaredCalls(format, resp)
			}
			rec.thinking(Reasoning(resp))
			rec.response(AnswerTarget(format, resp), verdict.Discard, declared)
		}
		if verdict.Fixed != "" {
			repair(format, resp, &t.speech, verdict.Fixed) // repaired in place: no replay (fix.go)
		}
		if !verdict.Discard {
			err := t.speech.release(ctx, opts, resp, len(verdict.Refused) > 0)
			t.speech.report(ctx, move, false)
			if err != nil {
				endCall(sp, ModelResult{Response: resp, Err: err, Fixed: verdict.Fixed != "", Rules: verdict.Rules})
				hold.Drop()
				return nil, err
			}
			endCall(sp, ModelResult{Response: resp, Fixed: verdict.Fixed != "", Rules: verdict.Rules, ReleasedEarlyBytes: t.speech.releasedEarly()})
			hold.Release()
			if rec != nil {
				rec.accept(resp, format)
			}
			return resp, nil
		}
		t.speech.report(ctx, move, true)
		endCall(sp, ModelResult{Response: resp, Discarded: true, Rules: verdict.Rules})
		hold.Drop()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := len(messages)
		if byThinking {
			resp = thinkingDiscarded(resp) // never the reasoning (thinking.go)
		}
		messages = withInterrupt(messages, resp, verdict.Interrupt)
		ctx = noteRetry(ctx, messages[n:]) // the clean view drops exactly these (view.go)
	}
}

// passThrough makes the call as the caller asked, within the Guard's boundaries. When a
// retry could follow, it notes whether a chunk reached the caller's streaming funcs:
// after that the call is never retried. The watching funcs are made once per call, not
// per attempt: an attempt that showed a chunk is the last one. opts is options parsed,
// or nil when the caller has not parsed them.
func (m *guardedModel) passThrough(ctx context.Context, messages []llms.MessageContent, options []llms.CallOption, opts *llms.CallOptions) (*llms.ContentResponse, error) {
	var shown atomic.Bool
	if m.g.bounds.retries > 0 {
		if opts == nil {
			o := callOptions(options)
			opts = &o
		}
		options = watchShown(options, opts, &shown)
	}
	return m.g.bounds.call(ctx, func(ctx context.Context) (*llms.ContentResponse, bool, error) {
		resp, err := m.Model.GenerateContent(ctx, messages, options...)
		return resp, shown.Load(), err
	})
}

// callOptions parses a call's options.
func callOptions(options []llms.CallOption) llms.CallOptions {
	var opts llms.CallOptions
	for _, o := range options {
		o(&opts)
	}
	return opts
}

// watchShown returns options with the caller's streaming funcs wrapped to set shown at
// the first non-empty chunk. Per chunk it adds an atomic load, nothing else.
func watchShown(options []llms.CallOption, opts *llms.CallOptions, shown *atomic.Bool) []llms.CallOption {
	out := slices.Clip(options)
	if f := opts.StreamingFunc; f != nil {
		out = append(out, llms.WithStreamingFunc(func(ctx context.Context, chunk []byte) error {
			if len(chunk) > 0 && !shown.Load() {
				shown.Store(true)
			}
			return f(ctx, chunk)
		}))
	}
	if f := opts.StreamingReasoningFunc; f != nil {
		out = append(out, llms.WithStreamingReasoningFunc(func(ctx context.Context, reasoning, chunk []byte) error {
			if len(reasoning)+len(chunk) > 0 && !shown.Load() {
				shown.Store(true)
			}
			return f(ctx, reasoning, chunk)
		}))
	}
	return out
}

// heldCall makes one held model call, within the Guard's boundaries: each transport retry
// starts a fresh tour, since nothing of the failed one was shown. With an early scanner,
// a certain miss cancels the provider's context and the tour comes back with speech.cut
// set and no response.
func (m *guardedModel) heldCall(ctx context.Context, move *streamrules.Move, format AnswerFormat, messages []llms.MessageContent, options []llms.CallOption, opts llms.CallOptions) (*tour, *llms.ContentResponse, error) {
	var t *tour
	resp, err := m.g.bounds.call(ctx, func(ctx context.Context) (*llms.ContentResponse, bool, error) {
		t = &tour{} // one allocation for the tour's held speech and held callback events
		callCtx := ctx
		if format == FormatToolCalling && opts.StreamingFunc != nil {
			// ReAct answers are held whole: their target starts at the last "Final Answer:",
			// which no prefix knows.
			if scan := move.HeldScanner(); scan != nil {
				var cancel context.CancelCauseFunc
				callCtx, cancel = context.WithCancelCause(ctx)
				defer cancel(nil)
				t.speech.scan, t.speech.stop = scan, cancel
			}
		}
		if w := watchThinking(move); w != nil { // the reasoning is watched and cut (thinking.go)
			if t.speech.stop == nil {
				var cancel context.CancelCauseFunc
				callCtx, cancel = context.WithCancelCause(ctx)
				defer cancel(nil)
				t.speech.stop = cancel
			}
			t.speech.think = w
		}
		resp, err := m.Model.GenerateContent(cleanview.WithHold(callCtx, &t.events), messages, t.speech.options(options, opts)...)
		if t.speech.cutDone() {
			return nil, false, nil
		}
		if err != nil {
			t.events.Release() // a real failure: its error event goes on; a cut's is dropped above
		}
		// Once the client has seen part of the answer, the call is never made again.
		return resp, t.speech.shownAny(), err
	})
	if err != nil {
		if t != nil {
			// A provider's failure had its events released in the attempt. What is still
			// held belongs to an answer that ctx's end or the call timeout cut (the openai
			// client returns the part it had and no error): it never passes for a whole one.
			t.events.Drop()
		}
		return nil, nil, err
	}
	return t, resp, nil
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
	events cleanview.Hold
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

	// Early interrupt (nil scan: off in this tour).
	scan  *streamrules.Scanner
	stop  context.CancelCauseFunc // cancels the provider call
	cut   streamrules.Verdict     // set at the first certain miss (Discard is then true)
	cutAt int                     // bytes of text generated by then

	think *thinkWatch // thinking rules (thinking.go); nil: none armed in this tour

	// Release (release.go in the root): the final answer's certain prefix goes to the
	// client as it grows.
	client func(context.Context, []byte) error // the caller's streaming func
	shown  []byte                              // what the client got early (the scanner's bytes)
	first  time.Time                           // the provider's first chunk
	seen   time.Time                           // the client's first chunk
}

// errEarlyCut stops the provider's stream from the streaming func at an early miss.
var errEarlyCut = errors.New("middleware: answer cut at an early miss")

// scanChunk feeds a new chunk to the early scanner. Caller holds h.mu. It returns
// errEarlyCut, after cancelling the provider call, at the first certain miss.
func (h *heldSpeech) scanChunk(ctx context.Context, chunk []byte) error {
	if len(chunk) == 0 {
		return nil
	}
	if (chunk[0] == '[' || chunk[0] == '{') && json.Valid(chunk) {
		// The openai client streams tool-call deltas as JSON through the same func, after
		// the text. From here on the held bytes are not the answer's text: stop scanning
		// (the end-of-answer check still judges the whole answer). A text chunk that
		// happens to be JSON only loses the early cut, never causes a false one.
		h.scan = nil
		return nil
	}
	v, ok := h.scan.Scan(ctx, h.text)
	if !ok {
		return nil
	}
	h.scan, h.cut, h.cutAt = nil, v, len(h.text)
	h.stop(errEarlyCut)
	return errEarlyCut
}

// cutDone reports whether the tour was cut early with a discarding verdict.
func (h *heldSpeech) cutDone() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cut.Discard
}

// cutAnswer is the answer as far as it was generated when it was cut.
func (h *heldSpeech) cutAnswer() *llms.ContentResponse {
	h.mu.Lock()
	defer h.mu.Unlock()
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: string(h.text[:h.cutAt])}}}
}

// options returns the caller's options with the streaming funcs replaced by holders.
// Providers read the streaming funcs after all options, so appending ours wins. A func the
// caller did not set stays unset (so a non-streaming call stays non-streaming).
func (h *heldSpeech) options(options []llms.CallOption, opts llms.CallOptions) []llms.CallOption {
	out := slices.Clip(options)
	h.client = opts.StreamingFunc
	if opts.StreamingFunc != nil {
		out = append(out, llms.WithStreamingFunc(func(ctx context.Context, chunk []byte) error {
			h.mu.Lock()
			if h.ends == nil {
				// Most answers fit: one allocation each instead of a growth series.
				h.text, h.ends = make([]byte, 0, 2048), make([]int, 0, 128)
			}
			if h.first.IsZero() {
				h.first = time.Now()
			}
			h.text = append(h.text, chunk...)
			h.ends = append(h.ends, len(h.text))
			var err error
			if h.think != nil && len(chunk) > 0 {
				err = h.textBegins(ctx) // the reasoning is over: judged whole (thinking.go)
			}
			if err == nil && h.scan != nil {
				err = h.scanChunk(ctx, chunk)
			}
			if err == nil && h.scan != nil && !h.think.open() {
				err = h.releaseEarly(ctx)
			}
			h.mu.Unlock()
			return err
		}))
	}
	if opts.StreamingFunc == nil && h.think != nil {
		out = append(out, h.thinkingTextFunc()) // thinking.go
	}
	if opts.StreamingReasoningFunc != nil || h.think != nil {
		client := opts.StreamingReasoningFunc != nil
		out = append(out, llms.WithStreamingReasoningFunc(func(ctx context.Context, reasoning, chunk []byte) error {
			h.mu.Lock()
			var err error
			if h.think != nil { // thinking.go
				if err = h.reasoningChunk(ctx, reasoning); err == nil && len(chunk) > 0 {
					err = h.textBegins(ctx)
				}
			}
			if client {
				h.reasoning = append(h.reasoning, reasoning...)
				h.rtext = append(h.rtext, chunk...)
				h.anyR = true
			}
			h.mu.Unlock()
			return err
		}))
	}
	return out
}

// release sends the held speech to the caller's funcs; their errors propagate.
// When the chunks were the answer's text, it goes in one piece. Providers that also
// stream other things through the same func (the openai client sends tool-call JSON
// fragments and empty chunks) get their chunks replayed as they came, back to back,
// so a client parsing them sees exactly what pass-through would have shown. With
// textOnly (a gate refuses a call the response declares), the tool-call chunks that follow
// the text stay out: the client gets the text and no trace of a call that never runs.
func (h *heldSpeech) release(ctx context.Context, opts llms.CallOptions, resp *llms.ContentResponse, textOnly bool) error {
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
	h.client = opts.StreamingFunc
	sent := len(h.shown)
	if sent > 0 && !bytes.HasPrefix(h.text, h.shown) {
		// Cannot happen while the release is sound (the fuzzer's property); if it did, the
		// client has the released part and gets the rest of what the answer now says.
		sent = min(sent, len(h.text))
	}
	want := responseText(resp)
	if string(h.text) == want || textOnly && len(want) >= sent && bytes.HasPrefix(h.text, []byte(want)) {
		if len(want) == sent {
			return nil
		}
		return h.send(ctx, h.text[sent:len(want):len(want)])
	}
	start := 0
	for _, end := range h.ends {
		if end > sent {
			if err := h.send(ctx, h.text[max(start, sent):end:end]); err != nil {
				return err
			}
		}
		start = end
	}
	return nil
}

// send gives the client a chunk, noting when it got its first. Caller holds h.mu.
func (h *heldSpeech) send(ctx context.Context, chunk []byte) error {
	if h.seen.IsZero() && len(chunk) > 0 {
		h.seen = time.Now()
	}
	return h.client(ctx, chunk)
}

// releaseEarly sends the client what became certain with the last chunk. Caller holds
// h.mu.
func (h *heldSpeech) releaseEarly(ctx context.Context) error {
	final := h.scan.Release(h.text)
	if len(final) <= len(h.shown) {
		return nil
	}
	chunk := final[len(h.shown):len(final):len(final)]
	h.shown = final
	return h.send(ctx, chunk)
}

// releasedEarly is how many bytes of this tour's answer the client got before it was
// complete.
func (h *heldSpeech) releasedEarly() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.shown)
}

// shownAny reports whether the client has seen part of this tour's answer.
func (h *heldSpeech) shownAny() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.shown) > 0
}

// report tells the move how the tour's speech went (Move.SpeechDone).
func (h *heldSpeech) report(ctx context.Context, move *streamrules.Move, discarded bool) {
	h.mu.Lock()
	info := streamrules.SpeechInfo{HeldBytes: len(h.text), ReleasedEarlyBytes: len(h.shown), Discarded: discarded}
	if !h.seen.IsZero() && !h.first.IsZero() {
		info.FirstVisible, info.Visible = h.seen.Sub(h.first), true
	}
	h.mu.Unlock()
	move.SpeechDone(ctx, info)
}

func responseText(resp *llms.ContentResponse) string {
	var b []byte
	for _, c := range resp.Choices {
		b = append(b, c.Content...)
	}
	return string(b)
}
