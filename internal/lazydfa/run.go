package lazydfa

import (
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"
)

// budget is how many new states a run over n bytes may make before it gives up. A state
// costs about ten nanoseconds per instruction it follows, and regexp about forty per
// byte at least: past 4n/insts states (after 64 to warm up) the DFA has spent what
// regexp would, and regexp takes over. A match therefore never costs much more than
// regexp's own. A DFA that validation explored whole (Own) never gives up before it
// holds all its states: it has no more to build, and regexp may cost far more than the
// states (the bound that let the pattern in charged their construction).
func (d *DFA) budget(n int) int {
	return max(64+4*n/max(len(d.prog.Inst), 64), int(d.own.Load()))
}

// kindOfBytes is kindOf for ASCII bytes; a byte from 0x80 up is never a word byte nor a
// newline, whatever rune it belongs to.
var kindOfBytes = func() (t [256]uint8) {
	for b := range 256 {
		t[b] = kindOf(rune(b))
		if b >= utf8.RuneSelf {
			t[b] = kindOther
		}
	}
	return t
}()

// run steps the DFA from st over text until a state with matches (status found), a
// dead state (status dead), the end of the text (status more) or the budget (status
// gaveUp): built counts the new states made, and limit is what it may reach. It
// returns the state reached and the bytes read. A rune cut off at the end of text is
// read as regexp would read it at the end of a text (U+FFFD per byte): callers that
// stream keep it back.
func (d *DFA) run(st *state, text string, built *int, limit int) (*state, int, status) {
	idle := &d.cache.Load().idle
	class := &d.class
	esc := &d.esc
	i := 0
	for i < len(text) {
		if st.flags&flagIdle != 0 {
			// Nothing pending: skip to where a match can start.
			j := i
			if d.prefix != "" {
				if k := strings.Index(text[i:], d.prefix); k >= 0 {
					j += k
				} else {
					// The text may end inside an occurrence that the next piece of a
					// stream completes: step over its last bytes, from a rune start.
					j = max(i, len(text)-len(d.prefix)+1)
					for j > i && j < len(text) && !utf8.RuneStart(text[j]) {
						j--
					}
				}
				if j > i {
					st, i = idle[kindOfBytes[text[j-1]]], j
				}
			} else {
				k := st.kind // of the character before text[j]
				for j < len(text) && !esc[k][text[j]] {
					k = kindOfBytes[text[j]]
					j++
				}
				if j > i {
					st, i = idle[k], j
				}
			}
			if i == len(text) {
				break
			}
		}
		// The hot loop: known transitions on ASCII bytes, one table load per byte, and
		// through idle states the skip over bytes that cannot leave them.
		c := st.cache
		tbl, row := *c.table.Load(), int(st.id)*d.nclass
		j := i
		for j < len(text) {
			b := text[j]
			if b >= utf8.RuneSelf {
				break
			}
			e := tbl[row+int(class[b])].Load()
			if e == 0 {
				break
			}
			row = int(e>>3) - 1
			j++
			if e&entryIdle != 0 {
				k := uint8(e & entryKind) // of the character before text[j]
				for j < len(text) && !esc[k][text[j]] {
					k = kindOfBytes[text[j]]
					j++
				}
				row = c.idleRow[k]
			}
		}
		if j > i {
			st, i = (*c.byID.Load())[row/d.nclass], j
		}
		if i == len(text) {
			break
		}
		var nx *state
		if b := text[i]; b < utf8.RuneSelf {
			nx = st.next[d.class[b]].Load()
			i++
			if nx == nil {
				var made bool
				if nx, made = d.transition(st, rune(b)); made {
					if *built++; *built > limit || nx == nil {
						return st, i, gaveUp
					}
				}
			}
		} else {
			r, size := utf8.DecodeRuneInString(text[i:])
			i += size
			r = d.rep(r)
			if nx = st.onRune(r); nx == nil {
				var made bool
				if nx, made = d.transition(st, r); made {
					if *built++; *built > limit || nx == nil {
						return st, i, gaveUp
					}
				}
			}
		}
		st = nx
		if st.flags&(flagOut|flagDead) != 0 {
			if st.flags&flagOut != 0 {
				return st, i, found
			}
			return st, i, dead
		}
	}
	return st, i, more
}

type status uint8

const (
	more status = iota
	found
	dead
	gaveUp
)

// Match reports whether any of the DFA's patterns matches text, as
// regexp.MatchString would. ok is false when the DFA gave up (it would have made too
// many new states for the length of the text): then matched means nothing and the
// caller must ask regexp.
func (d *DFA) Match(text string) (matched, ok bool) {
	matched, _, ok = d.MatchRead(text)
	return matched, ok
}

// MatchRead is Match, also saying how many bytes it read: it stops at the first match,
// and, for patterns anchored at the start, as soon as no match is possible any more.
func (d *DFA) MatchRead(text string) (matched bool, read int, ok bool) {
	built := 0
	st, i, how := d.run(d.cache.Load().start, text, &built, d.budget(len(text)))
	switch how {
	case found:
		return true, i, true
	case dead:
		return false, i, true
	case gaveUp:
		return false, i, false
	}
	return len(d.endOut(st)) > 0, i, true
}

// Which appends to dst the patterns (their indices in New's programs) that match
// text, ascending and each once, as regexp.MatchString would report each of them, and
// returns dst with complete true. It reads the whole text unless no pattern can match
// any more, or all have matched.
//
// It may stop before, with complete false: then each pattern in dst matches, and of
// the others it says nothing. It stops once every pattern in want has matched (bit k
// for pattern k; patterns from 64 up cannot be waited for), and at its maxStops-th
// match: a pattern that matches again and again costs a slower step at each match.
//
// ok is false when the DFA gave up (see Match): then dst means nothing and the caller
// must ask regexp. The pass may stand for several runs of the patterns alone (a caller
// that would otherwise run runs of them over text): its budget of new states is then
// that of a run over runs times the text, which allows as much work as those runs.
func (d *DFA) Which(text string, dst []int32, want uint64, maxStops, runs int) (_ []int32, complete, ok bool) {
	n, all := len(dst), len(d.starts)
	built, limit := 0, d.budget(len(text)*max(runs, 1))
	st, i := d.cache.Load().start, 0
	var seen uint64
	for stops := 1; ; stops++ {
		nx, read, how := d.run(st, text[i:], &built, limit)
		st, i = nx, i+read
		switch how {
		case found:
			if all <= 64 {
				// Each pattern once, by the mask: no sorting until the end.
				for _, k := range st.out {
					if seen&(1<<k) == 0 {
						seen |= 1 << k
						dst = append(dst, k)
					}
				}
				if bits.OnesCount64(seen) == all {
					return sortedOnce(dst, n), true, true
				}
			} else {
				dst = sortedOnce(append(dst, st.out...), n)
				if len(dst)-n == all {
					return dst, true, true
				}
				for _, k := range st.out {
					if k < 64 {
						seen |= 1 << k
					}
				}
			}
			if want != 0 && seen&want == want || stops >= maxStops {
				return sortedOnce(dst, n), false, true
			}
			if i < len(text) {
				continue
			}
			// The text ends just after the match: what matches at its end is seen below.
		case dead:
			return dst, true, true
		case gaveUp:
			return dst[:n], false, false
		}
		return sortedOnce(append(dst, d.endOut(st)...), n), true, true
	}
}

// sortedOnce sorts dst[n:] and drops repeats.
func sortedOnce(dst []int32, n int) []int32 {
	if len(dst)-n > 1 {
		slices.Sort(dst[n:])
		dst = append(dst[:n], slices.Compact(dst[n:])...)
	}
	return dst
}
