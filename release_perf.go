package streamrules

import (
	"bytes"
	"strings"
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
