package rulesdb

import (
	"fmt"

	"github.com/streamrules/streamrules"
)

// A rule's tests (migration 0010): one JSON column, read back strictly like the trees.

// testsColumns are the rule columns of migration 0010, in testsValues' order.
const testsColumns = `tests`

// testsValues returns a rule's testsColumns values for an insert or update.
func testsValues(r streamrules.Rule) []any { return []any{jsonText(r.Tests)} }

// readTests fills the rule's testsColumns from a row.
func readTests(r *streamrules.Rule, tests any) error {
	if err := readJSON(asString(tests), &r.Tests); err != nil {
		return fmt.Errorf("tests: %w", err)
	}
	return nil
}

// tailValues are the values of the columns after the rule's first thirteen (or the
// seed's), in predicateColumns, deliveryColumns, testsColumns order.
func tailValues(r streamrules.Rule) []any {
	return append(append(predicateValues(r), deliveryValues(r)...), testsValues(r)...)
}
