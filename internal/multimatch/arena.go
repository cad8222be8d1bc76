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
	infos  [][]info
	ii, in int // the chunk of infos being filled, and its infos used
}

const (
	infoChunk        = 256  // infos per chunk (28 KB)
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

// info returns a zeroed info; infos, too, are dropped with the memo, but for
// the ones kept across patterns (classes, ASCII runes), made on the heap.
func (ar *litArena) info() *info {
	if ar == nil {
		return new(info)
	}
	if ar.ii < len(ar.infos) && ar.in == infoChunk {
		ar.ii, ar.in = ar.ii+1, 0
	}
	if ar.ii == len(ar.infos) {
		ar.infos = append(ar.infos, make([]info, infoChunk))
	}
	x := &ar.infos[ar.ii][ar.in]
	ar.in++
	return x
}

// exactInfo is exactInfo in ar.
func (ar *litArena) exactInfo(set []lit) *info {
	x := ar.info()
	x.exact, x.ex, x.pre, x.suf = true, set, set, set
	return x
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
	for i := 0; i < len(ar.infos) && i <= ar.ii; i++ {
		c := ar.infos[i]
		if i == ar.ii {
			c = c[:ar.in]
		}
		clear(c)
	}
	ar.ci, ar.n, ar.ii, ar.in = 0, 0, 0, 0
	return len(ar.chunks) <= maxPooledLitMem && len(ar.infos) <= maxPooledLitMem
}
