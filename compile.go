package streamrules

import (
	"fmt"
	"log/slog"
	"slices"
	"sort"
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

// compiledRule is a loaded rule ready for the hot path.
type compiledRule struct {
	Rule
	when   uint64 // bit mask over Engine.environments
	repeat Repeat
	index  int        // a text rule's position in ruleSet.text (Scanner.armed); unused for tool rules
	shadow bool       // Rule.Shadow or Config.Shadow: evaluated, never acts (firing.go)
	early  *earlyPlan // a text rule judged on the streamed prefix; nil: only at the end
	// release is how the rule lets held speech go (release.go), made at its first use;
	// nil for tool rules.
	release *lazyRelease
	logic   // predicate trees, field path and fix (judge.go)

	deliveryPlan // what the reminder budget needs of it (delivery.go)
}

// toolRules are one tool's soft rules, by name, and one matcher over their regexes.
type toolRules struct {
	rules []*compiledRule
	match textMatcher
	gates bool // some rule is in mode interrupt: calls are judged before they run (gate.go)
}

// ruleSet is immutable once built; a reload swaps in a new one.
type ruleSet struct {
	all    []*compiledRule // by name
	byTool map[string]*toolRules
	text   []*compiledRule // by name
	match  textMatcher
	// textByPattern lists the plain, positive text rules by their pattern in match;
	// textOthers the other text rules (see missedOn).
	textByPattern [][]*compiledRule
	textOthers    []*compiledRule
	early         *earlySet     // the early text rules; nil: none
	disabled      int           // disabled rows the store returned
	skipped       []SkippedRule // enabled rows not loaded, in the order they were judged

	gates    []*compiledRule // the live tool rules in mode interrupt, by name (gate.go)
	anyGates bool            // some tool rule is in mode interrupt, live or in shadow

	thinking thinkingSet // the thinking rules (thinking.go)
}

// compile builds the rule set of the stored rows. prev is the set in force (nil: none, a
// cold compile): its matchers' automatons are the base of the new ones.
func (e *Engine) compile(rules []Rule, prev *ruleSet) *ruleSet {
	set := &ruleSet{byTool: map[string]*toolRules{}}
	e.overlaid = false
	// Analyses are cached by condition text: an edit re-analyses what changed only.
	next := make(analysisCache, len(e.analyses))
	check, cost := e.analyses.check(next), e.analyses.cost(next)
	sorted := e.enabledByName(set, rules)
	reused := reusable(prev, sorted)
	var todo []string
	for i := range sorted {
		if reused[i] == nil {
			regexesOf(&sorted[i], func(p string) { todo = append(todo, p) })
		}
	}
	e.analyses.prefetch(next, todo)
	var plan []*compiledRule // early rules new or changed: their plan is to be made
	for i, r := range sorted {
		p := reused[i]
		if p == nil {
			err := validate(&r, e.environments, check, cost)
			if err == nil {
				// Validation checks the forms the group's matcher compiles; this asks the
				// matcher's own question of each, so a rule that passed one and fails the
				// other is skipped alone, never its whole group.
				err = e.compiles(&r, next)
			}
			if err != nil {
				e.skipRule(set, r, err, "bad", "stream rule skipped: bad rule in store", true)
				continue
			}
		}
		if r.Shell && e.shell() == nil {
			e.skipRule(set, r, errNoShellReader(), "shell", "stream rule skipped: no shell reader", true)
			continue
		}
		if n := len(set.all); n > 0 && set.all[n-1].Name == r.Name { // sorted: a duplicate follows its first
			e.skipRule(set, r, ErrNameTaken, "dup", "stream rule skipped: duplicate name in store", false)
			continue
		}
		if c := e.place(set, r, p); c != nil {
			plan = append(plan, c)
		}
	}
	// Each plan compiles its rule's regexp: on every core when there are many.
	if !inParallel(len(plan), func(i int) { plan[i].early = planEarly(&plan[i].Rule) }) {
		for _, c := range plan {
			c.early = planEarly(&c.Rule)
		}
	}
	e.compileMatchers(set, next, prev)
	e.analyses = next
	return set
}

// enabledByName returns the enabled rows, normalized and sorted by name; disabled rows are
// counted in set and rows with a bad stored name skipped.
func (e *Engine) enabledByName(set *ruleSet, rules []Rule) []Rule {
	// Normalize before sorting: a hand-edited name " zed" sorts as "zed", so the rule set,
	// the reminders, the verdicts and the stats stay in rule-name order.
	sorted := make([]Rule, 0, len(rules))
	for _, r := range rules {
		if r.Disabled {
			set.disabled++
			continue
		}
		// The name is taken exactly as stored: a hand-typed " good_tool" or "Good_tool" is
		// not good_tool, and must never run in its place (nor be edited or deleted by its
		// name). Normalizing it first would let a padded row displace the real rule.
		if err := checkStoredName(r.Name); err != nil {
			e.skipRule(set, r, err, "bad", "stream rule skipped: bad rule in store", true)
			continue
		}
		r.Normalize() // When becomes a new slice: the caller's rows are not touched
		sorted = append(sorted, r)
	}
	byName := func(i, j int) bool { return sorted[i].Name < sorted[j].Name }
	if !sort.SliceIsSorted(sorted, byName) { // stores return rows by name
		sort.SliceStable(sorted, byName)
	}
	return sorted
}

// reusable returns, for each of sorted, the compiled rule of prev it can reuse, or nil.
// A row the set in force holds as it is now was valid, and what was derived from it still
// holds: only what depends on the other rows (its place, the group's patterns) is done
// again. Both lists are sorted by name.
func reusable(prev *ruleSet, sorted []Rule) []*compiledRule {
	reused := make([]*compiledRule, len(sorted))
	if prev == nil {
		return reused
	}
	all := prev.all
	for i, r := range sorted {
		for len(all) > 0 && all[0].Name < r.Name {
			all = all[1:]
		}
		if len(all) > 0 && all[0].Name == r.Name && sameRule(all[0].Rule, r) {
			reused[i] = all[0]
		}
	}
	return reused
}

// skipRule leaves r out of set for err and logs msg once per row version (kind keys the
// warning: see firstWarning); withErr: the line carries err.
func (e *Engine) skipRule(set *ruleSet, r Rule, err error, kind, msg string, withErr bool) {
	set.skip(r, err)
	if !e.firstWarning(kind, r) {
		return
	}
	if withErr {
		e.log.Warn(msg, "rule", r.Name, "id", r.ID, "err", err)
	} else {
		e.log.Warn(msg, "rule", r.Name, "id", r.ID)
	}
}

// place compiles r (reusing p's derived parts when p is not nil) and adds it to its group
// in set. It returns the rule when its early plan is still to be made, else nil.
func (e *Engine) place(set *ruleSet, r Rule, p *compiledRule) *compiledRule {
	c := &compiledRule{Rule: r}
	c.deliveryPlan = planDelivery(&c.Rule)
	if p != nil {
		c.repeat, c.when, c.shadow, c.early, c.fix = p.repeat, p.when, p.shadow, p.early, p.fix
		c.release = p.release
	} else {
		c.repeat, _ = ParseRepeat(r.Repeat)
		c.when = e.envMask(r.When)
		c.shadow = r.Shadow || e.shadow
	}
	set.all = append(set.all, c)
	if tool := r.Tool(); tool != "" {
		tr := set.byTool[tool]
		if tr == nil {
			tr = &toolRules{}
			set.byTool[tool] = tr
		}
		tr.rules = append(tr.rules, c)
		if r.Mode == ModeInterrupt {
			tr.gates, set.anyGates = true, true
			if !c.shadow {
				set.gates = append(set.gates, c)
			}
		}
		return nil
	}
	if r.Scope == ScopeThinking {
		return placeThinking(set, c, p) // thinking.go
	}
	c.index = len(set.text)
	set.text = append(set.text, c)
	if c.release == nil {
		c.release = &lazyRelease{}
	}
	if (r.Early || e.earlyAll) && !c.shadow && p == nil { // a shadowed rule never cuts
		if why := earlyNever(&r); why != "" && r.Early && e.firstWarning("early", r) {
			e.log.Warn("stream rule: early has no effect on this rule; it is judged at the end", "rule", r.Name, "why", why)
		}
		return c
	}
	return nil
}

// compileMatchers builds set's matchers, the text group's, its early set and each tool's,
// each on its counterpart in prev.
func (e *Engine) compileMatchers(set *ruleSet, next analysisCache, prev *ruleSet) {
	var prevText textMatcher
	if prev != nil {
		prevText = prev.match
	}
	set.match = e.compileGroup(set.text, next, prevText, prev)
	set.indexText()
	var prevEarly *earlySet
	if prev != nil {
		prevEarly = prev.early
	}
	set.early = e.compileEarly(set.text, prevEarly)
	for tool, tr := range set.byTool {
		var prevTool textMatcher
		if prev != nil && prev.byTool[tool] != nil {
			prevTool = prev.byTool[tool].match
		}
		tr.match = e.compileGroup(tr.rules, next, prevTool, prev)
	}
	e.compileThinking(set, next, prev) // thinking.go
}

// firstWarning reports whether this bad row, in this version, has not been logged yet.
// Reloads come with every change notification and every backstop tick; one warning per
// row version keeps the log readable. Callers hold reloadMu (compile runs under it).
func (e *Engine) firstWarning(kind string, r Rule) bool {
	key := fmt.Sprintf("%s/%d/%s/%d", kind, r.ID, r.Name, r.UpdatedAt.UnixNano())
	if e.warned[key] {
		return false
	}
	if e.warned == nil {
		e.warned = map[string]bool{}
	}
	e.warned[key] = true
	return true
}

// indexText fills the set's index of the text rules by plain pattern (see missedOn).
func (s *ruleSet) indexText() {
	s.textByPattern, s.textOthers = nil, nil
	for _, r := range s.text {
		pat := r.plain
		if r.Negate || r.own != nil || (pat >= 0 && r.applies != nil) {
			pat = -1
		}
		if pat < 0 && !r.Negate && r.own == nil {
			pat = r.requiredPattern() // a tree that cannot hold without one pattern (context.go)
		}
		if pat < 0 {
			s.textOthers = append(s.textOthers, r)
			continue
		}
		for len(s.textByPattern) <= pat {
			s.textByPattern = append(s.textByPattern, nil)
		}
		s.textByPattern[pat] = append(s.textByPattern[pat], r)
	}
}

// ruleByName returns the set's rule named name, or nil.
func (s *ruleSet) ruleByName(name string) *compiledRule {
	i, ok := slices.BinarySearchFunc(s.all, name, func(c *compiledRule, n string) int { return strings.Compare(c.Name, n) })
	if !ok {
		return nil
	}
	return s.all[i]
}
