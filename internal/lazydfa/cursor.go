package lazydfa

import (
	"slices"
	"unicode/utf8"
	"unsafe"
)

// Cursor is a position in a stream fed to a DFA piece by piece (Feed, End). Its zero
// value is not usable: get one from Start.
type Cursor struct {
	st      *state
	partial [utf8.UTFMax]byte // the start of a rune cut off at the end of the last piece
	np      int
	built   int // new states this stream made (see budget)
	read    int
}

// Start returns a cursor at the start of a stream.
func (d *DFA) Start() Cursor {
	return Cursor{st: d.cache.Load().start}
}

// Read returns how many bytes the cursor has consumed (a rune cut at a piece's end is
// consumed when it is whole).
func (c *Cursor) Read() int { return c.read }

// Feed runs the stream on over p. It stops just after the first character at which some
// patterns matched, and returns them (ascending, owned by the DFA: do not change them)
// with the part of p not read yet; feed that again to go on. A match seen there is a
// match in every text that starts with what was fed: the assertions at its end have
// seen the character after it. out is nil when p was read to its end without a match.
// ok is false when the DFA gave up (see Match): the cursor is then unusable.
func (d *DFA) Feed(c *Cursor, p []byte) (out []int32, rest []byte, ok bool) {
	if c.st.flags&flagDead != 0 {
		c.read += len(p)
		return nil, nil, true
	}
	for c.np > 0 && len(p) > 0 {
		// Complete the rune cut off at the end of the last piece.
		var buf [2 * utf8.UTFMax]byte
		n := copy(buf[:], c.partial[:c.np])
		n += copy(buf[n:], p)
		if !utf8.FullRune(buf[:n]) {
			copy(c.partial[c.np:], p) // fits: the rune is still incomplete
			c.np += len(p)
			return nil, nil, true
		}
		r, size := utf8.DecodeRune(buf[:n])
		if size >= c.np {
			p = p[size-c.np:]
			c.np = 0
		} else { // an invalid first byte: it alone is consumed
			copy(c.partial[:], c.partial[size:c.np])
			c.np -= size
		}
		c.read += size
		nx, made := d.transition(c.st, r)
		if made && c.overBudget(d, nx) {
			return nil, nil, false
		}
		c.st = nx
		if nx.flags&flagOut != 0 {
			return nx.out, p, true
		}
	}
	if c.np > 0 {
		return nil, nil, true // p is used up, the rune is still incomplete
	}
	// Keep back a rune cut off at the end.
	whole := len(p)
	for k := len(p) - 1; k >= 0 && k >= len(p)-utf8.UTFMax; k-- {
		if utf8.RuneStart(p[k]) {
			if !utf8.FullRune(p[k:]) {
				whole = k
			}
			break
		}
	}
	st, i, how := d.run(c.st, unsafe.String(unsafe.SliceData(p), whole), &c.built, d.budget(c.read+whole))
	c.st, c.read = st, c.read+i
	switch how {
	case found:
		return st.out, p[i:], true
	case gaveUp:
		return nil, nil, false
	case dead: // nothing can match any more: the rest is read as is
		c.read += len(p) - i
		return nil, nil, true
	}
	c.np = copy(c.partial[:], p[whole:])
	return nil, nil, true
}

// End ends the stream and returns the patterns seen matching at its end: together with
// every out Feed returned, they are the patterns that match the whole stream.
func (d *DFA) End(c *Cursor) (out []int32, ok bool) {
	// A rune still cut off never completed: regexp reads each of its bytes as U+FFFD.
	for c.np > 0 {
		c.np--
		c.read++
		nx, made := d.transition(c.st, utf8.RuneError)
		if made && c.overBudget(d, nx) {
			return nil, false
		}
		c.st = nx
		if nx.out != nil {
			out = append(out, nx.out...)
		}
	}
	end := d.endOut(c.st)
	if out == nil {
		return end, true
	}
	out = append(out, end...)
	slices.Sort(out)
	return slices.Compact(out), true
}

// overBudget counts a new state and reports whether the stream has made too many for
// what it read (see budget).
func (c *Cursor) overBudget(d *DFA, nx *state) bool {
	c.built++
	return c.built > d.budget(c.read) || nx == nil
}

// Pending reports whether a match could still end later in the stream: some thread is
// alive after what was fed (or a rune is cut off at the end). A cursor that is not pending
// has seen every match it will ever see.
func (c *Cursor) Pending() bool { return c.np > 0 || len(c.st.pcs) > 0 }

// Dead reports whether no match can start or go on any more: the patterns are anchored at
// the start of the text and no thread is alive.
func (c *Cursor) Dead() bool { return c.st.flags&flagDead != 0 }
