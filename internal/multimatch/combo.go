package multimatch

import (
	"regexp/syntax"
	"sync"
	"sync/atomic"

	"github.com/streamrules/streamrules/internal/lazydfa"
)

// Combined runs.
//
// Some patterns are verified over the whole text whenever they are candidates: those
// without a window (no anchor literal, or one whose occurrences are expected to cost
// more than the text, such as a digit or a space) and those bounded on one side only.
// Each such run is one DFA pass over the text. A set groups these patterns into combos,
// each with one lazy DFA of all its members' programs (lazydfa.New), and when two or
// more members of a combo are candidates for a text, one pass of the combo's DFA
// (DFA.Which) says which of them match: on real guardrail rules, about eight passes
// of 4 KB become one. The combo is the members' programs side by side, so its verdicts
// are theirs; where it gives up (too many new states for the text), each member is
// verified by itself, as without combos.

// Bounds of a combo: a DFA's state is a set of instructions, and its outputs fit one
// word.
const (
	maxComboInsts   = 1500
	maxComboMembers = 64
)

// rideAnchorCost is the expected cost of an anchor's windows from which a pattern also
// joins a combo, as a rider: its verdict is taken from the combo's pass when the pass
// runs anyway (its whole-prone members ask for it), and from its windows otherwise. The
// cost model underrates digits, which real answers are full of (prices, versions, dates).
const rideAnchorCost = 0.05

// denseAnchorCost is the expected cost of an anchor's windows (bytes run per byte of
// text, see chooseAnchor) past which the pattern gives up its windows: the set does not
// record its anchor's occurrences, and it is whole-prone.
const denseAnchorCost = 0.5

// dense reports whether pattern i's windows are expected to cost denseAnchorCost of the
// text or more. A pattern bounded on one side only is costed at exactly that (its one
// window is half the text on average, see chooseAnchor), and is dense: to find where
// its window ends, every occurrence of its anchor would be recorded (a space, a
// newline: hundreds in an answer), which costs more than the half it saves.
func (s *Set) dense(i int) bool { return s.pats[i].anchorCost >= denseAnchorCost }

// combo is a group of patterns verified by one DFA pass.
type combo struct {
	members []int32 // pattern indices in the set; output k of the DFA is members[k]
	runText []string
	prone   int // members that are whole-prone (the others ride)

	once sync.Once
	dfa  *lazydfa.DFA // nil: did not compile (cannot happen: every member compiled)
	// A combo that has mostly given up (its members' texts need more states than one
	// pass may build, or its passes stop at maxComboStops matches) is off: tried once in
	// comboRetry passes only, as its DFA, warmer with each try, may yet do.
	runs, gaveUp, skipped atomic.Int64
}

// comboRun is a combo's state in one Match: how many of its members are
// candidates, and once run, which match.
type comboRun struct {
	gen   uint32
	cands int32  // whole-prone members among the candidates
	want  uint64 // the candidate members, riders too: once all match, the pass may stop
	state uint8  // comboPending, comboRan, comboPartial, comboFailed
	res   uint64
}

const (
	comboPending uint8 = iota
	comboRan
	comboPartial // stopped early: the members in res match, the others are undecided
	comboFailed
)

// wholeProne reports whether pattern i of s is verified over the whole text whenever
// it is a candidate (see the comment above), and would not rather run by itself:
// patterns anchored at the start stop at once, and a literal prefix lets a DFA skip
// to it with strings.Index.
func (s *Set) wholeProne(i int) bool {
	a := s.pats[i]
	if a.direct || a.prefix || a.rarePrefix {
		return false
	}
	return s.anchor[i] == nil || s.dense(i) || (a.before < 0 || a.after < 0) && a.fromBody == ""
}

// rider reports whether pattern i of s joins a combo as a rider (see rideAnchorCost).
func (s *Set) rider(i int) bool {
	a := s.pats[i]
	return !a.direct && s.anchor[i] != nil && a.fromBody == "" && a.before >= 0 && a.after >= 0 &&
		a.anchorCost >= rideAnchorCost && !s.dense(i)
}

// buildCombos groups the whole-prone patterns and the riders, in order, into combos.
func (s *Set) buildCombos() {
	s.comboOf = make([]int32, len(s.pats))
	var cur *combo
	insts := 0
	flush := func() {
		if cur != nil && cur.prone > 1 {
			c := int32(len(s.combos))
			for k, i := range cur.members {
				s.comboOf[i], s.comboAt[i] = c, uint8(k)
			}
			s.combos = append(s.combos, cur)
		}
		cur, insts = nil, 0
	}
	for i := range s.pats {
		s.comboOf[i] = -1
	}
	s.comboAt = make([]uint8, len(s.pats))
	s.comboRider = make([]bool, len(s.pats))
	for i, a := range s.pats {
		prone := s.wholeProne(i)
		if !prone && !s.rider(i) {
			continue
		}
		if cur != nil && (insts+a.insts > maxComboInsts || len(cur.members) == maxComboMembers) {
			flush()
		}
		if cur == nil {
			cur = &combo{}
		}
		if prone {
			cur.prone++
		} else {
			s.comboRider[i] = true
		}
		cur.members = append(cur.members, int32(i))
		cur.runText = append(cur.runText, a.runText)
		insts += a.insts
	}
	flush()
	if len(s.combos) == 0 {
		s.comboOf, s.comboAt, s.comboRider = nil, nil, nil
	}
}

// countCombos notes, per combo, its members among the candidates and the always-run
// patterns of this Match, and counts the whole-prone ones.
func (s *Set) countCombos(sc *scratch) {
	count := func(ps []int32) {
		for _, i := range ps {
			c := s.comboOf[i]
			if c < 0 {
				continue
			}
			r := &sc.combo[c]
			if r.gen != sc.gen {
				*r = comboRun{gen: sc.gen}
			}
			r.want |= 1 << s.comboAt[i]
			if !s.comboRider[i] {
				r.cands++
			}
		}
	}
	count(sc.cands)
	count(s.always)
}

// comboVerdict says whether pattern i matches text from its combo's pass, running the
// pass when its first candidate member asks. ok is false when the pattern is to be
// verified by itself: its combo has fewer than two whole-prone candidates in this text,
// gave up, or stopped before it could say (see maxComboStops).
func (s *Set) comboVerdict(i int32, text string, sc *scratch) (matched, ok bool) {
	if s.combos == nil {
		return false, false
	}
	c := s.comboOf[i]
	if c < 0 {
		return false, false
	}
	r := &sc.combo[c]
	if r.gen != sc.gen || r.cands < 2 || r.state == comboFailed {
		return false, false
	}
	if r.state == comboPending {
		res, complete, ran, ok := s.combos[c].which(text, r.want, int(r.cands), &sc.which)
		if ran {
			sc.runs++
			sc.whole++
			sc.read += len(text)
		}
		switch {
		case !ok:
			r.state = comboFailed
			return false, false
		case !complete:
			r.state = comboPartial
		default:
			r.state = comboRan
		}
		r.res = res
	}
	m := r.res&(1<<s.comboAt[i]) != 0
	return m, m || r.state == comboRan
}

// comboRetry: a combo that is off is tried once in this many of the passes asked of it.
const comboRetry = 64

// comboDecay: a combo's counts of passes and give-ups halve when its count of passes
// reaches a multiple of this: at the 1,024th pass, then every 512 passes.
const comboDecay = 1024

// maxComboStops is the match at which a combo's pass stops (see lazydfa.DFA.Which): a
// member that matches again and again makes each of its matches a slower step (tens of
// nanoseconds), and past this many the pass costs more than it saves.
const maxComboStops = 256

// which runs the combo's DFA over text, standing for runs runs of its members alone
// (its budget of new states is theirs: see lazydfa.DFA.Which), and returns the mask of
// its members that match. The pass stops once the members in want have matched; when
// it stopped before the end (complete false), the members in mask match and the others
// are undecided. ran says whether a pass ran at all; ok is false when it gave up or
// the combo is off. A pass that gave up or stopped at its maxComboStops-th match
// counts towards turning the combo off.
func (c *combo) which(text string, want uint64, runs int, buf *[]int32) (mask uint64, complete, ran, ok bool) {
	if g := c.gaveUp.Load(); g >= 8 && 2*g > c.runs.Load() && c.skipped.Add(1)%comboRetry != 0 {
		return 0, false, false, false // off, but tried again now and then: see combo
	}
	c.once.Do(c.compile)
	if c.dfa == nil {
		return 0, false, false, false
	}
	if r := c.runs.Add(1); r%comboDecay == 0 {
		// Forget half of the past (roughly, under concurrent passes), so that a change
		// in the texts switches the combo off, or back on, within about comboDecay passes.
		c.runs.Add(-r / 2)
		c.gaveUp.Store(c.gaveUp.Load() / 2)
	}
	out, complete, ok := c.dfa.Which(text, (*buf)[:0], want, maxComboStops, runs)
	*buf = out
	if !ok {
		c.gaveUp.Add(1)
		return 0, false, true, false
	}
	for _, k := range out {
		mask |= 1 << k
	}
	if !complete && mask&want != want {
		c.gaveUp.Add(1) // stopped at maxComboStops: the pass was worth less than it cost
	}
	return mask, complete, true, true
}

func (c *combo) compile() {
	progs := make([]*syntax.Prog, len(c.runText))
	for k, p := range c.runText {
		re, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			return
		}
		if progs[k], err = syntax.Compile(re.Simplify()); err != nil {
			return
		}
	}
	c.dfa = lazydfa.New(progs...)
}
