package multimatch

import (
	"regexp/syntax"
	"slices"
	"sync"
)

// memo holds what one Analyze computes about a pattern more than once: the
// analyses of the top-level elements of the simplified pattern and of the
// whole, and the minimized groups. The required groups, the anchor search
// and the rare-prefix test all look at the same elements and groups; without
// it each analysed them again (the anchor search alone took a third of a
// cold compile). A nil *memo computes everything afresh.
type memo struct {
	qs     *syntax.Regexp
	elems  []*syntax.Regexp // qs's elements: its subexpressions if a concatenation, else qs
	parts  []*info          // analyze(elems[i]), nil until first needed
	all    *info            // analyze(qs), nil until first needed
	groups []groupMemo      // by first use; a pattern has a few dozen groups at most
	min    *minScratch      // minimize's working memory, made when first needed
	one    [1]*syntax.Regexp
	ar     litArena // the lists of the analysis, kept between patterns (see arena.go)
}

// memoPool keeps memos, their lists and minimize's working memory from pattern
// to pattern: a cold load makes 10,000 of them.
var memoPool = sync.Pool{New: func() any { return new(memo) }}

// release gives m back to memoPool; m computes nothing afterwards. What it returned
// (minimized groups, infos) lives in its arena, which release clears: copy out what is
// kept first (Analyze does, with clipGroups).
func (m *memo) release() {
	if m == nil {
		return
	}
	clear(m.parts)
	clear(m.groups)
	m.qs, m.elems, m.all, m.one[0] = nil, nil, nil, nil
	m.parts, m.groups = m.parts[:0], m.groups[:0]
	if !m.ar.reset() {
		return // a huge pattern's lists go to the garbage collector
	}
	memoPool.Put(m)
}

// groupMemo is what is known of one group: its minimized form, its cost.
type groupMemo struct {
	key     groupKey
	min     []lit
	cost    float64
	hasMin  bool
	hasCost bool
}

// groupKey names a group by identity: infos share their sets, so the same
// group reached twice is the same slice.
type groupKey struct {
	first *lit
	n     int
}

func newMemo(qs *syntax.Regexp) *memo {
	m := memoPool.Get().(*memo)
	m.qs = qs
	m.one[0] = qs
	m.elems = m.one[:]
	if qs.Op == syntax.OpConcat {
		m.elems = qs.Sub
	}
	m.parts = slices.Grow(m.parts[:0], len(m.elems))[:len(m.elems)]
	return m
}

// part returns analyze(m.elems[i]).
func (m *memo) part(i int) *info {
	if m.parts[i] == nil {
		m.parts[i] = m.ar.analyze(m.elems[i])
	}
	return m.parts[i]
}

// whole returns analyze(m.qs); for a concatenation, from its elements' analyses.
func (m *memo) whole() *info {
	if m.all == nil {
		if m.qs.Op == syntax.OpConcat {
			m.all = m.run(0, len(m.elems))
		} else {
			m.all = m.part(0) // the pattern is its one element
		}
	}
	return m.all
}

// run returns the analysis of the concatenation of elements i to j-1.
func (m *memo) run(i, j int) *info {
	if i == 0 && j == len(m.elems) && m.all != nil && m.qs.Op == syntax.OpConcat {
		return m.all // the whole, made already (the anchor search asks for it again)
	}
	parts := make([]*info, j-i)
	for k := range parts {
		parts[k] = m.part(i + k)
	}
	return m.ar.concatInfo(parts)
}

// minimize is the package's minimize, each group once.
func (m *memo) minimize(g []lit) []lit {
	if m == nil || len(g) == 0 {
		return minimize(g)
	}
	gm := m.group(g)
	if !gm.hasMin {
		if m.min == nil {
			m.min = &minScratch{}
		}
		gm.min, gm.hasMin = m.ar.minimizeWith(g, m.min), true
	}
	return gm.min
}

// cost is setCost, each group once.
func (m *memo) cost(g []lit) float64 {
	if m == nil || len(g) == 0 {
		return setCost(g)
	}
	gm := m.group(g)
	if !gm.hasCost {
		gm.cost, gm.hasCost = setCost(g), true
	}
	return gm.cost
}

// group returns the memo of a non-empty group, made if new.
func (m *memo) group(g []lit) *groupMemo {
	k := groupKey{&g[0], len(g)}
	for i := range m.groups {
		if m.groups[i].key == k {
			return &m.groups[i]
		}
	}
	m.groups = append(m.groups, groupMemo{key: k})
	return &m.groups[len(m.groups)-1]
}

// clipGroups gives the groups and the anchor a keeps lists of their own, on the
// heap: they were made in the memo's arena (or are sets shared with other infos,
// with room for what dedup removed). A list the anchor and a group (or two
// groups) share stays shared.
func clipGroups(a *Analysis) {
	type clipped struct {
		first *lit
		n     int
		to    []lit
	}
	var done []clipped
	clip := func(g []lit) []lit {
		if len(g) == 0 {
			return g
		}
		for _, c := range done {
			if c.first == &g[0] && c.n == len(g) {
				return c.to
			}
		}
		to := slices.Clone(g)
		done = append(done, clipped{&g[0], len(g), to})
		return to
	}
	a.anchor = clip(a.anchor)
	for i, g := range a.groups {
		a.groups[i] = clip(g)
	}
}
