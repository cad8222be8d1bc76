package streamrules

import (
	"fmt"
	"strings"
)

// ChangeOp is what a Change does to a line.
type ChangeOp string

// The three line operations of a diff.
const (
	ChangeAdd    ChangeOp = "add"
	ChangeRemove ChangeOp = "remove"
	ChangeEdit   ChangeOp = "edit"
)

// Change is one line of a structured diff between a draft and its fixed text, kept for
// audit with the firing. Lines are split at "\n" and numbered from 1.
type Change struct {
	Op      ChangeOp `json:"op"`
	OldLine int      `json:"old_line,omitempty"` // the line in the draft; 0 for an add
	NewLine int      `json:"new_line,omitempty"` // the line in the fixed text; 0 for a remove
	Old     string   `json:"old,omitempty"`
	New     string   `json:"new,omitempty"`
}

func (c Change) String() string {
	switch c.Op {
	case ChangeAdd:
		return fmt.Sprintf("+%d %q", c.NewLine, c.New)
	case ChangeRemove:
		return fmt.Sprintf("-%d %q", c.OldLine, c.Old)
	}
	return fmt.Sprintf("~%d %q -> %q", c.OldLine, c.Old, c.New)
}

// maxDiffCells bounds the quadratic part of Diff: past it the changed middle is reported
// as edits line by line, then adds or removes. Fixes touch a line or two at an end, so the
// common prefix and suffix leave almost nothing for the table.
const maxDiffCells = 1 << 20

// Diff returns the line changes that turn old into new: a longest-common-subsequence
// alignment after the common prefix and suffix are taken off, a remove followed by an add
// in the same place reported as an edit. Diff(x, x) is nil.
func Diff(old, new string) []Change {
	if old == new {
		return nil
	}
	// Common bytes at both ends, cut back to line boundaries, are equal lines: skip them
	// before splitting, so a fix at the end of a long answer splits only its last lines.
	head := 0
	for head < len(old) && head < len(new) && old[head] == new[head] {
		head++
	}
	head = strings.LastIndexByte(old[:head], '\n') + 1 // the prefix ends with a newline, or is empty
	tail := 0
	for tail < len(old)-head && tail < len(new)-head && old[len(old)-1-tail] == new[len(new)-1-tail] {
		tail++
	}
	if i := strings.IndexByte(old[len(old)-tail:], '\n'); i >= 0 {
		tail -= i // the suffix starts with a newline
	} else {
		tail = 0
	}
	a := strings.Split(old[head:len(old)-tail], "\n")
	b := strings.Split(new[head:len(new)-tail], "\n")
	skipped := strings.Count(old[:head], "\n")
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	var out []Change
	// A hunk is a run of removes and adds between two kept lines; its first min(r, a)
	// pairs are edits.
	var rem, add []Change
	flush := func() {
		n := min(len(rem), len(add))
		for i := range n {
			out = append(out, Change{Op: ChangeEdit, OldLine: rem[i].OldLine, NewLine: add[i].NewLine, Old: rem[i].Old, New: add[i].New})
		}
		out = append(out, rem[n:]...)
		out = append(out, add[n:]...)
		rem, add = rem[:0], add[:0]
	}
	emit := func(i, j int, keep bool, op ChangeOp) {
		switch {
		case keep:
			flush()
		case op == ChangeRemove:
			rem = append(rem, Change{Op: ChangeRemove, OldLine: skipped + pre + i + 1, Old: ma[i]})
		default:
			add = append(add, Change{Op: ChangeAdd, NewLine: skipped + pre + j + 1, New: mb[j]})
		}
	}
	if len(ma)*len(mb) > maxDiffCells || len(ma) == 0 || len(mb) == 0 {
		for i := range ma {
			emit(i, 0, false, ChangeRemove)
		}
		for j := range mb {
			emit(0, j, false, ChangeAdd)
		}
		flush()
		return out
	}
	// lcs[i][j]: the LCS length of ma[i:] and mb[j:], in one flat table.
	w := len(mb) + 1
	lcs := make([]int32, (len(ma)+1)*w)
	for i := len(ma) - 1; i >= 0; i-- {
		for j := len(mb) - 1; j >= 0; j-- {
			if ma[i] == mb[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(ma) && j < len(mb) {
		switch {
		case ma[i] == mb[j]:
			emit(i, j, true, "")
			i, j = i+1, j+1
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			emit(i, j, false, ChangeRemove)
			i++
		default:
			emit(i, j, false, ChangeAdd)
			j++
		}
	}
	for ; i < len(ma); i++ {
		emit(i, j, false, ChangeRemove)
	}
	for ; j < len(mb); j++ {
		emit(i, j, false, ChangeAdd)
	}
	flush()
	return out
}
