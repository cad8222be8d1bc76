package streamrules

import (
	"bytes"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
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
