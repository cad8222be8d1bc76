package multimatch

import "unicode/utf8"

// Span returns where the first match of the pattern's cut form (Run) lies in text, as
// regexp's FindStringIndex of Run would: the leftmost match, its end by regexp's
// preference. The cut form matches the same texts as the pattern, but its matches
// lack the optional edges the cut removed: (?s).*secret.* spans "secret", b+ spans
// one b. ok is false when text has no match.
//
// It costs what verifying the pattern over the whole text costs, plus a regexp run over
// a window of twice the match's widest span: the lazy DFA finds where the earliest
// match ends (e), the leftmost match then starts within the widest span w before e and
// ends within w after it, and regexp runs over that window only, widened until the
// assertions read as in the text (as the verification windows are, window.go). A
// pattern of unbounded width, or whose DFA gives up, runs regexp over the text.
func (a *Analysis) Span(text string) (start, end int, ok bool) {
	re := a.regexp()
	if a.width >= 0 {
		if d := a.lazy(); d != nil {
			m, read, dfaOK := d.MatchRead(text)
			if dfaOK {
				if !m {
					return 0, 0, false
				}
				// The DFA sees a match one rune after its end at the latest (an
				// assertion after it reads the next rune).
				lo := max(0, read-utf8.UTFMax-a.width)
				hi := min(len(text), read+a.width)
				var sc scratch
				lo, hi = widenLo(text, lo, 0, a.ctx, &sc), widenHi(text, hi, a.ctx, &sc)
				if loc := re.FindStringIndex(text[lo:hi]); loc != nil {
					return lo + loc[0], lo + loc[1], true
				}
				// Unreachable (the window holds the leftmost match); the whole text is always right.
			}
		}
	}
	loc := re.FindStringIndex(text)
	if loc == nil {
		return 0, 0, false
	}
	return loc[0], loc[1], true
}
