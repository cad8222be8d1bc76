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

// Explore builds the whole DFA, breadth first from the start, on one character of each
// class (ASCII classes and non-ASCII ones, see classifyOther), and stops past limit
// states. It returns how many states it found and whether that is all of them
// (complete); when complete, widest is the most rune instructions one state holds: the
// most threads regexp keeps alive on any text. A DFA of n states never builds more than
// n, so a run gives up only when n is past its budget (64 states and more; see budget).
// Call it on a DFA of its own (the states it builds stay in the cache).
func (d *DFA) Explore(limit int) (states, widest int, complete bool) {
	limit = min(limit, d.max-1)
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
	chars = append(chars, slices.Compact(reps)...)
	start := d.cache.Load().start
	seen := map[*state]bool{start: true}
	queue := []*state{start}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		widest = max(widest, d.runeInsts(st))
		for _, r := range chars {
			nx, _ := d.transition(st, r)
			if nx == nil || nx.cache != start.cache {
				return len(seen), widest, false // the memory limit, or a reset
			}
			if !seen[nx] {
				if len(seen) >= limit {
					return len(seen), widest, false
				}
				seen[nx] = true
				queue = append(queue, nx)
			}
		}
	}
	return len(seen), widest, true
}

// runeInsts counts the rune instructions st's closure reaches: the threads regexp would
// step on the next character.
func (d *DFA) runeInsts(st *state) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, k := range []uint8{kindNewline, kindWord, kindOther} {
		d.closure(st, k)
		n = max(n, len(d.runes))
	}
	return n
}
