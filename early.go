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
//   - a shadowed rule never cuts anything.
//
// How the scan stays incremental. The text is looked at in batches (a newline, or every
// EarlyBatchBytes bytes), never per chunk. A rule whose matches cannot span a newline
// (no `.` under (?s), no class or literal that holds '\n') is rescanned only from the start
// of the current line: complete lines are never looked at again, and a line start has the
// same left context ('\n', a non-word byte) in the prefix as in the whole answer. Such a
// rule anchored with `^`/`\A` can only match on the first line, and is dropped once that
// line is complete. Any other rule is rescanned over the whole prefix, but only while the
// prefix is short (EarlyRescanBytes) or once it has grown by a quarter since the last scan:
// the total work stays linear in the answer's length (a geometric series), and a miss is
// still found within a quarter of the text already streamed.

// EarlyBatchBytes is how many bytes the scanner lets arrive before it scans when no
// newline comes (celeste scans every 256 bytes or at a newline).
const EarlyBatchBytes = 256

// EarlyRescanBytes is how long a prefix may be before a rule that can span lines is
// rescanned only after the prefix grew by a quarter.
const EarlyRescanBytes = 4096

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
	if r.Negate || r.Shadow || r.Tool() != "" {
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

// Scanner watches the streamed text of one tour's answer for the armed text rules a
// prefix can decide. Get one from Move.EarlyScanner; it is not safe for concurrent use
// (the caller already serialises the chunks of one answer).
type Scanner struct {
	m     *Move
	rules []*compiledRule // armed early rules when the tour began
	done  []bool          // rules that can no longer match early

	seen      int // bytes checked for a newline
	scanned   int // prefix length at the last scan
	lineStart int // start of the line the last scan ended in
	fullAt    []int
	nonBlank  bool // the text so far says something (a blank answer is never judged)
	stopped   bool
}

// EarlyScanner returns a scanner for the current tour's answer, or nil when early
// interrupt has nothing to do in it: no armed text rule is early (Rule.Early, or
// Config.EarlyInterrupt for every rule) and decidable on a prefix, or the move has no
// retry left. The answer's target must be its whole text (a tool-calling answer): a
// ReAct answer's target starts at its last "Final Answer:", which a prefix cannot know.
func (m *Move) EarlyScanner() *Scanner {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended || !m.retryLeft() {
		return nil
	}
	var rules []*compiledRule
	for _, r := range m.set.text {
		if r.early != nil && m.armed(r) {
			rules = append(rules, r)
		}
	}
	if len(rules) == 0 {
		return nil
	}
	return &Scanner{m: m, rules: rules, done: make([]bool, len(rules)), fullAt: make([]int, len(rules))}
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
	for i, r := range s.rules {
		if s.done[i] || !s.nonBlank {
			continue
		}
		p := r.early
		from := 0
		switch {
		case p.lineLocal && p.beginText:
			if s.lineStart > 0 {
				s.done[i] = true // its only line is complete and did not match
				continue
			}
		case p.lineLocal:
			from = s.lineStart
		default:
			if len(text) > EarlyRescanBytes && len(text)*4 < s.fullAt[i]*5 {
				continue // rescanned recently: wait for a quarter more
			}
			s.fullAt[i] = len(text)
		}
		loc := p.re.FindIndex(text[from:])
		if loc != nil && (!p.lookAhead || from+loc[1] < len(text)) {
			hits = append(hits, r)
		}
	}
	s.scanned = len(text)
	if i := bytes.LastIndexByte(text, '\n'); i >= 0 {
		s.lineStart = i + 1
	}
	if len(hits) == 0 {
		return Verdict{}, false
	}
	s.stopped = true
	return s.m.earlyMiss(ctx, hits, len(text))
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
