package streamrules_test

import (
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/enginetest"
)

// Helpers shared by the root package's external tests (package streamrules_test); those
// of its own tests are in helpers_test.go.

// quietEngine is an engine on rules (cfg nil: the defaults) that logs nothing, closed
// when the test ends.
func quietEngine(t testing.TB, cfg *streamrules.Config, rules ...streamrules.Rule) *streamrules.Engine {
	t.Helper()
	return enginetest.WithRules(t, cfg, rules...)
}

// outcomesOf is the outcomes of a move's firings, comma-separated.
func outcomesOf(m *streamrules.Move) string {
	var out []string
	for _, f := range m.Firings() {
		out = append(out, string(f.Outcome))
	}
	return strings.Join(out, ",")
}
