package streamrules

import (
	"bytes"
	"context"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"

	"github.com/streamrules/streamrules/internal/lazydfa"
	"github.com/streamrules/streamrules/internal/rxprog"
)

// Early interrupt: while an answer's speech is held, its streamed text is scanned as it
// comes, and the provider is stopped at the first miss that is already certain, instead
// of paying for (and waiting on) the rest of an answer that will be thrown away.
//
// Which rules a prefix can decide. A positive condition that matched stays matched: if the
// regexp matches a prefix of the answer at [i,j), the same match exists in the whole
// answer, as long as nothing in it looks past j. So:
//   - a negate rule decides only at the end (the tail may still come);
//   - a condition that needs the end of the text (`$` without (?m), `\z`) decides only
//     at the end;
//   - `\b`, `\B` and `(?m)$` look one character ahead: a match is certain once the
//     character after it has arrived (the scanner sees it so);
//   - a shadowed rule never cuts anything;
//   - a rule with a predicate tree or an applies_when is not in a DFA group: its atoms run
//     each in its own DFA (early_tree.go) and it is cut once the tree is certain to fire;
//   - a rule with a fix decides only at the end: the fix repairs the answer in place,
//     which is cheaper than any cut (the load warns where `early` can never act).
//
// How the scan stays incremental. The early rules of a set are compiled into lazy DFAs
// (internal/lazydfa), a few rules to each; a tour's scanner keeps one cursor per DFA and
// feeds it the new bytes only, so each byte of the answer is read once per DFA, by one
// table step. A match the DFA reports has seen the character after it, so it is certain
// for every answer that starts with the text so far. The bytes are fed in batches of
// earlyBatchBytes (or at the end of a chunk past it), which keeps the per-chunk cost at a
// length comparison. A DFA that gives up on a stream (it would build a new state every
// few bytes) stops scanning that stream: those rules are then judged at the end, as
// without early interrupt.

// earlyBatchBytes is how many bytes the scanner lets arrive before it feeds them to its
// automata: a miss is cut at most that many bytes (plus a chunk) after it ends. celeste
// (the agent whose rules package this rule model follows) scans every 256 bytes; a DFA step costs about a nanosecond a byte, so feeding often
// costs little more than feeding rarely.
const earlyBatchBytes = 64

// earlyPlan is how a text rule is judged on a prefix of the answer: its compiled program,
// run in its group's DFA, and alone where that DFA gives up on an answer.
type earlyPlan struct {
	prog *syntax.Prog
	// runes are the program's rune instructions, asserts whether it has an empty-width
	// assertion: what a repair elsewhere must not touch for a match to survive it
	// (releaser.fixOpen).
	runes     []*syntax.Inst
	asserts   bool
	aloneOnce sync.Once
	alone     *lazydfa.DFA
}

// aloneDFA returns the DFA of the rule's program alone, made at its first use.
func (p *earlyPlan) aloneDFA() *lazydfa.DFA {
	p.aloneOnce.Do(func() { p.alone = lazydfa.New(p.prog) })
	return p.alone
}

// planEarly returns how r can be judged on a prefix, or nil if only the whole answer
// can decide it. r is a valid, normalised text rule.
func planEarly(r *Rule) *earlyPlan {
	if r.Negate || r.Shadow || r.Tool() != "" || r.Predicate != nil || r.AppliesWhen != nil || r.Fix != nil {
		return nil
	}
	tree, err := syntax.Parse(r.Condition, syntax.Perl)
	if err != nil {
		return nil
	}
	tree = tree.Simplify()
	prog, err := syntax.Compile(tree)
	if err != nil || prog.StartCond()&syntax.EmptyEndText != 0 {
		return nil // no match is possible before the end
	}
	endOnly := false
	var walk func(*syntax.Regexp)
	walk = func(t *syntax.Regexp) {
		if t.Op == syntax.OpEndText {
			endOnly = true
		}
		for _, s := range t.Sub {
			walk(s)
		}
	}
	walk(tree)
	if endOnly {
		// `$` or `\z`: it holds only at the end of the answer, where the answer is judged
		// anyway (an alternative without it could match sooner; such rules are rare, and
		// leaving them to the end is always right).
		return nil
	}
	return &earlyPlan{prog: prog, runes: rxprog.RuneInsts(prog), asserts: rxprog.HasAssertion(tree)}
}

// earlyGroupInsts bounds the instructions of the programs one early DFA holds: a DFA
// state costs time in the number of instructions it tracks, so many rules are split into
// several DFAs, each stepped per byte.
const earlyGroupInsts = 2000

// earlyGroupCut makes group boundaries local: a group also ends after a rule whose name
// hashes to 0 modulo it (about 32 rules a group). An edit then changes one group, and
// every other group keeps its DFA, warm states included, across the reload; a cut by
// size alone would shift every boundary after the edited rule.
const earlyGroupCut = 32

// earlySet is a rule set's early rules, compiled once with the rule set.
type earlySet struct {
	groups []earlyGroup
	byKey  map[string]*lazydfa.DFA // each group's DFA by its conditions, for the next reload
}

type earlyGroup struct {
	dfa   *lazydfa.DFA
	rules []*compiledRule // output k of dfa is rules[k]
}

// compileEarly builds the early set of text rules (nil when none is early), reusing the
// DFAs of prev's groups whose conditions are the same.
func (e *Engine) compileEarly(text []*compiledRule, prev *earlySet) *earlySet {
	es := &earlySet{byKey: map[string]*lazydfa.DFA{}}
	var rules []*compiledRule
	var progs []*syntax.Prog
	var key strings.Builder
	size := 0
	flush := func() {
		if len(rules) == 0 {
			return
		}
		k := key.String()
		d := es.byKey[k] // two groups of the same conditions may share one DFA
		if d == nil && prev != nil {
			d = prev.byKey[k]
		}
		if d == nil {
			d = lazydfa.New(progs...)
		}
		es.byKey[k] = d
		es.groups = append(es.groups, earlyGroup{dfa: d, rules: rules})
		rules, progs, size = nil, nil, 0
		key.Reset()
	}
	for _, r := range text {
		if r.early == nil {
			continue
		}
		if size > 0 && size+len(r.early.prog.Inst) > earlyGroupInsts {
			flush()
		}
		rules, progs = append(rules, r), append(progs, r.early.prog)
		size += len(r.early.prog.Inst)
		key.WriteString(r.Condition)
		key.WriteByte(0)
		if nameHash(r.Name)%earlyGroupCut == 0 {
			flush()
		}
	}
	flush()
	if len(es.groups) == 0 {
		return nil
	}
	return es
}

// nameHash is FNV-1a of a rule's name.
func nameHash(name string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint32(name[i])) * 16777619
	}
	return h
}

// Scanner watches the streamed text of one tour's answer for the armed text rules a
// prefix can decide. Get one from Move.EarlyScanner; it is not safe for concurrent use
// (the caller already serialises the chunks of one answer).
type Scanner struct {
	m       *Move
	es      *earlySet
	armed   []bool // by compiledRule.index: armed and early when the tour began
	cursors []lazydfa.Cursor
	off     []bool // per group: its DFA gave up on this answer
	// alone, per group whose DFA gave up (nil until one does): its armed rules, each
	// scanned by its own DFA from the start of the answer, so that one rule whose DFA
	// explodes on this text does not stop the early cuts of the others.
	alone [][]aloneCursor
	fed   int // bytes of the answer read
	jfed  int // bytes of the judged text (the answer, or its certain repair) fed to the cursors
	// hits are the armed rules seen matching while the text was still blank (a blank
	// answer is never judged, so they cut only once something is said).
	hits     []*compiledRule
	nonBlank bool
	stopped  bool

	trees *earlyTrees // armed early rules with a predicate tree or applies_when (nil: none)
	// rel follows the final text: the early rules read its certain prefix, so a cut is a
	// verdict the whole answer reaches too (another rule's repair may remove a match the
	// raw text has). release: Release lets it go (HeldScanner); nil when nothing is armed.
	rel     *releaser
	release bool
}

// EarlyScanner returns a scanner for the current tour's answer, or nil when early
// interrupt has nothing to do in it: no armed text rule is early (Rule.Early, or
// Config.EarlyInterrupt for every rule) and decidable on a prefix, or the move has no
// retry left. The answer's target must be its whole text (a tool-calling answer): a
// ReAct answer's target starts at its last "Final Answer:", which a prefix cannot know.
func (m *Move) EarlyScanner() *Scanner { return m.newScanner(false) }

// HeldScanner is EarlyScanner that also follows the answer's release point (see
// Scanner.Release): use it where held speech may be let go as it becomes
// final. It returns nil when the move has ended. The move's input and tool record are
// read here, once (the rules' context atoms are constants of the tour): set the input
// before the tour's model call, as the middleware does.
func (m *Move) HeldScanner() *Scanner { return m.newScanner(true) }

func (m *Move) newScanner(release bool) *Scanner {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended {
		return nil
	}
	s := &Scanner{m: m, stopped: true}
	if es := m.set.early; es != nil && m.retryLeft() {
		var armed []bool
		for _, g := range es.groups {
			for _, r := range g.rules {
				if m.armed(r) {
					if armed == nil {
						armed = make([]bool, len(m.set.text))
					}
					armed[r.index] = true
				}
			}
		}
		if armed != nil {
			s.es, s.armed, s.stopped = es, armed, false
			s.cursors, s.off = make([]lazydfa.Cursor, len(es.groups)), make([]bool, len(es.groups))
			for i, g := range es.groups {
				s.cursors[i] = g.dfa.Start()
			}
		}
	}
	// With no retry left, a rule without a fix can change nothing: its miss is kept and
	// reminds later. Only the fixes are followed then (the replay of a discard, replays off).
	var live []*compiledRule
	for _, r := range m.set.text {
		if m.armed(r) && !r.shadow && (r.fix != nil || m.retryLeft()) {
			live = append(live, r)
		}
	}
	if m.retryLeft() {
		s.initTrees(live)
	}
	if !release && s.stopped {
		return nil
	}
	// An armed gate does not hold the text: a call it matches after some text was shown is
	// refused in place (CheckShownResponse), so only the text rules decide what is final.
	s.rel, s.release = newReleaser(live, m.vars, &m.facts), release
	return s
}

// Scan looks at text, the answer's text streamed so far; each call's text extends the
// previous one. It feeds the new bytes to the early DFAs once 64 of them have
// arrived. At the first certain miss it records the firings exactly as CheckAnswer does
// when it discards (one retry spent, the rules silent for the rest of the move), marked
// Early with the length of text as CutAtBytes, and returns the verdict with Discard set:
// the caller stops the provider, drops the held speech and replays with the verdict's
// interrupt. Once it has returned a verdict, or found that the move can no longer
// discard, it returns false.
func (s *Scanner) Scan(ctx context.Context, text []byte) (Verdict, bool) {
	if s == nil || s.stopped || len(text)-s.fed < earlyBatchBytes {
		return Verdict{}, false
	}
	return s.scan(ctx, text)
}

// scan feeds text's new bytes, whatever their number. The early rules read what the
// whole answer's verdict reads: the answer with the repairs the release follows made (the
// certain prefix of the final text), so a match a repair removes is never cut on.
func (s *Scanner) scan(ctx context.Context, text []byte) (Verdict, bool) {
	if s.stopped || len(text) <= s.fed {
		return Verdict{}, false
	}
	s.fed = len(text)
	judged := text
	if s.rel != nil {
		if final := s.rel.finalOf(text); !s.rel.twin {
			judged = final
		}
	}
	if len(judged) <= s.jfed {
		return Verdict{}, false
	}
	p := judged[s.jfed:]
	s.jfed = len(judged)
	if !s.nonBlank {
		s.nonBlank = len(bytes.TrimSpace(p)) > 0
	}
	s.trees.scan(judged, &s.hits)
	for gi := range s.groups() {
		if s.off[gi] {
			s.feedAlone(s.alone[gi], p)
			continue
		}
		g, cur := &s.es.groups[gi], &s.cursors[gi]
		for q := p; len(q) > 0; {
			out, rest, ok := g.dfa.Feed(cur, q)
			if !ok {
				s.off[gi] = true
				s.startAlone(gi, judged)
				break
			}
			for _, k := range out {
				if r := g.rules[k]; s.armed[r.index] && !slices.Contains(s.hits, r) {
					s.hits = append(s.hits, r)
				}
			}
			q = rest
		}
	}
	if len(s.hits) == 0 || !s.nonBlank || s.rel != nil && s.rel.fixOpen(s.hits) {
		// A watched rule with a fix that may still fire repairs the answer only at its end,
		// and the repair may remove the match: only the end can tell.
		return Verdict{}, false
	}
	s.stopped = true
	return s.m.earlyMiss(ctx, s.hits, len(text))
}

// aloneCursor scans one rule of a group whose DFA gave up, with the rule's own DFA.
type aloneCursor struct {
	r   *compiledRule
	d   *lazydfa.DFA
	cur lazydfa.Cursor
	off bool // this DFA gave up too: the rule is left to the end of the answer
}

// startAlone scans the armed rules of group gi each alone from now on, from the start of
// text (the group's DFA had read some of it).
func (s *Scanner) startAlone(gi int, text []byte) {
	if s.alone == nil {
		s.alone = make([][]aloneCursor, len(s.es.groups))
	}
	cs := []aloneCursor{}
	for _, r := range s.es.groups[gi].rules {
		if s.armed[r.index] {
			d := r.early.aloneDFA()
			cs = append(cs, aloneCursor{r: r, d: d, cur: d.Start()})
		}
	}
	s.alone[gi] = cs
	s.feedAlone(cs, text)
}

// feedAlone feeds p to the cursors of rules scanned alone.
func (s *Scanner) feedAlone(cs []aloneCursor, p []byte) {
	for i := range cs {
		c := &cs[i]
		for q := p; len(q) > 0 && !c.off; {
			out, rest, ok := c.d.Feed(&c.cur, q)
			if !ok {
				c.off = true
				break
			}
			if len(out) > 0 && !slices.Contains(s.hits, c.r) {
				s.hits = append(s.hits, c.r)
			}
			q = rest
		}
	}
}

// earlyMiss records the early misses of rules and returns the discarding verdict, or
// false when the move can no longer discard (ended, no retry left, rules no longer armed).
func (m *Move) earlyMiss(ctx context.Context, rules []*compiledRule, cutAt int) (Verdict, bool) {
	v, fired := m.earlyMissed(rules, cutAt)
	if fired == nil {
		return Verdict{}, false
	}
	m.announce(ctx, fired) // the host's code: after the unlock
	return v, true
}

// earlyMissed decides earlyMiss's verdict with m.mu held and returns it with the firings
// to announce; nil firings: the move cannot discard.
func (m *Move) earlyMissed(rules []*compiledRule, cutAt int) (Verdict, []Firing) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended || !m.retryLeft() {
		return Verdict{}, nil
	}
	var missed []*compiledRule
	for _, r := range rules {
		if m.armed(r) {
			missed = append(missed, r)
		}
	}
	missed = m.claimAllLocked(missed) // repeat-limited: claimed first, all at once (claim.go)
	if len(missed) == 0 {
		return Verdict{}, nil
	}
	// Found in text order; judged, like CheckAnswer's misses, in rule-name order (the
	// order of ruleSet.text).
	slices.SortFunc(missed, func(a, b *compiledRule) int { return a.index - b.index })
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
		fired = append(fired, m.record(Firing{Rule: r.Name, Mode: ModeInterrupt, Retry: true, Early: true, CutAtBytes: cutAt,
			Thinking: r.Scope == ScopeThinking, Delivery: DeliveryFull})) // an interrupt is never cut (delivery.go)
	}
	v.Interrupt = strings.Join(blocks, "\n")
	return v, fired
}
