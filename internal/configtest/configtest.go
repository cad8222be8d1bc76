package configtest

import (
	"strings"
	"testing"
)

// Case is a Config with one field spoiled, and that field's name as a user writes it.
type Case[C any] struct {
	Field  string
	Config C
}

// Refuses runs check on each case in a parallel subtest named after its field, and fails
// the subtest unless check returns an error that begins with prefix and the field's name,
// followed by a space or a colon ("rulesdb: QueueSize -1 is negative",
// "streamrules: Environments: name …").
func Refuses[C any](t *testing.T, prefix string, cases []Case[C], check func(*C) error) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Field, func(t *testing.T) {
			t.Parallel()
			err := check(&c.Config)
			if err == nil {
				t.Fatalf("%s accepted", c.Field)
			}
			if !names(err.Error(), prefix, c.Field) {
				t.Errorf("error %q does not begin with %q", err, prefix+c.Field)
			}
		})
	}
}

// names reports whether msg begins with prefix and field as a whole word.
func names(msg, prefix, field string) bool {
	rest, ok := strings.CutPrefix(msg, prefix+field)
	return ok && (strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, ":"))
}
