package streamrules

import (
	"bytes"
	"context"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Early interrupt: while an answer's speech is held, its streamed text is scanned as it
// comes, and the provider is stopped at the first miss that is already certain, instead
// of paying for (and waiting on) the rest of an answer that will be thrown away.
//
// Which rules a prefix can decide. A positive condition that matched stays matched: if the
// regexp matches a prefix of the answer at [i,j), the same match exists in the whole
// answer, as long as nothing in it looks past j. So:
//   - a negate rule decides only at the end (the tail may still come);
//   - a condition with `$`, `\z` or `(?m)$` decides only at the end;
//   - `\b` and `\B` look one byte ahead: a match that ends exactly at the end of the
//     prefix is not certain yet (it becomes certain one byte later, or at the end);
//   - a shadowed rule never cuts anything;
//   - a rule with a predicate tree, an applies_when or a fix decides only at the end: a
//     tree may count words or look at the tail, and a fix repairs the whole answer in
//     place, which is cheaper than any cut.
//
// How the scan stays incremental. The text is looked at in batches (a newline, or every
// EarlyBatchBytes bytes), never per chunk, and a window is rescanned only once it has grown
// by a quarter since its last scan: the rescans form a geometric series, at most five
// passes over the window in all, and a miss is found before the text grows a quarter (or a
// batch) past it. A rule whose matches cannot span a newline (no `.` under (?s), no class
// or literal that holds '\n') has the current line as its window: complete lines are
// never looked at again, and a line start has the same left context ('\n', a non-word
// byte) in the prefix as in the whole answer. Such a rule anchored with `^`/`\A` can only
// match on the first line. Any other rule has the whole prefix as its window. Each pass is
// one literal prefilter (internal/multimatch) over the window; a rule's own regexp runs
// only when its required literals occurred, so a clean answer usually runs none.

// EarlyBatchBytes is how many bytes the scanner lets arrive before it scans when no
// newline comes (celeste scans every 256 bytes or at a newline; half that cuts a 1,000-token
// answer a dozen tokens sooner, and the quarter-growth rule keeps the cost of the extra
// passes small).
const EarlyBatchBytes = 128

// earlyPlan is how a text rule is judged on a prefix of the answer.
type earlyPlan struct {
	re        *regexp.Regexp
	lineLocal bool // no match can span a newline: rescan from the current line's start
	beginText bool // `^` or `\A`: a line-local rule then matches only on the first line
	lookAhead bool // `\b` or `\B`: a match touching the prefix's end is not certain
}

// planEarly returns how r can be judged on a prefix, or nil if only the whole answer
// can decide it. r is a valid, normalised text rule.
func planEarly(r *Rule) *earlyPlan {
	if r.Negate || r.Shadow || r.Tool() != "" || r.Predicate != nil || r.AppliesWhen != nil || r.Fix != nil {
		return nil
	}
	re, err := regexp.Compile(r.Condition)
	if err != nil {
		return nil
	}
	tree, err := syntax.Parse(r.Condition, syntax.Perl)
	if err != nil {
		return nil
	}
	p := &earlyPlan{re: re, lineLocal: true}
	endOnly := false
	var walk func(*syntax.Regexp)
	walk = func(t *syntax.Regexp) {
		switch t.Op {
		case syntax.OpEndLine, syntax.OpEndText:
			endOnly = true
		case syntax.OpWordBoundary, syntax.OpNoWordBoundary:
			p.lookAhead = true
		case syntax.OpBeginText:
			p.beginText = true
		case syntax.OpAnyChar:
			p.lineLocal = false
		case syntax.OpLiteral:
			if strings.ContainsRune(string(t.Rune), '\n') {
				p.lineLocal = false
			}
		case syntax.OpCharClass:
			for i := 0; i+1 < len(t.Rune); i += 2 {
				if t.Rune[i] <= '\n' && '\n' <= t.Rune[i+1] {
					p.lineLocal = false
				}
			}
		}
		for _, s := range t.Sub {
			walk(s)
		}
	}
	walk(tree)
	if endOnly {
		return nil
	}
	return p
}

// earlySet is a rule set's early rules, compiled once with the rule set: one literal
// prefilter (internal/multimatch) per scanning strategy, so a scan costs one automaton
// pass over the window, and a rule's own regexp runs only when its required literals
// occurred (a clean answer usually runs none).
type earlySet struct {
	line, other       textMatcher
	lineRules, oRules []*compiledRule
}

// compileEarly builds the early set of text rules (nil when none is early).
func (e *Engine) compileEarly(text []*compiledRule, next analysisCache) *earlySet {
	es := &earlySet{}
	for _, r := range text {
		switch {
		case r.early == nil:
		case r.early.lineLocal:
			es.lineRules = append(es.lineRules, r)
		default:
			es.oRules = append(es.oRules, r)
		}
	}
	if len(es.lineRules)+len(es.oRules) == 0 {
		return nil
	}
	es.line, es.other = e.newTextMatcher(regexConditions(es.lineRules), next), e.newTextMatcher(regexConditions(es.oRules), next)
	return es
}

// regexConditions lists the rules' regex conditions, in order (early rules have no tree).
func regexConditions(rules []*compiledRule) []string {
	out := make([]string, len(rules))
	for i, c := range rules {
		out[i] = c.Condition
	}
	return out
}

// Scanner watches the streamed text of one tour's answer for the armed text rules a
// prefix can decide. Get one from Move.EarlyScanner; it is not safe for concurrent use
// (the caller already serialises the chunks of one answer).
type Scanner struct {
	m     *Move
	es    *earlySet
	armed []bool // by compiledRule.index: armed and early when the tour began

	seen      int  // bytes checked for a newline
	scanned   int  // prefix length at the last scan
	lineStart int  // start of the line the last scan ended in
	lineAt    int  // length of the current line at its last scan
	fullAt    int  // prefix length at the last whole-prefix scan
	nonBlank  bool // the text so far says something (a blank answer is never judged)
	stopped   bool
	buf       [16]int
}

// EarlyScanner returns a scanner for the current tour's answer, or nil when early
// interrupt has nothing to do in it: no armed text rule is early (Rule.Early, or
// Config.EarlyInterrupt for every rule) and decidable on a prefix, or the move has no
// retry left. The answer's target must be its whole text (a tool-calling answer): a
// ReAct answer's target starts at its last "Final Answer:", which a prefix cannot know.
func (m *Move) EarlyScanner() *Scanner {
	es := m.set.early
	if es == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended || !m.retryLeft() {
		return nil
	}
	var armed []bool
	for _, rules := range [][]*compiledRule{es.lineRules, es.oRules} {
		for _, r := range rules {
			if m.armed(r) {
				if armed == nil {
					armed = make([]bool, len(m.set.text))
				}
				armed[r.index] = true
			}
		}
	}
	if armed == nil {
		return nil
	}
	return &Scanner{m: m, es: es, armed: armed}
}

// Scan looks at text, the answer's text streamed so far; each call's text extends the
// previous one. Between batch boundaries it only looks for a newline. At the first
// certain miss it records the firings exactly as CheckAnswer does when it discards (one
// retry spent, the rules silent for the rest of the move), marked Early with the length
// of text as CutAtBytes, and returns the verdict with Discard set: the caller stops the
// provider, drops the held speech and replays with the verdict's interrupt. Once it has
// returned a verdict, or found that the move can no longer discard, it returns false.
func (s *Scanner) Scan(ctx context.Context, text []byte) (Verdict, bool) {
	if s == nil || s.stopped || len(text) <= s.scanned {
		return Verdict{}, false
	}
	nl := bytes.IndexByte(text[s.seen:], '\n') >= 0
	s.seen = len(text)
	if !nl && len(text)-s.scanned < EarlyBatchBytes {
		return Verdict{}, false
	}
	return s.scan(ctx, text)
}

// due reports whether a window that has grown from last to n bytes is worth a rescan:
// once it grew by a quarter. The rescans of a window then form a geometric series and
// cost at most five passes over it in all, and a miss is found before the text has grown
// by a quarter (or a batch, for short texts) past it.
func due(n, last int) bool { return n*4 >= last*5 }

func (s *Scanner) scan(ctx context.Context, text []byte) (Verdict, bool) {
	// A chunk may end inside a rune; its first bytes would read as U+FFFD, which a class
	// like [^→] matches and the whole rune may not. Scan up to the last whole rune only.
	text = text[:wholeRunes(text)]
	if len(text) <= s.scanned {
		return Verdict{}, false
	}
	if !s.nonBlank {
		s.nonBlank = len(bytes.TrimSpace(text[s.scanned:])) > 0
	}
	var hits []*compiledRule
	nl := bytes.LastIndexByte(text[s.scanned:], '\n')
	if s.nonBlank {
		// A line that ended is scanned whole once more: after it, it is never looked at
		// again, and a miss in its last quarter would otherwise wait for the answer's end.
		if s.es.lineRules != nil && (nl >= 0 || due(len(text)-s.lineStart, s.lineAt)) {
			s.lineAt = len(text) - s.lineStart
			hits = s.match(text, s.lineStart, s.es.line, s.es.lineRules, hits)
		}
		if s.es.oRules != nil && due(len(text), s.fullAt) {
			s.fullAt = len(text)
			hits = s.match(text, 0, s.es.other, s.es.oRules, hits)
		}
	}
	if nl >= 0 {
		s.lineStart, s.lineAt = s.scanned+nl+1, 0
	}
	s.scanned = len(text)
	if len(hits) == 0 {
		return Verdict{}, false
	}
	s.stopped = true
	return s.m.earlyMiss(ctx, hits, len(text))
}

// match runs one prefilter over text[from:] and appends the armed rules whose match there
// is certain for the whole answer.
func (s *Scanner) match(text []byte, from int, set textMatcher, rules []*compiledRule, hits []*compiledRule) []*compiledRule {
	window := string(text[from:])
	for _, i := range set.Match(window, s.buf[:0]) {
		r := rules[i]
		if !s.armed[r.index] {
			continue
		}
		p := r.early
		if p.beginText && from > 0 {
			continue // `^` would hold at the window's start, but not in the answer
		}
		if p.lookAhead {
			// The match must not touch the end: `\b` there depends on the next byte.
			if loc := p.re.FindStringIndex(window); loc == nil || from+loc[1] >= len(text) {
				continue
			}
		}
		hits = append(hits, r)
	}
	return hits
}

// earlyMiss records the early misses of rules and returns the discarding verdict, or
// false when the move can no longer discard (ended, no retry left, rules no longer armed).
func (m *Move) earlyMiss(ctx context.Context, rules []*compiledRule, cutAt int) (Verdict, bool) {
	m.mu.Lock()
	if m.ended || !m.retryLeft() {
		m.mu.Unlock()
		return Verdict{}, false
	}
	var missed []*compiledRule
	for _, r := range rules {
		if m.armed(r) {
			missed = append(missed, r)
		}
	}
	if len(missed) == 0 {
		m.mu.Unlock()
		return Verdict{}, false
	}
	m.retries++
	if m.fired == nil {
		m.fired = map[string]bool{}
	}
	v := Verdict{Discard: true}
	blocks := make([]string, 0, len(missed))
	fired := make([]Firing, 0, len(missed))
	for _, r := range missed {
		m.fired[r.Name] = true
		v.Rules = append(v.Rules, r.Name)
		blocks = append(blocks, InterruptBlock(r.Name, r.Text))
		fired = append(fired, m.record(Firing{Rule: r.Name, Mode: ModeInterrupt, Retry: true, Early: true, CutAtBytes: cutAt}))
	}
	m.mu.Unlock()
	m.announce(ctx, fired)
	v.Interrupt = strings.Join(blocks, "\n")
	return v, true
}

// wholeRunes returns the length of text without a rune cut off at its end.
func wholeRunes(text []byte) int {
	for i := len(text) - 1; i >= 0 && i >= len(text)-utf8.UTFMax; i-- {
		if utf8.RuneStart(text[i]) {
			if !utf8.FullRune(text[i:]) {
				return i
			}
			break
		}
	}
	return len(text)
}
