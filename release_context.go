package streamrules

// Context atoms in the release: the move's input and its tool record before the answer do
// not change while the answer streams, so each context atom is a constant for the tour.
// The held scanner folds them into the rule's tree once, when it is made, exactly as the
// final check (compiledRule.fires) will read them:
//
//   - an atom whose context is given is true or false;
//   - an atom whose context is missing (no input set, a tool record cut at its bound)
//     makes the rule not fire, but only when the check reaches it: all_of stops at its
//     first false child and any_of at its first true one, left to right. So the fold keeps
//     two trees per node, its value (v) and whether a missing atom is reached (u), and
//     the rule fires when the applies_when and condition trees hold and neither reaches
//     one: v(when) ∧ ¬u(when) ∧ (v(cond) ≠ negate) ∧ ¬u(cond).
//
// Constants fold away: a rule whose context makes it unable to fire is not followed at
// all, and one whose context atoms are satisfied is followed on its text atoms alone.

// foldContext returns p's fires tree for a tour whose context is f.
func (p *releasePlan) foldContext(f *Facts) relNode {
	if len(p.ctx) == 0 {
		return p.fires
	}
	return p.folds.get(p, f) // release_perf.go: foldContextOn, made once per outcome of the atoms
}

// foldContextOn is foldContext, made anew.
func (p *releasePlan) foldContextOn(f *Facts) relNode {
	cv, cu := p.foldNode(&p.cond, f)
	if p.negate {
		cv = relNotOf(cv)
	}
	if p.when == nil {
		return relAllOf(cv, relNotOf(cu))
	}
	wv, wu := p.foldNode(p.when, f)
	return relAllOf(wv, relNotOf(wu), cv, relNotOf(cu))
}

// foldNode returns n's value and whether its check reaches a missing context atom.
func (p *releasePlan) foldNode(n *relNode, f *Facts) (v, u relNode) {
	no := relNode{op: relFalse}
	switch n.op {
	case relCtx:
		t := target{facts: f}
		if p.ctx[n.atom].evalContext(&t) {
			v = relNode{op: relTrue}
		} else {
			v = no
		}
		if t.unknown {
			return v, relNode{op: relTrue}
		}
		return v, no
	case relNot, relAll, relAny:
		if !n.hasCtx() {
			return *n, no // nothing to fold: the tree as it is, made once per plan
		}
	}
	switch n.op {
	case relNot:
		v, u = p.foldNode(&n.kids[0], f)
		return relNotOf(v), u
	case relAll, relAny:
		vs := make([]relNode, 0, len(n.kids))
		us := make([]relNode, 0, len(n.kids))
		for i := range n.kids {
			kv, ku := p.foldNode(&n.kids[i], f)
			// kid i is checked when every kid before it let the check go on: true ones for
			// all_of, false ones for any_of.
			reached := make([]relNode, 0, len(vs)+1)
			for _, prev := range vs {
				if n.op == relAny {
					prev = relNotOf(prev)
				}
				reached = append(reached, prev)
			}
			us = append(us, relAllOf(append(reached, ku)...))
			vs = append(vs, kv)
		}
		if n.op == relAll {
			return relAllOf(vs...), relAnyOf(us...)
		}
		return relAnyOf(vs...), relAnyOf(us...)
	}
	return *n, no // text atoms and what only the whole answer decides never reach context
}

// hasCtx reports whether a context atom is in n's tree.
func (n *relNode) hasCtx() bool {
	if n.op == relCtx {
		return true
	}
	for i := range n.kids {
		if n.kids[i].hasCtx() {
			return true
		}
	}
	return false
}

func relNotOf(n relNode) relNode {
	switch n.op {
	case relTrue:
		return relNode{op: relFalse}
	case relFalse:
		return relNode{op: relTrue}
	case relNot:
		return n.kids[0]
	}
	return relNode{op: relNot, kids: []relNode{n}}
}

// relAllOf is all_of with constants folded: a false kid makes it false, true kids drop out.
func relAllOf(kids ...relNode) relNode { return relJoin(relAll, relFalse, relTrue, kids) }

// relAnyOf is any_of with constants folded.
func relAnyOf(kids ...relNode) relNode { return relJoin(relAny, relTrue, relFalse, kids) }

func relJoin(op, decides, neutral relOp, kids []relNode) relNode {
	var out []relNode
	for _, k := range kids {
		switch k.op {
		case decides:
			return relNode{op: decides}
		case neutral:
			continue
		}
		out = append(out, k)
	}
	switch len(out) {
	case 0:
		return relNode{op: neutral}
	case 1:
		return out[0]
	}
	return relNode{op: op, kids: out}
}
