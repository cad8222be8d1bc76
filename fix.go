package streamrules

import (
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
//     repair can stream while it is held. ![a](![b](c)) becomes c, not ![b](c).
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
