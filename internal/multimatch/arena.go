package multimatch

// litArena hands out what one Analyze makes and drops (infos, cross products, the
// lists of alternations, shrunk and minimized sets, lists of groups) from chunks its
// memo keeps from pattern to pattern: at 10,000 patterns these were half of a cold
// load's allocation in Analyze, all garbage once the pattern's groups are chosen. What
// outlives Analyze is copied out (clipGroups); class and ASCII rune descriptions, which
// are kept across patterns, are made on the heap (a nil *litArena allocates there).
type litArena struct {
	lits   slab[lit]
	infos  slab[info]
	groups slab[[]lit]
}

const (
	litChunk   = 2048 // lits per chunk (64 KB)
	infoChunk  = 256  // infos per chunk (28 KB)
	groupChunk = 1024 // group lists per chunk (24 KB)
	// maxPooledSlabChunks bounds the chunks of each kind that a pooled arena keeps.
	maxPooledSlabChunks = 8
)

// alloc returns an empty list with room for k literals.
func (ar *litArena) alloc(k int) []lit {
	if ar == nil {
		return make([]lit, 0, k)
	}
	return ar.lits.alloc(k, litChunk)
}

// allocGroups returns an empty list with room for k groups.
func (ar *litArena) allocGroups(k int) [][]lit {
	if ar == nil {
		return make([][]lit, 0, k)
	}
	return ar.groups.alloc(k, groupChunk)
}

// info returns a zeroed info.
func (ar *litArena) info() *info {
	if ar == nil {
		return new(info)
	}
	return &ar.infos.alloc(1, infoChunk)[:1][0]
}

// exactInfo is exactInfo in ar.
func (ar *litArena) exactInfo(set []lit) *info {
	x := ar.info()
	x.exact, x.ex, x.pre, x.suf = true, set, set, set
	return x
}

// reset makes the arena's memory free again, cleared (what it pointed to is let go);
// false when it holds too much to be kept.
func (ar *litArena) reset() bool {
	a, b, c := ar.lits.reset(), ar.infos.reset(), ar.groups.reset()
	return a && b && c
}

// slab is chunks of T handed out in order.
type slab[T any] struct {
	chunks [][]T
	ci, n  int // the chunk being filled, and its elements used
}

// alloc returns an empty slice with room for k, from a chunk of size unless k is
// more than a quarter of that.
func (s *slab[T]) alloc(k, size int) []T {
	if k > size/4 {
		return make([]T, 0, k)
	}
	if s.ci < len(s.chunks) && s.n+k > size {
		s.ci, s.n = s.ci+1, 0
	}
	if s.ci == len(s.chunks) {
		s.chunks = append(s.chunks, make([]T, size))
	}
	l := s.chunks[s.ci][s.n : s.n : s.n+k]
	s.n += k
	return l
}

func (s *slab[T]) reset() bool {
	for i := 0; i < len(s.chunks) && i <= s.ci; i++ {
		c := s.chunks[i]
		if i == s.ci {
			c = c[:s.n]
		}
		clear(c)
	}
	s.ci, s.n = 0, 0
	return len(s.chunks) <= maxPooledSlabChunks
}
