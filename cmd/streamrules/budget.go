package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/streamrules/streamrules"
)

// validate --budget N: the reminder budget's test for a rules repository's CI. The rules
// that can fire together on one call are one tool's live rules (enabled, not in shadow:
// a shadowed rule never reminds) whose `when` sets can hold in one tour. Environments are
// independent conditions, so any `when` set can hold together with any other: the group
// is every live rule of the tool, its delivery: full rules among them. When their texts
// in full exceed N characters, the engine under a ReminderBudget of N would send some of
// them in manifest form; the check fails (exit 1) naming the tool and its rules, so the
// rules repository decides on purpose: a shorter text, a hint, a larger budget, or
// delivery: full where a rule must always be whole.

// overBudget is one tool whose co-firing rules exceed the budget in full form.
type overBudget struct {
	tool  string
	chars int
	rules []streamrules.Rule // by name
}

// overBudgetError: the files are valid, and some tool's rules exceed the budget. It ran
// and said no: exit 1.
type overBudgetError struct{ msg string }

func (e *overBudgetError) Error() string { return e.msg }

// checkBudget returns the tools whose live rules exceed budget characters in full form,
// by tool name. Rules named twice (in two files) count once, as the last file has them.
func checkBudget(rules []streamrules.Rule, budget int) []overBudget {
	byTool := map[string]map[string]streamrules.Rule{}
	for _, r := range rules {
		tool := r.Tool()
		if tool == "" || r.Disabled || r.Shadow {
			continue
		}
		if byTool[tool] == nil {
			byTool[tool] = map[string]streamrules.Rule{}
		}
		byTool[tool][r.Name] = r
	}
	var out []overBudget
	for tool, group := range byTool {
		ob := overBudget{tool: tool}
		for _, r := range group {
			ob.chars += utf8.RuneCountInString(r.Text)
			ob.rules = append(ob.rules, r)
		}
		if ob.chars <= budget {
			continue
		}
		slices.SortFunc(ob.rules, func(a, b streamrules.Rule) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, ob)
	}
	slices.SortFunc(out, func(a, b overBudget) int { return strings.Compare(a.tool, b.tool) })
	return out
}

// reportBudget writes one line per tool over the budget.
func reportBudget(w io.Writer, over []overBudget, budget int) {
	for _, ob := range over {
		parts := make([]string, len(ob.rules))
		for i, r := range ob.rules {
			parts[i] = r.Name + " (" + strconv.Itoa(utf8.RuneCountInString(r.Text))
			if r.Delivery == streamrules.DeliveryFull {
				parts[i] += ", delivery: full"
			}
			parts[i] += ")"
		}
		fmt.Fprintf(w, "over budget: tool %q: %s can fire together on one call, %d characters in full, budget %d: %s\n",
			ob.tool, plural(len(ob.rules), "rule"), ob.chars, budget, strings.Join(parts, ", "))
	}
}
