package streamrules

import (
	"bytes"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/streamrules/streamrules/internal/lazydfa"
)

// Pieces of the release made once per plan rather than once per tour or batch.

// tmplSplit is a fix template cut at its variables once (templateVarRE), so a tour expands
// it without running the regexp: lits[i] comes before names[i], the last lit ends it.
type tmplSplit struct {
	text  string
	lits  []string
	names []string
}

func splitTemplate(text string) *tmplSplit {
	t := &tmplSplit{text: text}
	at := 0
	if strings.Contains(text, "{{") {
		for _, m := range templateVarRE.FindAllStringSubmatchIndex(text, -1) {
			t.lits = append(t.lits, text[at:m[0]])
			t.names = append(t.names, text[m[2]:m[3]])
			at = m[1]
		}
	}
	t.lits = append(t.lits, text[at:])
	return t
}

// expand is expand(text, vars, nil) for the template t was split from.
func (t *tmplSplit) expand(vars map[string]string) (out string, missing string) {
	if len(t.names) == 0 {
		return t.lits[0], ""
	}
	n := len(t.lits[len(t.names)])
	for i, name := range t.names {
		v, ok := vars[name]
		if !ok {
			return expand(t.text, vars, nil) // the rare case, as expand has it
		}
		n += len(t.lits[i]) + len(v)
	}
	var b strings.Builder
	b.Grow(n)
	for i, name := range t.names {
		b.WriteString(t.lits[i])
		b.WriteString(vars[name])
	}
	b.WriteString(t.lits[len(t.names)])
	return b.String(), ""
}

// trimRightSpace is bytes.TrimRightFunc(p, unicode.IsSpace), ASCII first.
func trimRightSpace(p []byte) []byte {
	for len(p) > 0 {
		c := p[len(p)-1]
		if c >= utf8.RuneSelf {
			return bytes.TrimRightFunc(p, unicode.IsSpace)
		}
		if c != ' ' && (c < '\t' || c > '\r') {
			return p
		}
		p = p[:len(p)-1]
	}
	return p
}

// byteSet is the set of bytes a match can start with (firstBytes).
type byteSet struct {
	in  [256]bool
	one int // the only byte in the set, or -1
}

// firstBytes returns the bytes a match of prog can start with, counting every non-ASCII
// byte in when a rune at or above utf8.RuneSelf can start one, or nil when it cannot tell
// (an assertion, any rune, an empty match). A stream whose cursor has no thread alive
// stays so over bytes outside the set: no match starts there, and with no assertion
// nothing before a start matters.
func firstBytes(prog *syntax.Prog) *byteSet {
	s := &byteSet{one: -1}
	high := func() {
		for b := utf8.RuneSelf; b < 256; b++ {
			s.in[b] = true
		}
	}
	add := func(r rune, fold bool) {
		if r >= utf8.RuneSelf {
			high()
			return
		}
		s.in[r] = true
		if fold {
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				if f >= utf8.RuneSelf {
					high()
				} else {
					s.in[f] = true
				}
			}
		}
	}
	unknown := false
	var w lazydfa.Walker
	w.Walk(prog, []uint32{uint32(prog.Start)}, func(_ uint32, in *syntax.Inst) bool {
		switch in.Op {
		case syntax.InstRune1:
			add(in.Rune[0], false)
		case syntax.InstRune:
			fold := syntax.Flags(in.Arg)&syntax.FoldCase != 0
			if len(in.Rune) == 1 {
				add(in.Rune[0], fold)
				break
			}
			for i := 0; i+1 < len(in.Rune); i += 2 {
				lo, hi := in.Rune[i], in.Rune[i+1]
				for r := lo; r <= min(hi, utf8.RuneSelf-1); r++ {
					add(r, fold)
				}
				if hi >= utf8.RuneSelf {
					high()
					if fold { // a rune above ASCII may fold to an ASCII letter (K, ſ)
						for r := 'A'; r <= 'z'; r++ {
							s.in[r] = true
						}
					}
				}
			}
		default: // InstEmptyWidth, InstMatch, InstFail, any rune
			unknown = true
		}
		return false
	})
	if unknown {
		return nil
	}
	n := 0
	for b, in := range s.in {
		if in {
			n, s.one = n+1, b
		}
	}
	if n != 1 {
		s.one = -1
	}
	return s
}

// none reports whether no byte of p is in the set.
func (s *byteSet) none(p []byte) bool {
	if s.one >= 0 {
		return bytes.IndexByte(p, byte(s.one)) < 0
	}
	for _, b := range p {
		if s.in[b] {
			return false
		}
	}
	return true
}

// foldCache keeps a plan's folded trees by what its context atoms gave (true, false,
// missing): the fold reads the facts only through them, so a tour whose atoms give the
// same has the same tree (read only, shared).
type foldCache struct {
	mu sync.Mutex
	m  map[uint64]relNode
}

// foldCacheMax bounds the trees a plan keeps (the outcomes seen are few: a rule reads a
// handful of atoms).
const foldCacheMax = 64

func (c *foldCache) get(p *releasePlan, f *Facts) relNode {
	if len(p.ctx) > 32 {
		return p.foldContextOn(f)
	}
	var key uint64
	for i := range p.ctx {
		t := target{facts: f}
		if p.ctx[i].evalContext(&t) {
			key |= 1 << (2 * i)
		}
		if t.unknown {
			key |= 2 << (2 * i)
		}
	}
	c.mu.Lock()
	n, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = p.foldContextOn(f)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[uint64]relNode{}
	}
	if len(c.m) < foldCacheMax {
		c.m[key] = n
	}
	c.mu.Unlock()
	return n
}
