package ruletools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/ruleinput"
)

// Bounds of a stream_rule_list page. With 10,000 rules the whole list was megabytes of
// prompt; a page stays near listBudget bytes whatever the rule set.
const (
	listBudget       = 8 << 10
	defaultListLimit = 20
	maxListLimit     = 100
	// ruleViewBudget is the most one listed rule may take: a row edited by hand past the
	// limits is shown with its condition and text cut to excerpts.
	ruleViewBudget = listBudget / 2
)

// listInput is stream_rule_list's input: filters, a page size and a cursor.
type listInput struct {
	Name    string `json:"name"`    // part of the rule's name
	Scope   string `json:"scope"`   // "text", "thinking", "tool" (every tool rule) or "tool:<name>"
	Enabled *bool  `json:"enabled"` // only enabled (true) or disabled (false) rules
	Loaded  *bool  `json:"loaded"`  // only rules the engine runs (true) or does not (false)
	Limit   int    `json:"limit"`   // page size: 1 to maxListLimit; 0 means defaultListLimit
	Cursor  string `json:"cursor"`  // the previous page's next_cursor: the last name it showed
	Tests   bool   `json:"tests"`   // show each rule's tests; false: left out (the page holds more rules)
}

const listWant = `{"name": "part of a name", "scope": "text" | "thinking" | "tool" | "tool:<name>", "enabled": bool, "loaded": bool, "limit": 1-100, "cursor": "...", "tests": bool}, every field optional`

func (in *listInput) check() (field, msg string) {
	switch {
	case in.Limit < 0 || in.Limit > maxListLimit:
		return "limit", fmt.Sprintf(`"limit" is %d, must be 1 to %d`, in.Limit, maxListLimit)
	case in.Scope != "" && in.Scope != "tool" && streamrules.ModeForScope(in.Scope) == "":
		return "scope", fmt.Sprintf(`"scope" %q is none of "text", "thinking", "tool", "tool:<name>"`, ruleinput.Excerpt(in.Scope))
	}
	if in.Limit == 0 {
		in.Limit = defaultListLimit
	}
	return "", ""
}

func (in *listInput) match(r streamrules.Rule, loaded bool) bool {
	switch {
	case in.Cursor != "" && r.Name <= in.Cursor:
		return false // ListRules sorts by name: the cursor is the last name shown
	case in.Name != "" && !strings.Contains(r.Name, in.Name):
		return false
	case in.Scope == "tool" && r.Tool() == "":
		return false
	case in.Scope != "" && in.Scope != "tool" && r.Scope != in.Scope:
		return false
	case in.Enabled != nil && *in.Enabled == r.Disabled:
		return false
	case in.Loaded != nil && *in.Loaded != loaded:
		return false
	}
	return true
}

// page builds one page of matching rules, in name order, adding rules while the output
// stays within listBudget (at least one rule, itself at most ruleViewBudget).
func (b *base) page(rules []streamrules.Rule, in listInput, counts map[string]int64) Result {
	loaded := b.loaded()
	out := Result{OK: true, Rules: []RuleView{}, Environments: b.eng.Environments()}
	size := len(out.String()) + 200 // the message and the cursor
	matched, more := 0, false
	for _, r := range rules {
		id, ok := loaded[r.Name]
		if !in.match(r, ok && id == r.ID) {
			continue
		}
		matched++
		if more {
			continue
		}
		v := b.view(r, loaded, counts)
		if !in.Tests {
			v.Tests = nil // a page for the prompt: the examples on request
		}
		n := viewSize(v)
		if n > ruleViewBudget && v.Tests != nil {
			v.Tests, v.Truncated = nil, true // the examples go first: the rule is what it does
			n = viewSize(v)
		}
		if n > ruleViewBudget {
			v.Condition, v.Text, v.Truncated = ruleinput.Excerpt(v.Condition), ruleinput.Excerpt(v.Text), true
			n = viewSize(v)
		}
		if len(out.Rules) == in.Limit || (len(out.Rules) > 0 && size+n+1 > listBudget) {
			more = true
			continue
		}
		out.Rules = append(out.Rules, v)
		size += n + 1
	}
	shown := len(out.Rules)
	switch {
	case more:
		out.NextCursor = out.Rules[shown-1].Name
		out.Message = fmt.Sprintf("%d of %d matching rules, from %q to %q. For the next page, call %s again with the same filters and \"cursor\": %q.",
			shown, matched, out.Rules[0].Name, out.NextCursor, ListName, out.NextCursor)
	case in.Cursor != "":
		out.Message = fmt.Sprintf("The last %d of the matching rules.", shown)
	default:
		out.Message = fmt.Sprintf("%d rules.", shown)
	}
	return out
}

func viewSize(v RuleView) int {
	data, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(data)
}
