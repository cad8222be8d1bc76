package streamrules

import (
	"fmt"
	"strings"
)

// ruleError names the rule an error of this package is about (a sentinel or a
// *ValidationError), keeping errors.Is and errors.As on it, and says "streamrules:" once:
// `streamrules: rule "x": rule not found`, not `streamrules: rule "x": streamrules: …`.
type ruleError struct {
	name string
	err  error
}

func inRule(name string, err error) error { return &ruleError{name: name, err: err} }

func (e *ruleError) Error() string {
	return fmt.Sprintf("streamrules: rule %q: %s", e.name, strings.TrimPrefix(e.err.Error(), "streamrules: "))
}

func (e *ruleError) Unwrap() error { return e.err }
