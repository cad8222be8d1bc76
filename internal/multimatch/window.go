package multimatch

import (
	"slices"
	"unicode/utf8"
)

// Verification of a candidate.
//
// A pattern whose matches all lie within known distances of an occurrence of
// its anchor literals need not be run over the whole text: every match
// containing the occurrence [s, e) lies within [e-before, s+after], so the
// regexp runs over these windows only (merged where they overlap). Running a
// regexp over text[lo:hi] instead of text differs only in the empty-width
// assertions at lo and hi, so each window is widened until they read the
// same there as in the whole text (see widenLo): to a rune boundary, past word
// characters for \b and \B, to a line start or end for (?m)^ and (?m)$, and
// to the text's start or end for \A and \z. A match found in the window is
// then a match in the text, and every match lies in some window.

// windowCost is what one extra run costs, in bytes of scanning (a lazy DFA run's
// set-up and its end, about 30 bytes' worth); when the windows together cost more
// than the whole text, the whole text is run.
const windowCost = 32

func (s *Set) verify(i int32, text string, sc *scratch) bool {
	a := s.pats[i]
	ids := s.anchor[i]
	sc.runs++
	if ids == nil || sc.spill {
		sc.whole++
		return sc.matches(a, text)
	}
	hs := sc.tmp[:0]
	for _, id := range ids {
		if sc.headGen[id] != sc.gen {
			continue
		}
		if sc.count[id] >= sc.limit {
			// Too many occurrences to window around (report stopped recording them).
			sc.whole++
			return sc.matches(a, text)
		}
		for h := sc.head[id]; h >= 0; h = sc.hits[h].next {
			hs = append(hs, sc.hits[h])
		}
	}
	sc.tmp = hs
	if len(hs) == 0 {
		// The candidate test saw the anchor's group but no occurrence was
		// kept: cannot happen, but the whole text is always right.
		sc.whole++
		return sc.matches(a, text)
	}
	n := len(text)
	if a.hasFrom() {
		return s.verifyFrom(a, text, hs, sc)
	}
	if a.before < 0 || a.after < 0 {
		// One side bounded: the matches lie after the first occurrence
		// (minus before) or before the last one (plus after).
		lo, hi := 0, n
		if a.before >= 0 {
			first := hs[0].end
			for _, h := range hs {
				first = min(first, h.end)
			}
			lo = max(0, int(first)-a.before)
		} else {
			last := hs[0].start
			for _, h := range hs {
				last = max(last, h.start)
			}
			hi = min(n, int(last)+a.after)
		}
		lo, hi = widenLo(text, lo, 0, a.ctx, sc), widenHi(text, hi, a.ctx, sc)
		if lo == 0 && hi == n {
			sc.whole++
		}
		return sc.matches(a, text[lo:hi])
	}
	if len(hs)*windowCost >= n {
		// Dense occurrences: their windows cost more than the text (before sorting them).
		sc.whole++
		return sc.matches(a, text)
	}
	if len(hs) > 1 {
		slices.SortFunc(hs, byEnd)
	}
	// Widen and merge the windows in one pass, in order (byEnd: their starts come in
	// order), reading each byte of the text at most once: widening a window's start stops
	// at the end of the window before (which is widened already, so reaching it means the
	// two merge), and widening an end starts past the window before. Widening windows one
	// by one would read a long run of word characters (\b) or a long line ((?m)^) once
	// per window inside it: quadratic. Windows give way to one run over the whole text as
	// soon as they cost more than it.
	cost, m := 0, 0
	for _, h := range hs {
		lo, hi := max(0, int(h.end)-a.before), min(n, int(h.start)+a.after)
		if m > 0 {
			prev := &hs[m-1]
			if lo = widenLo(text, lo, int(prev.end), a.ctx, sc); lo <= int(prev.end) {
				if hi > int(prev.end) {
					prev.end = int32(widenHi(text, hi, a.ctx, sc))
				}
				continue
			}
			cost += int(prev.end-prev.start) + windowCost
		} else {
			lo = widenLo(text, lo, 0, a.ctx, sc)
		}
		if cost >= n {
			break
		}
		hs[m] = hit{start: int32(lo), end: int32(widenHi(text, hi, a.ctx, sc))}
		m++
	}
	if m > 0 {
		cost += int(hs[m-1].end-hs[m-1].start) + windowCost
	}
	if cost >= n {
		sc.whole++
		return sc.matches(a, text)
	}
	for _, w := range hs[:m] {
		if sc.matches(a, text[w.start:w.end]) {
			return true
		}
	}
	return false
}

// matches runs pattern a over text, counting what it reads.
func (sc *scratch) matches(a *Analysis, text string) bool {
	sc.read += len(text)
	return a.matches(text)
}

// verifyFrom runs the anchored forms of a pattern bounded before its anchor
// from a little before each occurrence: a match containing the occurrence
// [s, e) starts within [e-before, s], which the anchored form's leading
// (?s:.){0,before+3} covers, and the run goes on only while some thread lives.
func (s *Set) verifyFrom(a *Analysis, text string, hs []hit, sc *scratch) bool {
	n := len(text)
	if len(hs)*(a.before+windowCost) >= n {
		// Dense occurrences: one run over the text costs less.
		sc.whole++
		return sc.matches(a, text)
	}
	if len(hs) > 1 {
		slices.SortFunc(hs, byEnd)
	}
	last, read := -1, 0
	for _, h := range hs {
		lo := max(0, int(h.end)-a.before)
		for lo > 0 && !utf8.RuneStart(text[lo]) {
			lo--
		}
		if last >= 0 && lo <= last+anchoredSlack {
			continue // the previous run covered the starts this one would try
		}
		last = lo
		from, context := 0, false
		if lo > 0 {
			// One character of context, read by the form's leading (?s:.).
			_, size := utf8.DecodeLastRuneInString(text[:lo])
			from, context = lo-size, true
		}
		m, r := a.matchesFrom(text[from:], context, &sc.rd)
		sc.read += r
		if m {
			return true
		}
		// A run ends when no thread is left, but a loop such as [\s\S]* keeps one
		// alive to the end of the text. Count what the runs read; past a quarter of
		// the text, one run over the whole text is cheaper than going on.
		if read += r; read > n/4 {
			sc.whole++
			return sc.matches(a, text)
		}
	}
	return false
}

// widenLo and widenHi move a window's lo left and its hi right until the assertions a
// pattern uses read the same at its edges as in the whole text. widenLo stops at floor
// (the end of the window before, or 0), which it reaches when the window merges with
// that one. What they read is counted.
func widenLo(text string, lo, floor int, ctx ctxFlags, sc *scratch) int {
	from := lo
	for lo > floor && !utf8.RuneStart(text[lo]) {
		lo--
	}
	if ctx&ctxBeginText != 0 {
		return 0
	}
	if ctx&ctxWord != 0 {
		for lo > floor && isWordByte(text[lo-1]) {
			lo--
		}
	}
	if ctx&ctxBeginLine != 0 {
		for lo > floor && text[lo-1] != '\n' {
			lo--
		}
	}
	sc.read += from - lo
	return lo
}

func widenHi(text string, hi int, ctx ctxFlags, sc *scratch) int {
	from := hi
	for hi < len(text) && !utf8.RuneStart(text[hi]) {
		hi++
	}
	if ctx&ctxEndText != 0 {
		return len(text)
	}
	if ctx&ctxWord != 0 {
		for hi < len(text) && isWordByte(text[hi]) {
			hi++
		}
	}
	if ctx&ctxEndLine != 0 {
		for hi < len(text) && text[hi] != '\n' {
			hi++
		}
	}
	sc.read += hi - from
	return hi
}

func isWordByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
}

// byEnd orders occurrences by where they end: the windows (and anchored runs) start a
// fixed distance before an occurrence's end, so they then start in order too, which the
// merging relies on. (By start, an occurrence inside a longer one would come after it
// with a window starting earlier; minimal literal sets make that unlikely, not
// impossible across case variants.)
func byEnd(x, y hit) int { return int(x.end - y.end) }
