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
// same there as in the whole text (see widen): to a rune boundary, past word
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
		return a.matches(text)
	}
	hs := sc.tmp[:0]
	for _, id := range ids {
		if sc.headGen[id] != sc.gen {
			continue
		}
		if sc.count[id] >= sc.limit {
			// Too many occurrences to window around (report stopped recording them).
			sc.whole++
			return a.matches(text)
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
		return a.matches(text)
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
		lo, hi = widen(text, lo, hi, a.ctx)
		if lo == 0 && hi == n {
			sc.whole++
		}
		return a.matches(text[lo:hi])
	}
	if len(hs)*windowCost >= n {
		// Dense occurrences: their windows cost more than the text (before sorting them).
		sc.whole++
		return a.matches(text)
	}
	if len(hs) > 1 {
		slices.SortFunc(hs, byEnd)
	}
	// Merge the windows; give up on windows when they cost more than the text.
	cost, m := 0, 0
	for _, h := range hs {
		lo, hi := max(0, int(h.end)-a.before), min(n, int(h.start)+a.after)
		if m > 0 && lo <= int(hs[m-1].end) {
			hs[m-1].end = int32(max(int(hs[m-1].end), hi))
			continue
		}
		hs[m] = hit{start: int32(lo), end: int32(hi)}
		m++
	}
	for _, w := range hs[:m] {
		cost += int(w.end-w.start) + windowCost
	}
	if cost >= n {
		sc.whole++
		return a.matches(text)
	}
	for _, w := range hs[:m] {
		lo, hi := widen(text, int(w.start), int(w.end), a.ctx)
		if a.matches(text[lo:hi]) {
			return true
		}
	}
	return false
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
		return a.matches(text)
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
		if m {
			return true
		}
		// A run ends when no thread is left, but a loop such as [\s\S]* keeps one
		// alive to the end of the text. Count what the runs read; past a quarter of
		// the text, one run over the whole text is cheaper than going on.
		if read += r; read > n/4 {
			sc.whole++
			return a.matches(text)
		}
	}
	return false
}

// widen moves lo left and hi right until the assertions a pattern uses read
// the same at the window's edges as in the whole text.
func widen(text string, lo, hi int, ctx ctxFlags) (int, int) {
	for lo > 0 && !utf8.RuneStart(text[lo]) {
		lo--
	}
	for hi < len(text) && !utf8.RuneStart(text[hi]) {
		hi++
	}
	if ctx&ctxBeginText != 0 {
		lo = 0
	}
	if ctx&ctxEndText != 0 {
		hi = len(text)
	}
	if ctx&ctxWord != 0 {
		// At a window edge \b sees no character beyond; so must the text.
		for lo > 0 && isWordByte(text[lo-1]) {
			lo--
		}
		for hi < len(text) && isWordByte(text[hi]) {
			hi++
		}
	}
	if ctx&ctxBeginLine != 0 {
		for lo > 0 && text[lo-1] != '\n' {
			lo--
		}
	}
	if ctx&ctxEndLine != 0 {
		for hi < len(text) && text[hi] != '\n' {
			hi++
		}
	}
	return lo, hi
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
