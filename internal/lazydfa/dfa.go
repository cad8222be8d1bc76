package lazydfa

import (
	"regexp/syntax"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// MaxStates is how many states a DFA keeps by default before it drops them all
// and builds again from the start state.
const MaxStates = 1024

// What the empty-width assertions need of the character before a position.
const (
	kindStart   uint8 = iota // no character: the start of the text
	kindNewline              // '\n'
	kindWord                 // [0-9A-Za-z_]: \b and \B are ASCII-only in Go
	kindOther
	kindEnd // no character after: the end of the text (never a state's kind)
)

// repRune is a rune of each kind, as syntax.EmptyOpContext reads it.
var repRune = [...]rune{kindStart: -1, kindNewline: '\n', kindWord: 'a', kindOther: ' ', kindEnd: -1}

func kindOf(r rune) uint8 {
	switch {
	case syntax.IsWordChar(r):
		return kindWord
	case r == '\n':
		return kindNewline
	}
	return kindOther
}

// DFA is a lazily built DFA of one or more compiled regular expressions.
type DFA struct {
	prog     *syntax.Prog // the programs laid end to end
	starts   []uint32     // each pattern's start instruction
	matchOf  []int32      // per instruction: the pattern whose InstMatch it is, else -1
	anchored bool         // every pattern matches only at the start of the text
	prefix   string       // one pattern: every match starts with this literal
	class    [utf8.RuneSelf]uint8
	nclass   int
	// Non-ASCII runes are classed too (see classifyOther): bounds are the starts of the
	// intervals in which every rune instruction matches alike, reps the representative
	// rune of each interval's class. A state's non-ASCII transitions are kept by
	// representative, so a text of many distinct runes (Chinese) finds them known.
	bounds, reps []rune
	max          int // states kept before the cache is dropped

	cache atomic.Pointer[cache]
	held  *atomic.Int64 // bytes this DFA's states hold (shared with its cleanup)
	// esc says which bytes can leave the idle states (see escape); skip, whether idle
	// runs are skipped at all: only when few printable bytes escape or a prefix is known
	// (otherwise the skip stops every few bytes and costs more than it saves).
	esc  [kindOther + 1][256]bool
	skip bool
	// own, when not 0, is the size validation explored the whole DFA at (Own): runs never
	// give up before they built that many states, and the states are not held to the
	// shared memory limit.
	own atomic.Int64

	mu sync.Mutex // guards the cache's map, the making of transitions, and the scratch below
	// scratch of step, under mu
	seen  []uint32 // generation stamp per instruction
	gen   uint32
	stack []uint32
	pcs   []uint32
	runes []uint32 // rune instructions reached by closure
	out   []int32
	key   []byte
	// sim, when set, prunes new states (Simulate); simTmp is prune's scratch.
	sim    *sim
	simTmp []uint32
	work   int64 // instructions followed, tested and interned so far (see Exploration.Work)
}
