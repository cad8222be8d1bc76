package multimatch

// litArena hands out the literal lists one Analyze makes and drops (cross products,
// the lists of alternations, shrunk and minimized sets) from chunks its memo keeps from
// pattern to pattern: at 10,000 patterns they were a third of a cold load's allocation
// in Analyze, all garbage once the pattern's groups are chosen. What outlives Analyze
// is copied out (clipGroups); class descriptions, which are kept across patterns, are
// made on the heap (a nil *litArena allocates there).
type litArena struct {
	chunks [][]lit
	ci, n  int // the chunk being filled, and its lists used
}

const (
	litChunk         = 2048 // lits per chunk (64 KB)
	maxPooledLitMem  = 8    // chunks a pooled arena keeps
	maxArenaListSize = litChunk / 4
)

// alloc returns an empty list with room for k literals.
func (ar *litArena) alloc(k int) []lit {
	if ar == nil || k > maxArenaListSize {
		return make([]lit, 0, k)
	}
	if ar.ci < len(ar.chunks) && ar.n+k > litChunk {
		ar.ci, ar.n = ar.ci+1, 0
	}
	if ar.ci == len(ar.chunks) {
		ar.chunks = append(ar.chunks, make([]lit, litChunk))
	}
	l := ar.chunks[ar.ci][ar.n : ar.n : ar.n+k]
	ar.n += k
	return l
}

// reset makes the arena's memory free again, cleared (the literals' strings are let
// go); false when it holds too much to be kept.
func (ar *litArena) reset() bool {
	for i := 0; i < len(ar.chunks) && i <= ar.ci; i++ {
		c := ar.chunks[i]
		if i == ar.ci {
			c = c[:ar.n]
		}
		clear(c)
	}
	ar.ci, ar.n = 0, 0
	return len(ar.chunks) <= maxPooledLitMem
}
