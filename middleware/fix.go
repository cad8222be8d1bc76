package middleware

import (
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// repair puts an answer repaired by a fix (streamrules.Verdict.Fixed) in place of what the
// answer said, in the response and in the held speech, before either is released: the
// client's stream, the callbacks, the agent's parse (and so memory) all get the repaired
// text. Only the text content changes; declared tool calls are left as they are.
//
// The target of each choice is found in its content (for MRKL, after "Final Answer:") and
// replaced: the first choice that says something gets the whole repaired text, any other
// one is emptied of its target (Anthropic answers one text block per choice; the engine
// judged them joined).
func repair(format AnswerFormat, resp *llms.ContentResponse, held *heldSpeech, fixed string) {
	done, at := false, 0
	for _, c := range resp.Choices {
		t := choiceTarget(format, c.Content)
		if t == "" {
			continue
		}
		with := ""
		if !done {
			with, done = fixed, true
		}
		i := strings.LastIndex(c.Content, t)
		if i < 0 {
			continue
		}
		old := c.Content
		c.Content = old[:i] + with + old[i+len(t):]
		at = held.replace(old, c.Content, at)
	}
}

// replace swaps the held chunks that spelled old, found at or after byte from, for new,
// keeping the chunk boundaries around it, so chunks the provider streamed beside the text
// (the openai client's tool-call fragments) are released as they came. It returns where
// the next search starts (choices stream in order). Held text that does not contain old
// (a provider that streams something else than the content) is released as new.
func (h *heldSpeech) replace(old, new string, from int) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if i := strings.Index(string(h.rtext), old); i >= 0 && old != "" {
		// The openai client also streams the content through the reasoning func.
		h.rtext = append(append(append([]byte(nil), h.rtext[:i]...), new...), h.rtext[i+len(old):]...)
	}
	if len(h.ends) == 0 {
		return 0 // nothing was streamed: nothing to release
	}
	a := -1
	if from <= len(h.text) {
		if i := strings.Index(string(h.text[from:]), old); i >= 0 {
			a = from + i
		}
	}
	if a < 0 || old == "" {
		h.text = []byte(new)
		h.ends = []int{len(h.text)}
		return len(h.text)
	}
	b := a + len(old)
	text := make([]byte, 0, len(h.text)-len(old)+len(new))
	text = append(append(append(text, h.text[:a]...), new...), h.text[b:]...)
	delta := len(new) - len(old)
	ends := make([]int, 0, len(h.ends)+2)
	for _, e := range h.ends {
		switch {
		case e <= a:
			ends = append(ends, e)
		case e >= b:
			last := 0
			if len(ends) > 0 {
				last = ends[len(ends)-1]
			}
			if last < a {
				ends, last = append(ends, a), a
			}
			if last < a+len(new) {
				ends, last = append(ends, a+len(new)), a+len(new)
			}
			if e+delta > last {
				ends = append(ends, e+delta)
			}
		}
	}
	h.text, h.ends = text, ends
	return a + len(new)
}
