package streamrules

import (
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/streamrules/streamrules/internal/rxprog"
)

// What a rule does to the client's stream, said per rule from its release plan (release.go),
// so `streamrules validate`, `rules show`, `rules list` and the engine's load summary can
// tell a master before a tour is held: a rule that holds speech costs the typewriter
// effect in every tour where it is armed, and nothing else says so.

// HoldKind is how a rule holds the client's stream while it is armed.
type HoldKind int

// The kinds, from least held to most.
const (
	// HoldNone: the rule never holds speech; chunks stream as they come.
	HoldNone HoldKind = iota
	// HoldTail: everything but a bounded tail streams (the tail rule: its fix cures it
	// whatever comes before, so only the trailing white space waits).
	HoldTail
	// HoldHead: the answer's first bytes are held until they rule the rule out (an
	// anchored condition, such as a bare emoji: a letter settles it).
	HoldHead
	// HoldOpen: text streams; what could begin a match of the rule's repair (its Opener)
	// is held until the match is complete or ruled out.
	HoldOpen
	// HoldTour: the whole answer of the tour is held until its verdict.
	HoldTour
)

// SpeechHold says whether a rule holds the client's stream, when, and why.
type SpeechHold struct {
	Kind HoldKind `json:"kind"`
	// Bytes bounds a HoldTail: the client is at most this many bytes (16)
	// behind, besides trailing white space.
	Bytes int `json:"bytes,omitempty"`
	// Opener is what begins a HoldOpen: the literal a match of the repair starts with
	// ("![", lower-cased where the pattern folds case), "any of !?" where it starts with
	// one of a few bytes, "" where it can start at any letter.
	Opener string `json:"opener,omitempty"`
	// When is when the rule is armed, and so holds: its `when` environments and, for a
	// rule with context atoms, the context that leaves it able to fire. "" is every tour.
	When string `json:"when,omitempty"`
	// Otherwise is what the rule does in a tour where the release cannot follow it, when
	// that differs from Kind ("holds the whole tour without {{message_id}}").
	Otherwise string `json:"otherwise,omitempty"`
	// Reason is why, in the rule's terms.
	Reason string `json:"reason"`
}

// String is the verdict in one phrase, the form the CLI prints: "streams", "holds a
// bounded tail (16 bytes)", "holds while a `![` is open", "holds the answer's start",
// "holds the whole tour when picture".
func (h SpeechHold) String() string {
	var s string
	switch h.Kind {
	case HoldNone:
		return "streams"
	case HoldTail:
		s = fmt.Sprintf("holds a bounded tail (%d bytes)", h.Bytes)
	case HoldHead:
		s = "holds the answer's start"
	case HoldOpen:
		if h.Opener == "" {
			s = "holds while a match is open (it can start at any letter)"
		} else {
			s = fmt.Sprintf("holds while a `%s` is open", h.Opener)
		}
	case HoldTour:
		s = "holds the whole tour"
	}
	if h.When != "" {
		s += " when " + h.When
	}
	return s
}

// HoldsTour reports whether the rule holds whole tours in some tour where it is armed,
// as its verdict or otherwise: what `streamrules validate --stream` refuses.
func (h SpeechHold) HoldsTour() bool { return h.Kind == HoldTour || h.Otherwise != "" }

// SpeechHoldOf says how r, a rule as Validate accepts it, holds speech while armed. It is
// a property of the rule alone: two repairs armed in one tour may hold more than either
// (the tail rule is followed only after the replace repairs, in rule-name order).
// It costs the rule's release plan (a regexp parse and compile per pattern); the
// engine's load summary reads the plans the engine keeps anyway.
func SpeechHoldOf(r *Rule) SpeechHold {
	if r.Scope == ScopeThinking {
		return thinkingHold(r) // thinking.go
	}
	if r.Tool() != "" || r.Shadow {
		return holdOf(r, nil)
	}
	return holdOf(r, planRelease(r))
}

// SpeechHolds returns how each loaded rule holds speech, by name.
func (e *Engine) SpeechHolds() map[string]SpeechHold {
	set := e.rules.Load()
	out := make(map[string]SpeechHold, len(set.all))
	for _, c := range set.all {
		out[c.Name] = c.speechHold()
	}
	return out
}

// speechHold reads the rule's own release plan, the one its tours use (made once).
func (c *compiledRule) speechHold() SpeechHold {
	if c.Tool() != "" || c.Shadow || c.release == nil {
		return SpeechHoldOf(&c.Rule)
	}
	return holdOf(&c.Rule, c.release.get(c))
}

// holdOf is r's verdict from its release plan p (nil for tool and shadowed rules).
func holdOf(r *Rule, p *releasePlan) SpeechHold {
	if r.Scope == ScopeThinking {
		return thinkingHold(r) // thinking.go
	}
	h := SpeechHold{When: strings.Join(r.When, ", ")}
	switch {
	case r.Shadow:
		return SpeechHold{Reason: "in shadow: it is evaluated and counted, and never arms held speech"}
	case r.Tool() != "" && r.Mode == ModeInterrupt:
		// A gate never holds text: it judges the calls when they are declared, and one
		// that matches after text was shown is refused in place (CheckShownResponse).
		return SpeechHold{Reason: "a gate stops a call before it runs; the text beside it streams"}
	case r.Tool() != "":
		return SpeechHold{Reason: "a tool rule reminds on the call's result; it never reads the answer"}
	}
	if ctx := contextAtoms(r); ctx != "" {
		if h.When != "" {
			h.When += ", and "
		}
		h.When += "its context leaves it able to fire (" + ctx + ")"
	}
	switch {
	case p.tail != nil:
		h.Kind, h.Bytes = HoldTail, releaseBatchBytes
		h.Reason = "a negate rule that must hold at the end, with an append_if_missing fix that cures it whatever comes before: only trailing white space waits"
		if len(p.tail.add.names) > 0 {
			vars := make([]string, len(p.tail.add.names))
			for i, n := range p.tail.add.names {
				vars[i] = "{{" + n + "}}"
			}
			h.Otherwise = "holds the whole tour in a move without " + strings.Join(vars, ", ") + " set (Move.SetVar, middleware.WithVars): the fix cannot repair"
		}
		return h
	case p.repl != nil:
		return openHold(h, r.Fix.ReplaceRegex.Pattern, "a replace_regex fix over its own condition")
	case p.lit != nil:
		h = openHold(h, r.Fix.ReplaceRegex.Pattern, "a replace_regex fix with a plain replacement")
		if h.Kind == HoldOpen && len(p.ctx) > 0 {
			h.Otherwise = "holds the whole tour where its context is not known (no input given)"
		}
		return h
	}
	h.Kind = HoldTour
	switch {
	case r.Predicate == nil && r.Condition != "" && !r.Negate && anchoredStart(r.Condition):
		h.Kind = HoldHead
		h.Reason = "a condition anchored at the start: the answer's first bytes settle it"
	case r.Negate:
		h.Reason = "a negate rule: what it misses may come at the very end, so no prefix is final"
	case r.Fix != nil && r.Fix.ReplaceRegex != nil:
		h.Reason = "a replace_regex fix the release cannot follow (its replacement is not one of its groups over its own condition): it is judged whole"
		if _, letters := matchOpener(r.Fix.ReplaceRegex.Pattern); letters {
			h.Reason = "a replace_regex fix whose pattern can start at any letter, in a shape the release cannot follow: it is judged whole"
		}
	case r.Predicate != nil:
		h.Reason = "a predicate tree that stays open until the answer ends: no prefix is final"
	case r.Condition == "":
		h.Reason = "an empty condition matches every answer"
	default:
		h.Reason = "a condition that can match anywhere in the answer: no prefix is final until the end"
	}
	return h
}

// openHold is the verdict of a replace repair that streams around its matches: held from
// where a match could begin. A pattern that can begin at any letter holds nearly every
// answer from its first word.
func openHold(h SpeechHold, pattern, what string) SpeechHold {
	opener, letters := matchOpener(pattern)
	h.Kind, h.Opener = HoldOpen, opener
	h.Reason = what + ": text before a possible match streams; a match is held until it is complete, then repaired"
	if letters {
		h.Reason = what + " whose pattern can start at any letter: each word is held until it cannot begin a match"
	}
	return h
}

// matchOpener returns what a match of pattern starts with, for the verdict: its literal
// prefix (lower-cased where case is folded), else the bytes it can start with; letters is
// true when a match can start at an ASCII letter.
func matchOpener(pattern string) (opener string, letters bool) {
	tree, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", true
	}
	tree = tree.Simplify()
	subs := []*syntax.Regexp{tree}
	if tree.Op == syntax.OpConcat {
		subs = tree.Sub
	}
	for len(subs) > 0 && (subs[0].Op == syntax.OpWordBoundary || subs[0].Op == syntax.OpCapture && len(subs[0].Sub) == 1 && subs[0].Sub[0].Op == syntax.OpLiteral) {
		if subs[0].Op == syntax.OpCapture {
			subs = append([]*syntax.Regexp{subs[0].Sub[0]}, subs[1:]...)
			break
		}
		subs = subs[1:]
	}
	if len(subs) > 0 && subs[0].Op == syntax.OpLiteral && len(subs[0].Rune) > 0 {
		lit := string(subs[0].Rune)
		if subs[0].Flags&syntax.FoldCase != 0 {
			lit = strings.ToLower(lit)
		}
		return lit, false
	}
	prog, err := syntax.Compile(tree)
	if err != nil {
		return "", true
	}
	set := rxprog.FirstBytes(prog)
	if set == nil {
		return "", true
	}
	var b strings.Builder
	for c := 0; c < utf8.RuneSelf; c++ {
		if set.Has(byte(c)) {
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
				return "", true
			}
			if c < ' ' {
				continue // a control byte: not worth a place in a one-line verdict
			}
			b.WriteByte(byte(c))
		}
	}
	return "any of " + b.String(), false
}

// anchoredStart reports whether every match of re starts at the text's start.
func anchoredStart(re string) bool {
	tree, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return false
	}
	tree = tree.Simplify()
	for tree.Op == syntax.OpCapture && len(tree.Sub) == 1 {
		tree = tree.Sub[0]
	}
	if tree.Op == syntax.OpBeginText {
		return true
	}
	return tree.Op == syntax.OpConcat && len(tree.Sub) > 0 && tree.Sub[0].Op == syntax.OpBeginText
}

// contextAtoms names the context atoms of r's trees, in order, each once.
func contextAtoms(r *Rule) string {
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	var walk func(q *Predicate)
	walk = func(q *Predicate) {
		if q == nil {
			return
		}
		switch {
		case q.InputContainsRegex != "":
			add("input_contains_regex")
		case q.InputNotContainsRegex != "":
			add("input_not_contains_regex")
		case q.ToolCalled != "":
			add("tool_called " + q.ToolCalled)
		case q.ToolSucceeded != "":
			add("tool_succeeded " + q.ToolSucceeded)
		case q.ToolFailed != "":
			add("tool_failed " + q.ToolFailed)
		case q.EditedUnchecked != nil:
			add("edited_unchecked")
		}
		for i := range q.AllOf {
			walk(&q.AllOf[i])
		}
		for i := range q.AnyOf {
			walk(&q.AnyOf[i])
		}
		walk(q.Not)
	}
	walk(r.AppliesWhen)
	walk(r.Predicate)
	return strings.Join(out, ", ")
}
