package middleware

import (
	"context"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
)

// Thinking rules in the model wrapper (scope: thinking, thinking.go in the root). While one
// is armed, the tour is held and the reasoning is watched as it streams: a reasoning func
// is installed whether or not the caller gave one (which makes the openai client stream),
// its chunks go to the move's thinking scanner, and at the first certain miss the func
// returns errEarlyCut after cancelling the call: the provider stops while the model still
// thinks, and the tour is replayed with the interrupt. The reasoning of a response comes
// before its text, so the answer's first text chunk ends it: the whole reasoning is judged
// there (negate rules too), and until then nothing of the answer is released. Reasoning
// after that (no provider sends it so) is judged at the end; if text was shown by then,
// its miss is kept, not discarded. The cut reasoning is never sent back: it has no
// signature (Anthropic) and the interrupt says what was wrong.
//
// What the client sees of the reasoning: nothing, unless the host streams it with
// llms.WithStreamingReasoningFunc. Then it is held speech like the answer: released in one
// piece with the accepted response, never for a discarded one.

// thinkWatch is one tour's watch on the reasoning; nil when no thinking rule is armed, so a
// tour without one pays a nil check per chunk.
type thinkWatch struct {
	move    *streamrules.Move
	scan    *streamrules.Scanner // nil: no armed rule a prefix decides
	judged  int                  // reasoning bytes judged whole at the first text (-1: not yet)
	thought []byte               // the reasoning streamed so far
	cutAt   int                  // reasoning bytes streamed by a thinking cut; 0: not cut in the reasoning
}

// watchThinking returns the tour's watch on the reasoning, or nil when no thinking rule
// could discard the response.
func watchThinking(move *streamrules.Move) *thinkWatch {
	if !move.ThinkingArmed() {
		return nil
	}
	return &thinkWatch{move: move, scan: move.ThinkingScanner(), judged: -1}
}

// open reports whether the reasoning is still unjudged: the answer's text must wait.
func (w *thinkWatch) open() bool { return w != nil && w.judged < 0 }

// reasoningChunk takes a reasoning chunk: it is held, and scanned. Caller holds h.mu.
func (h *heldSpeech) reasoningChunk(ctx context.Context, reasoning []byte) error {
	if len(reasoning) == 0 || h.think == nil || h.cut.Discard {
		return nil
	}
	h.think.thought = append(h.think.thought, reasoning...)
	if h.think.scan == nil {
		return nil
	}
	v, ok := h.think.scan.Scan(ctx, h.think.thought)
	if !ok {
		return nil
	}
	h.think.scan = nil
	return h.cutThinking(v)
}

// textBegins judges the whole reasoning at the answer's first text chunk. Caller holds
// h.mu.
func (h *heldSpeech) textBegins(ctx context.Context) error {
	if !h.think.open() || h.cut.Discard {
		return nil
	}
	h.think.judged = len(h.think.thought)
	h.think.scan = nil
	if v := h.think.move.CheckThinking(ctx, string(h.think.thought)); v.Discard {
		return h.cutThinking(v)
	}
	return nil
}

// cutThinking stops the provider at a thinking miss. Caller holds h.mu.
func (h *heldSpeech) cutThinking(v streamrules.Verdict) error {
	h.scan, h.cut, h.cutAt, h.think.cutAt = nil, v, len(h.text), len(h.think.thought)
	h.stop(errEarlyCut)
	return errEarlyCut
}

// thinkingVerdict judges the finished response's reasoning, where the stream has not:
// a tour whose watch judged it all at the first text passes, a response the client saw part
// of is never discarded. With no watch (no rule armed), a move with thinking rules still
// checks it, so a miss after the ceiling reminds later and a shadowed rule is counted.
func thinkingVerdict(ctx context.Context, move *streamrules.Move, h *heldSpeech, resp *llms.ContentResponse) streamrules.Verdict {
	if !move.HasThinkingRules() {
		return streamrules.Verdict{}
	}
	h.mu.Lock()
	w, shown := h.think, len(h.shown) > 0
	var streamed string
	if w != nil {
		streamed = string(w.thought)
	}
	h.mu.Unlock()
	thinking := Reasoning(resp)
	if thinking == "" {
		thinking = streamed
	}
	if w != nil && w.judged >= 0 && len(thinking) <= w.judged {
		return streamrules.Verdict{}
	}
	if shown || w == nil {
		return move.CheckShownThinking(ctx, thinking)
	}
	return move.CheckThinking(ctx, thinking)
}

// Reasoning returns a response's reasoning text: each choice's ReasoningContent (the
// openai client's reasoning_content), or where that is empty its
// GenerationInfo["ThinkingContent"] (Anthropic's thinking blocks), joined.
func Reasoning(resp *llms.ContentResponse) string {
	if resp == nil {
		return ""
	}
	var parts []string
	for _, c := range resp.Choices {
		if c == nil {
			continue
		}
		s := c.ReasoningContent
		if s == "" {
			s, _ = c.GenerationInfo["ThinkingContent"].(string)
		}
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// cutResult is the model span's result of a tour cut early.
func (h *heldSpeech) cutResult() ModelResult {
	h.mu.Lock()
	defer h.mu.Unlock()
	res := ModelResult{Discarded: true, CutEarly: true, CutAtBytes: h.cutAt, Rules: h.cut.Rules}
	if h.think != nil && h.think.cutAt > 0 {
		res.CutAtBytes, res.CutInThinking = h.think.cutAt, true
	}
	return res
}

// keptThinking checks a streamed-through response's reasoning, which can no longer be
// discarded: a miss after the ceiling reminds later, a shadowed rule is counted.
func keptThinking(ctx context.Context, move *streamrules.Move, resp *llms.ContentResponse) {
	if move.HasThinkingRules() {
		move.CheckShownThinking(ctx, Reasoning(resp))
	}
}

// thinkingTextFunc is the streaming func of a watched tour whose caller streams no text:
// it ends the reasoning at the first text chunk. It is also what makes the anthropic
// client read its stream as one (with a reasoning func alone it asks for a stream and
// parses the answer as JSON).
func (h *heldSpeech) thinkingTextFunc() llms.CallOption {
	return llms.WithStreamingFunc(func(ctx context.Context, chunk []byte) error {
		if len(chunk) == 0 {
			return nil
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.textBegins(ctx)
	})
}

// thinkingCutNote stands in the replay's history for a response a thinking rule
// discarded before it said anything: the history keeps its turns alternating (the
// Messages API requires it), and the cut reasoning itself is never sent back.
const thinkingCutNote = "(reasoning stopped)"

// thinkingDiscarded is resp as the replay's history gets it after a thinking discard: its
// text, or the note when it has none; never its reasoning.
func thinkingDiscarded(resp *llms.ContentResponse) *llms.ContentResponse {
	if strings.TrimSpace(responseText(resp)) != "" {
		return resp
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: thinkingCutNote}}}
}

// thinking notes a judged response's reasoning for the move's record: the first that
// is not blank, until the move's answer is given.
func (r *moveRec) thinking(reasoning string) {
	if r == nil || strings.TrimSpace(reasoning) == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reasoning == "" && !r.answered {
		r.reasoning = reasoning
	}
}

// cutReasoning is the reasoning of a tour cut early, as far as it streamed.
func (h *heldSpeech) cutReasoning() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.think == nil {
		return ""
	}
	return string(h.think.thought)
}

// cutInThinking reports whether a thinking rule cut the tour in its reasoning.
func (h *heldSpeech) cutInThinking() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.think != nil && h.think.cutAt > 0
}
