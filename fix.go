package streamrules

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// Fix is a deterministic repair of an answer that missed a text rule: no retry, no model
// call. Exactly one field is set.
//
//   - append_if_missing: the text goes at the end, unless the answer already ends with it
//     (both trimmed of surrounding space; then only the answer's trailing space goes);
//   - prepend_if_missing: the text goes at the start, unless the answer already starts with
//     it (then only its leading space goes);
//   - replace_regex: every match of pattern is replaced by with, where $1, ${name} are the
//     match's groups (regexp.Expand) and $$ is a dollar sign. When with is exactly one
//     group ($1, ${name}) and the pattern has no assertion and matches more than that
//     group, the leftmost match is replaced again and again until none is left (each
//     time the text gets shorter): the repaired text never matches the pattern, and the
//     repair can stream (release.go). ![a](![b](c)) becomes c, not ![b](c).
//
// The text and the replacement may use the move's variables as {{name}} (see Move.SetVar):
// a telegram tail is append_if_missing "\n\n↩ #{{message_id}}". A fix whose variable the
// move does not have is not applied, so the miss takes the interrupt path instead of
// sending a half-filled template.
type Fix struct {
	AppendIfMissing  string        `json:"append_if_missing,omitempty"`
	PrependIfMissing string        `json:"prepend_if_missing,omitempty"`
	ReplaceRegex     *ReplaceRegex `json:"replace_regex,omitempty"`
}

// ReplaceRegex is the replace_regex fix.
type ReplaceRegex struct {
	Pattern string `json:"pattern"`
	With    string `json:"with"`
}

// MaxFixChars bounds the text of a fix (append, prepend, or the replacement).
const MaxFixChars = 400

var templateVarRE = regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`)

func validateFix(f *Fix, check func(field, pattern string) error) error {
	var keys []string
	if f.AppendIfMissing != "" {
		keys = append(keys, "append_if_missing")
	}
	if f.PrependIfMissing != "" {
		keys = append(keys, "prepend_if_missing")
	}
	if f.ReplaceRegex != nil {
		keys = append(keys, "replace_regex")
	}
	switch len(keys) {
	case 0:
		return invalid("fix", "empty: it needs one of append_if_missing, prepend_if_missing, replace_regex")
	case 1:
	default:
		return invalid("fix", "a fix does one thing, this one has %s", strings.Join(keys, " and "))
	}
	at := "fix." + keys[0]
	text := f.AppendIfMissing + f.PrependIfMissing
	if f.ReplaceRegex != nil {
		if f.ReplaceRegex.Pattern == "" {
			return invalid(at+".pattern", "empty: a replacement needs something to replace")
		}
		if err := checkPattern(at+".pattern", f.ReplaceRegex.Pattern, check); err != nil {
			return err
		}
		at, text = at+".with", f.ReplaceRegex.With
	} else if strings.TrimSpace(text) == "" {
		return invalid(at, "only spaces: nothing would be added")
	}
	if n := len([]rune(text)); n > MaxFixChars {
		return invalid(at, "%d characters, at most %d", n, MaxFixChars)
	}
	return checkTemplate(at, text)
}

// checkTemplate checks the {{name}} references of a fix's text: names are variable names
// ([a-z][a-z0-9_]*) and every "{{" is closed.
func checkTemplate(field, text string) error {
	for _, m := range templateVarRE.FindAllStringSubmatch(text, -1) {
		if !ValidName(m[1]) {
			return invalid(field, "template variable {{%s}} must be a name matching [a-z][a-z0-9_]*", m[1])
		}
	}
	if strings.Contains(templateVarRE.ReplaceAllString(text, ""), "{{") {
		return invalid(field, "%q has a {{ that is not closed by }}", text)
	}
	return nil
}

// expand fills {{name}} from vars; escape is applied to each value (the replacement of
// replace_regex needs its $ doubled). ok is false when a variable is not set.
func expand(text string, vars map[string]string, escape func(string) string) (out string, missing string) {
	if !strings.Contains(text, "{{") {
		return text, ""
	}
	out = templateVarRE.ReplaceAllStringFunc(text, func(m string) string {
		name := templateVarRE.FindStringSubmatch(m)[1]
		v, ok := vars[name]
		if !ok {
			if missing == "" {
				missing = name
			}
			return m
		}
		if escape != nil {
			v = escape(v)
		}
		return v
	})
	return out, missing
}

// compiledFix is a Fix ready to run.
type compiledFix struct {
	Fix
	re *regexp.Regexp // replace_regex
	nf *replPlan      // replace_regex applied to normal form (nil: once, see nfFix)
}

func compileFix(f *Fix) *compiledFix {
	c := &compiledFix{Fix: *f}
	if f.ReplaceRegex != nil {
		c.re = regexp.MustCompile(f.ReplaceRegex.Pattern) // validated
		c.nf = nfFix(f.ReplaceRegex)
	}
	return c
}

// apply returns the repaired text. missing names a template variable vars lacks (the fix
// was not applied).
func (c *compiledFix) apply(text string, vars map[string]string) (out string, missing string) {
	switch {
	case c.nf != nil:
		return c.nf.normalForm(text), ""
	case c.re != nil:
		with, missing := expand(c.ReplaceRegex.With, vars, func(v string) string { return strings.ReplaceAll(v, "$", "$$") })
		if missing != "" {
			return text, missing
		}
		return c.re.ReplaceAllString(text, with), ""
	case c.AppendIfMissing != "":
		add, missing := expand(c.AppendIfMissing, vars, nil)
		if missing != "" {
			return text, missing
		}
		if trimmed := strings.TrimRightFunc(text, unicode.IsSpace); strings.HasSuffix(trimmed, strings.TrimSpace(add)) {
			// Already there: only the space after it goes (a condition like `…\s*$` may not
			// count every Unicode space, and a fix that changes nothing is no repair).
			return trimmed, ""
		}
		return strings.TrimRightFunc(text, unicode.IsSpace) + add, ""
	default:
		add, missing := expand(c.PrependIfMissing, vars, nil)
		if missing != "" {
			return text, missing
		}
		if trimmed := strings.TrimLeftFunc(text, unicode.IsSpace); strings.HasPrefix(trimmed, strings.TrimSpace(add)) {
			return trimmed, ""
		}
		return add + strings.TrimLeftFunc(text, unicode.IsSpace), ""
	}
}

// ---- structured diff ----

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
