package seeds

import (
	"bytes"
	_ "embed"
	"fmt"
	"slices"

	"github.com/streamrules/streamrules/rulefile"
)

// The environments the shipped rules' `when` names. A store seeded with the default set
// lists them to the engine (rulesdb.Config{Seed: seeds.MustDefault()}); a host begins a
// move with the ones that hold: eng.BeginMove(ctx, chat, seeds.EnvTelegram).
const (
	EnvTelegram  = "telegram"   // the chat is on Telegram
	EnvClientOps = "client_ops" // the user is a client, not the master
	EnvMaster    = "master"     // the master is in the chat (ruletools edits only then)
	EnvPicture   = "picture"    // a picture is in the model's context
)

// Environments returns the four environment names of the shipped seeds, in a new slice:
// what Parse and Load check `when` against beside the host's, and what every set they
// return lists in Set.Environments.
func Environments() []string {
	return []string{EnvTelegram, EnvClientOps, EnvMaster, EnvPicture}
}

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
// environments are the host's environment names that `when` may use beside
// Environments(); the set's Environments lists both. Errors name the file, the line, the
// rule and the field.
func Load(path string, environments ...string) (Set, error) {
	return rulefile.Load(path, withSeeds(environments)...)
}

// Parse parses a seed file: {"version": N, "rules": [...]}, in JSON or YAML, with
// rulefile.Parse. It rejects unknown fields, a missing or non-positive version, duplicate
// names, and every rule that streamrules.Validate rejects (with Environments() plus
// environments, which the set's Environments lists); the error is a *rulefile.Error naming the rule and the field, and
// wraps the rule's *streamrules.ValidationError.
func Parse(data []byte, environments ...string) (Set, error) {
	return rulefile.Parse(data, withSeeds(environments)...)
}

// withSeeds is Environments() then the host's names not among them.
func withSeeds(host []string) []string {
	out := Environments()
	for _, name := range host {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
