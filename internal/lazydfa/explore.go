package lazydfa

import (
	"slices"
	"unicode/utf8"
)

// MatchesEvery reports whether every text that ends with prefix followed by any run of
// the runes in tail (none included) has a match, as far as the DFA can tell from a fresh
// start: callers use it for patterns without assertions, where a fresh start stands for
// any text before prefix. It explores the states the tail runes reach, at most limit of
// them; past that it answers false.
func (d *DFA) MatchesEvery(prefix string, tail []rune, limit int) bool {
	built := 0
	st, _, how := d.run(d.cache.Load().start, prefix, &built, 1<<30)
	switch how {
	case found:
		return true
	case dead, gaveUp:
		return false
	}
	seen := map[*state]bool{st: true}
	queue := []*state{st}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		if len(d.endOut(st)) == 0 {
			return false
		}
		for _, r := range tail {
			nx, _ := d.transition(st, r)
			if nx == nil || len(seen) > limit {
				return false
			}
			if nx.flags&flagOut != 0 || seen[nx] {
				continue // matched on the way: every longer text matches too
			}
			seen[nx] = true
			queue = append(queue, nx)
		}
	}
	return true
}

// Exploration is what Explore found of a DFA.
type Exploration struct {
	States int // states found (all of them when Complete)
	// Widest is, when Complete, the most rune instructions one state holds: the most
	// threads regexp keeps alive on any text.
	Widest int
	// Work is what building them cost, in instructions followed, tested and interned
	// (closures, rune tests, state keys), every transition of every state included: a
	// run on any text builds a subset of these transitions, so, once Own is set, no run
	// costs more than Work of construction on top of its table steps. Deterministic: it
	// depends on the pattern alone.
	Work int64
	// Bytes is the memory the states hold (estimated as the memory limit counts it).
	Bytes int64
	// Complete says these are all the DFA's states, and that every state keeps all its
	// transitions (at most maxOther distinct non-ASCII classes): no run ever builds a
	// state or a step that Explore did not.
	Complete bool
}

// Explore builds the whole DFA, breadth first from the start, on one character of each
// class (ASCII classes and non-ASCII ones, see classifyOther), and stops past limit
// states. A DFA of n states never builds more than n, so a run gives up only when n is
// past its budget (64 states and more; see budget). Call it on a DFA of its own (the
// states it builds stay in the cache). It is not held to the process's memory limit (the
// limit bounds it instead), so it answers the same in any process: validation is a
// property of the pattern.
func (d *DFA) Explore(limit int) Exploration {
	limit = min(limit, d.max-1)
	d.Own(d.max) // no memory limit, no give-up: limit bounds the work
	var chars []rune
	seenClass := make([]bool, d.nclass)
	for b := range rune(utf8.RuneSelf) {
		if c := d.class[b]; !seenClass[c] {
			seenClass[c] = true
			chars = append(chars, b)
		}
	}
	reps := slices.Clone(d.reps)
	slices.Sort(reps)
	reps = slices.Compact(reps)
	chars = append(chars, reps...)
	d.mu.Lock()
	work0, held0 := d.work, d.held.Load()
	d.mu.Unlock()
	start := d.cache.Load().start
	seen := map[*state]bool{start: true}
	queue := []*state{start}
	var x Exploration
	done := func(complete bool) Exploration {
		d.mu.Lock()
		x.Work, x.Bytes = d.work-work0, d.held.Load()-held0
		d.mu.Unlock()
		x.States, x.Complete = len(seen), complete && len(reps) <= maxOther
		return x
	}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		x.Widest = max(x.Widest, d.runeInsts(st))
		d.endOut(st)
		for _, r := range chars {
			nx, _ := d.transition(st, r)
			if nx == nil || nx.cache != start.cache {
				return done(false) // a reset (cannot happen below d.max)
			}
			if !seen[nx] {
				if len(seen) >= limit {
					return done(false)
				}
				seen[nx] = true
				queue = append(queue, nx)
			}
		}
	}
	return done(true)
}

// Own says that validation explored this DFA whole (Explore) and found states states:
// from now on a run never gives up before the DFA built that many, and its states are not
// held to the process's memory limit (validation bounded them). A DFA whose regexp would
// cost more than its bound is safe to run only so: giving up would hand the text to
// regexp. Safe to call at any time, from any goroutine.
func (d *DFA) Own(states int) {
	for {
		cur := d.own.Load()
		if int64(states) <= cur || d.own.CompareAndSwap(cur, int64(states)) {
			return
		}
	}
}

// runeInsts counts the rune instructions st's closure reaches: the threads regexp would
// step on the next character.
func (d *DFA) runeInsts(st *state) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	defer func(w int64) { d.work = w }(d.work) // validation's question, not a run's work
	n := 0
	for _, k := range []uint8{kindNewline, kindWord, kindOther} {
		d.closure(st, k)
		n = max(n, len(d.runes))
	}
	return n
}
