package streamrules

import "slices"

// Rule returns the rule named name as the move sees it (the rule set in force when the
// move began), for telemetry that describes a firing (its severity, its text).
func (m *Move) Rule(name string) (Rule, bool) {
	c := m.set.ruleByName(name)
	if c == nil {
		return Rule{}, false
	}
	r := c.Rule
	r.When = slices.Clone(c.When)
	return r, true
}
