package lazydfa

import (
	"regexp/syntax"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// Compile compiles one pattern as regexp.Compile does (Perl syntax, simplified).
func Compile(pattern string) (*DFA, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, err
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, err
	}
	return New(prog), nil
}

// New makes the DFA of the programs; pattern i of its outputs is progs[i]. The
// programs must not be changed afterwards.
func New(progs ...*syntax.Prog) *DFA {
	d := &DFA{prog: &syntax.Prog{}, anchored: len(progs) > 0, max: MaxStates}
	offs := make([]uint32, len(progs))
	for i, p := range progs {
		off := uint32(len(d.prog.Inst))
		offs[i] = off
		for _, in := range p.Inst {
			in.Out += off
			if in.Op == syntax.InstAlt || in.Op == syntax.InstAltMatch {
				in.Arg += off
			}
			in.Rune = slices.Clip(in.Rune)
			d.prog.Inst = append(d.prog.Inst, in)
		}
		d.starts = append(d.starts, off+uint32(p.Start))
		d.anchored = d.anchored && p.StartCond()&syntax.EmptyBeginText != 0
	}
	d.matchOf = make([]int32, len(d.prog.Inst))
	for pc := range d.matchOf {
		d.matchOf[pc] = -1
	}
	for i, p := range progs {
		for pc, in := range p.Inst {
			if in.Op == syntax.InstMatch {
				d.matchOf[offs[i]+uint32(pc)] = int32(i)
			}
		}
	}
	if len(progs) == 1 {
		d.prefix, _ = progs[0].Prefix()
	}
	d.classify()
	d.classifyOther()
	d.held = new(atomic.Int64)
	runtime.AddCleanup(d, func(held *atomic.Int64) { memHeld.Add(-held.Load()) }, d.held)
	d.seen = make([]uint32, len(d.prog.Inst))
	d.escape()
	d.mu.Lock()
	d.reset()
	d.mu.Unlock()
	return d
}

// SetMaxStates sets how many states the DFA keeps before dropping them (at least 16).
// Call it before the DFA is used.
func (d *DFA) SetMaxStates(n int) { d.max = max(n, 16) }

// classify puts ASCII bytes into classes: two bytes share one when every rune
// instruction matches both or neither and they are of one kind.
func (d *DFA) classify() {
	var runeInsts []*syntax.Inst
	for i := range d.prog.Inst {
		switch in := &d.prog.Inst[i]; in.Op {
		case syntax.InstRune, syntax.InstRune1:
			runeInsts = append(runeInsts, in)
		}
	}
	ids := map[string]uint8{}
	sig := make([]byte, 1+(len(runeInsts)+7)/8)
	for b := range utf8.RuneSelf {
		clear(sig)
		sig[0] = kindOf(rune(b))
		for k, in := range runeInsts {
			if MatchRune(in, rune(b)) {
				sig[1+k/8] |= 1 << (k % 8)
			}
		}
		id, ok := ids[string(sig)]
		if !ok {
			id = uint8(len(ids))
			ids[string(sig)] = id
		}
		d.class[b] = id
	}
	d.nclass = len(ids)
}

// classifyOther splits the non-ASCII runes into intervals on whose runes every rune
// instruction answers alike, and gives each interval the representative of its class
// (the first rune of the first interval with the same answers). Every non-ASCII rune
// is of one kind (syntax.IsWordChar is ASCII), so a rune and its representative step
// every state alike.
func (d *DFA) classifyOther() {
	points := []rune{utf8.RuneSelf}
	add := func(lo, hi rune) { // [lo, hi]
		if hi >= utf8.RuneSelf {
			points = append(points, max(lo, utf8.RuneSelf), hi+1)
		}
	}
	var runeInsts []*syntax.Inst
	for i := range d.prog.Inst {
		in := &d.prog.Inst[i]
		switch in.Op {
		case syntax.InstRune1:
			add(in.Rune[0], in.Rune[0])
		case syntax.InstRune:
			if len(in.Rune) == 1 {
				r0 := in.Rune[0]
				add(r0, r0)
				if syntax.Flags(in.Arg)&syntax.FoldCase != 0 {
					for f := unicode.SimpleFold(r0); f != r0; f = unicode.SimpleFold(f) {
						add(f, f)
					}
				}
			} else {
				for k := 0; k+1 < len(in.Rune); k += 2 {
					add(in.Rune[k], in.Rune[k+1])
				}
			}
		default:
			continue
		}
		runeInsts = append(runeInsts, in)
	}
	slices.Sort(points)
	points = slices.Compact(points)
	if points[len(points)-1] > unicode.MaxRune {
		points = points[:len(points)-1]
	}
	d.bounds, d.reps = points, slices.Clone(points)
	if len(points)*len(runeInsts) > maxClassWork {
		return // each interval its own class: still far fewer than the runes
	}
	first := map[string]rune{}
	sig := make([]byte, (len(runeInsts)+7)/8)
	for i, p := range points {
		clear(sig)
		for k, in := range runeInsts {
			if MatchRune(in, p) {
				sig[k/8] |= 1 << (k % 8)
			}
		}
		if r, ok := first[string(sig)]; ok {
			d.reps[i] = r
		} else {
			first[string(sig)] = p
		}
	}
}

// maxClassWork bounds the instruction tests classifyOther makes to merge intervals.
const maxClassWork = 1 << 20

// rep returns the representative of the non-ASCII rune r (see classifyOther).
func (d *DFA) rep(r rune) rune {
	i, found := slices.BinarySearch(d.bounds, r)
	if !found {
		i--
	}
	if i < 0 {
		return r
	}
	return d.reps[i]
}

// MatchRune reports whether the rune instruction in consumes r (false for any other
// instruction).
func MatchRune(in *syntax.Inst, r rune) bool {
	switch in.Op {
	case syntax.InstRune:
		return in.MatchRune(r)
	case syntax.InstRune1:
		return r == in.Rune[0]
	case syntax.InstRuneAny:
		return true
	case syntax.InstRuneAnyNotNL:
		return r != '\n'
	}
	return false
}

// maxEscapeRate is how often, per byte of English prose, an idle run may be
// expected to stop for idle runs to be worth skipping (past it the skip loop stops every
// few bytes and costs more than the table steps it saves).
const maxEscapeRate = 0.2

// byteRate is a rough frequency of each ASCII byte in English prose and markdown:
// letters by their English frequency, a space every sixth byte, the rest rare.
func byteRate(b byte) float64 {
	const letters = "etaoinshrdlcumwfgypbvkjxqz"
	switch {
	case b == ' ':
		return 0.16
	case b >= 'a' && b <= 'z':
		return 0.13 * 0.8 / float64(1+strings.IndexByte(letters, b)) * 2
	case b >= 'A' && b <= 'Z':
		return 0.03 / 26
	case b == '\n' || b == '.' || b == ',':
		return 0.01
	}
	return 0.002
}

// escape fills d.esc: for each kind of the previous character and each byte, whether
// the byte can leave the idle state of that kind (a `\bcan` rule leaves idle on a c
// after a space, not after a letter). The bytes an idle run skips over are those that
// cannot; each takes idle to idle of its own kind. Bytes from 0x80 up always escape:
// non-ASCII runes take the slow path. It sets d.skip.
func (d *DFA) escape() {
	for _, k := range []uint8{kindNewline, kindWord, kindOther} {
		idle := &state{kind: k}
		for b := utf8.RuneSelf; b < 256; b++ {
			d.esc[k][b] = true
		}
		for _, bk := range []uint8{kindNewline, kindWord, kindOther} {
			d.closure(idle, bk) // the same for every byte of kind bk
			for b := range rune(utf8.RuneSelf) {
				if kindOf(b) != bk {
					continue
				}
				esc := len(d.out) > 0
				for _, pc := range d.runes {
					if esc {
						break
					}
					esc = MatchRune(&d.prog.Inst[pc], b)
				}
				d.esc[k][b] = esc
			}
		}
	}
	// Most bytes of prose follow a letter; the rest, mostly a space.
	rate := 0.0
	for b := range byte(utf8.RuneSelf) {
		if d.esc[kindWord][b] {
			rate += 0.8 * byteRate(b)
		}
		if d.esc[kindOther][b] {
			rate += 0.2 * byteRate(b)
		}
	}
	d.skip = d.prefix != "" || rate <= maxEscapeRate
}
