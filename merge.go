package streamrules

import (
	"slices"
	"sync"
	"time"
)

// Merging overlays. After an edit, a large group's matcher is its old automaton plus a
// small overlay (matcher.go): the edit is in force at once, and checks pay a second, small
// automaton pass until the group is one set again. Once no reload has come for mergeDelay,
// a goroutine builds those groups' sets again from the analyses at hand, without reloadMu
// (a build of 10,000 patterns takes about 100 ms, which an edit must not wait for), and
// swaps in a copy of the rule set with them. The rules themselves are shared: a group's
// local pattern indices do not change. If a reload came meanwhile, its set is put on the
// new bases instead, so a burst of edits (an import) is never rebuilt edit by edit, yet
// ends up merged.

// mergeDelay is how long the rules must stay unchanged before a merge.
const mergeDelay = 2 * time.Second

type merger struct {
	mu      sync.Mutex
	running bool          // a merge goroutine is waiting or merging
	closed  bool          // Close was called: no goroutine may start
	kick    chan struct{} // cap 1: a reload came, the quiet period starts again
	done    chan struct{} // closed by close
	wg      sync.WaitGroup
	after   func(time.Duration) <-chan time.Time // time.After; tests drive their own
	merged  func()                               // test hook: a merge was swapped in
}

func newMerger() merger {
	return merger{kick: make(chan struct{}, 1), done: make(chan struct{}), after: time.After}
}

// reloaded is told of every reload that changed the set: it restarts the quiet period of
// a waiting merge, and starts one when the set has an overlay. Caller holds reloadMu.
func (m *merger) reloaded(e *Engine, overlaid bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || m.done == nil {
		return
	}
	select {
	case m.kick <- struct{}{}:
	default:
	}
	if m.running || !overlaid {
		return
	}
	m.running = true
	m.wg.Add(1)
	go e.mergeLoop()
}

// close stops a waiting merge, or waits for a running one to finish.
func (m *merger) close() {
	m.mu.Lock()
	if m.closed || m.done == nil {
		m.mu.Unlock()
		return
	}
	m.closed = true
	close(m.done)
	m.mu.Unlock()
	m.wg.Wait()
}

func (e *Engine) mergeLoop() {
	m := &e.merge
	defer m.wg.Done()
	for {
		// Wait for mergeDelay without a reload.
		for quiet := false; !quiet; {
			select {
			case <-m.done:
				return
			case <-m.kick:
			case <-m.after(mergeDelay):
				quiet = true
			}
		}
		set := e.mergeOnce()
		if m.merged != nil {
			m.merged()
		}
		m.mu.Lock()
		if (set == nil || !set.overlaid()) && len(m.kick) == 0 {
			m.running = false
			m.mu.Unlock()
			return
		}
		m.mu.Unlock()
	}
}

// mergeOnce builds the overlaid groups of the set in force again and swaps in the set
// then in force put on them; it returns that set.
func (e *Engine) mergeOnce() *ruleSet {
	snap := e.rules.Load()
	if snap == nil {
		return nil
	}
	bases := mergedBases(snap)
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	set := e.rules.Load()
	if set != nil {
		set = set.rebased(bases)
		e.rules.Store(set)
	}
	return set
}

// groups returns the rule set's matchers that an overlay may be in, by group: the text
// rules and each tool's rules. (A field rule's own matcher is too small to be given an
// overlay; the early rules are DFAs, kept across reloads by group, see early.go.)
func (s *ruleSet) groups() map[string]textMatcher {
	g := map[string]textMatcher{"text": s.match}
	for tool, tr := range s.byTool {
		g["tool:"+tool] = tr.match
	}
	return g
}

// overlaid reports whether a matcher of s has an overlay.
func (s *ruleSet) overlaid() bool {
	for _, m := range s.groups() {
		if m.overlaid() {
			return true
		}
	}
	return false
}

// mergedBases builds one set for each overlaid group of s, by group.
func mergedBases(s *ruleSet) map[string]*matcherBase {
	out := map[string]*matcherBase{}
	for g, m := range s.groups() {
		if m.overlaid() {
			out[g] = buildMatcher(m.as).base
		}
	}
	return out
}

// rebased returns s with each overlaid group's matcher put on the group's base in bases:
// one set when the group has not changed since the bases were built, else that set and
// an overlay of the change. Groups without a base there, or that changed too much for
// it, keep their matcher (a later merge takes them). The rules are shared with s.
func (s *ruleSet) rebased(bases map[string]*matcherBase) *ruleSet {
	on := func(group string, m textMatcher) textMatcher {
		b := bases[group]
		switch {
		case b == nil || !m.overlaid():
			return m
		case slices.Equal(b.as, m.as):
			return &matcher{base: b, as: m.as}
		}
		if n := matcherOn(b, m.as); n != nil {
			return n
		}
		return m
	}
	out := *s
	out.match = on("text", s.match)
	out.byTool = make(map[string]*toolRules, len(s.byTool))
	for tool, tr := range s.byTool {
		if n := on("tool:"+tool, tr.match); n != tr.match {
			tr = &toolRules{rules: tr.rules, match: n}
		}
		out.byTool[tool] = tr
	}
	return &out
}
