package streamrules

import (
	"log/slog"
	"strings"
)

// logic is how a compiled rule decides: its plain condition or predicate tree, its
// applies_when, its field path and its fix. Every regex of a group (a tool's rules, or all
// text rules) is in the group's one matcher, so a target costs one prefilter pass however
// many trees the group holds.
type logic struct {
	plain   int         // the condition's index in the group's patterns; -1 with a predicate
	cond    *predNode   // the predicate, nil for a plain condition
	applies *predNode   // nil: the rule applies everywhere
	own     textMatcher // a field rule's own matcher: it judges field values, not the group's target
	path    []string    // a field rule's Field, split at its dots
	fix     *compiledFix
	shell   ShellReader  // a shell rule's reader (shell.go); nil: not a shell rule
	log     *slog.Logger // a shell rule's debug line on a value it cannot read
	// progs are the programs a shell rule's regexes name (shellPrograms).
	progs []string
}

// compileGroup compiles the logic of a group's rules and returns the group's matcher,
// built on prevMatch, the group's matcher in prev (the set in force; nil: none).
func (e *Engine) compileGroup(rules []*compiledRule, next analysisCache, prevMatch textMatcher, prev *ruleSet) textMatcher {
	group := patterns{index: make(map[string]int, len(rules))}
	for _, c := range rules {
		ps := &group
		if c.Field != "" || c.Shell {
			ps = &patterns{}
		}
		c.plain = -1
		if c.Predicate != nil {
			n := compilePredicate(c.Predicate, ps)
			c.cond = &n
		} else {
			c.plain = ps.add(c.Condition)
		}
		if c.AppliesWhen != nil {
			n := compilePredicate(c.AppliesWhen, ps)
			c.applies = &n
		}
		if c.Fix != nil && c.fix == nil { // an unchanged rule keeps its fix
			c.fix = compileFix(c.Fix)
		}
		if c.Shell {
			c.shell, c.log = e.shell(), e.log
			c.progs = shellPrograms(&c.Rule)
		}
		if c.Field != "" || c.Shell {
			var prevOwn textMatcher
			if prev != nil {
				if p := prev.ruleByName(c.Name); p != nil {
					prevOwn = p.own
				}
			}
			c.own = e.newTextMatcherOn(ps.list, next, prevOwn)
			if c.Field != "" {
				c.path = strings.Split(c.Field, ".")
			}
		}
	}
	return e.newTextMatcherOn(group.list, next, prevMatch)
}
