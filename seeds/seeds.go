package seeds

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/streamrules/streamrules/rulefile"
)

// Set is a versioned rule set to seed a store with: the rule file format's set.
type Set = rulefile.Set

//go:embed seeds.json
var defaultJSON []byte

// DefaultJSON returns the embedded seed file, as Default parses it.
func DefaultJSON() []byte { return bytes.Clone(defaultJSON) }

// Default returns the seeded rule set shipped with streamrules: ten chronic misses: two
// soft, six hard on the answer, one on the model's reasoning, one gate on shell calls.
func Default() (Set, error) {
	set, err := Parse(defaultJSON)
	if err != nil {
		return Set{}, fmt.Errorf("seeds: embedded seeds.json: %w", err)
	}
	return set, nil
}

// MustDefault is Default for a store's configuration, rulesdb.Config{Seed:
// seeds.MustDefault()}: a fresh copy of the shipped set each call. The embedded file is
// checked by this package's tests, so it panics only on a build that broke it.
func MustDefault() *Set {
	set, err := Default()
	if err != nil {
		panic(err)
	}
	return &set
}

// Load reads and parses a seed file: a rule set in JSON or YAML (see package rulefile).
// environments are the host's environment names that `when` may use beside the builtins.
// Errors name the file, the line, the rule and the field.
func Load(path string, environments ...string) (Set, error) {
	return rulefile.Load(path, environments...)
}

// Parse parses a seed file: {"version": N, "rules": [...]}, in JSON or YAML, with
// rulefile.Parse. It rejects unknown fields, a missing or non-positive version, duplicate
// names, and every rule that streamrules.Validate rejects (with the builtin environments
// plus environments); the error is a *rulefile.Error naming the rule and the field, and
// wraps the rule's *streamrules.ValidationError.
func Parse(data []byte, environments ...string) (Set, error) {
	return rulefile.Parse(data, environments...)
}
