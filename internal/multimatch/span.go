package multimatch

import "unicode/utf8"

// spanWidthMax is the widest match Span finds exactly: its regexp window is at most twice
// that, plus the context the assertions read.
const spanWidthMax = 1024

// Span returns where the first match of the pattern's cut form (Run) lies in text, as
// regexp's FindStringIndex of Run would: the leftmost match, its end by regexp's
// preference. The cut form matches the same texts as the pattern, but its matches
// lack the optional edges the cut removed: (?s).*secret.* spans "secret", b+ one b.
// ok is false when text has no match.
//
// It costs what verifying the pattern over the whole text costs, plus a regexp run over
// a window: the lazy DFA finds where the earliest match ends (e); the leftmost match
// then starts within the widest span w before e and ends within w after it, and regexp
// runs over that window only, widened until the assertions read as in the text (as the
// verification windows are, window.go). When w is unbounded or above spanWidthMax, the
// window is spanWidthMax either side of e, and the span is the first match within it: a
// match of the cut form ending near the earliest match's end, not always the leftmost
// (z[\s\S]+x spans from a z at most spanWidthMax before the first x with a z before
// it). Only when the window holds no match, or the DFA gives up, does regexp run over
// the whole text.
func (a *Analysis) Span(text string) (start, end int, ok bool) {
	re := a.regexp()
	if d := a.lazy(); d != nil {
		if m, read, dfaOK := d.MatchRead(text); dfaOK {
			if !m {
				return 0, 0, false
			}
			w := a.width
			if w < 0 || w > spanWidthMax {
				w = spanWidthMax
			}
			// The DFA sees a match one rune after its end at the latest (an assertion
			// after it reads the next rune).
			lo := max(0, read-utf8.UTFMax-w)
			hi := min(len(text), read+w)
			var sc scratch
			lo, hi = widenLo(text, lo, 0, a.ctx, &sc), widenHi(text, hi, a.ctx, &sc)
			if loc := re.FindStringIndex(text[lo:hi]); loc != nil {
				return lo + loc[0], lo + loc[1], true
			}
			// Only a match wider than the window: the whole text.
		}
	}
	loc := re.FindStringIndex(text)
	if loc == nil {
		return 0, 0, false
	}
	return loc[0], loc[1], true
}
