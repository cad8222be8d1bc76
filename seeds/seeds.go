package seeds

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/streamrules/streamrules"
)

// Set is a versioned rule set to seed a store with.
type Set struct {
	// Version grows with every calibration wave; a store seeded with version N ignores
	// every set whose version is N or lower.
	Version int `json:"version"`
	// Rules are normalized and valid; Disabled only when the file said "enabled": false.
	Rules []streamrules.Rule `json:"rules"`
}

//go:embed seeds.json
var defaultJSON []byte

// DefaultJSON returns the embedded seed file, as Default parses it.
func DefaultJSON() []byte { return bytes.Clone(defaultJSON) }

// Default returns the seeded rule set shipped with streamrules: six chronic misses, two
// soft and four hard.
func Default() (Set, error) {
	set, err := Parse(defaultJSON)
	if err != nil {
		return Set{}, fmt.Errorf("embedded seeds.json: %w", err)
	}
	return set, nil
}

// Load reads and parses a seed file in the format of the embedded seeds.json.
// environments are the host's environment names that `when` may use beside the builtins.
func Load(path string, environments ...string) (Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Set{}, fmt.Errorf("seeds: %w", err)
	}
	set, err := Parse(data, environments...)
	if err != nil {
		return Set{}, fmt.Errorf("%s: %w", path, err)
	}
	return set, nil
}

// fileRule is one rule as the file spells it. Unknown fields are errors; id and the
// timestamps belong to the store, not to the seed file.
type fileRule struct {
	Name      string   `json:"name"`
	Scope     string   `json:"scope"`
	Condition string   `json:"condition"`
	Negate    bool     `json:"negate"`
	When      []string `json:"when"`
	Text      string   `json:"text"`
	Mode      string   `json:"mode"`
	Repeat    string   `json:"repeat"`
	Enabled   *bool    `json:"enabled"` // absent: true

	Predicate   *streamrules.Predicate `json:"predicate"`
	AppliesWhen *streamrules.Predicate `json:"applies_when"`
	Field       string                 `json:"field"`
	Fix         *streamrules.Fix       `json:"fix"`
	Severity    string                 `json:"severity"`
	Explanation string                 `json:"explanation"`
	Shadow      bool                   `json:"shadow"` // watched, not enforced (streamrules.Rule.Shadow)
	Early       bool                   `json:"early"`
}

type file struct {
	Version *int              `json:"version"`
	Rules   []json.RawMessage `json:"rules"`
}

// Parse parses a seed file: {"version": N, "rules": [...]}. It rejects unknown fields,
// a missing or non-positive version, duplicate names, and every rule that
// streamrules.Validate rejects (with the builtin environments plus environments);
// the error names the rule and wraps its *streamrules.ValidationError.
func Parse(data []byte, environments ...string) (Set, error) {
	var f file
	if err := decodeStrict(data, &f); err != nil {
		return Set{}, fmt.Errorf("seeds: %w", err)
	}
	if f.Version == nil {
		return Set{}, errors.New(`seeds: missing "version"`)
	}
	if *f.Version < 1 {
		return Set{}, fmt.Errorf(`seeds: "version" is %d, must be 1 or more`, *f.Version)
	}
	known := append(slices.Clone(streamrules.BuiltinEnvironments), environments...)
	set := Set{Version: *f.Version, Rules: make([]streamrules.Rule, 0, len(f.Rules))}
	seen := map[string]int{}
	for i, raw := range f.Rules {
		var fr fileRule
		if err := decodeStrict(raw, &fr); err != nil {
			return Set{}, fmt.Errorf("seeds: rule #%d%s: %w", i+1, nameHint(raw), err)
		}
		r := streamrules.Rule{
			Name: fr.Name, Scope: fr.Scope, Condition: fr.Condition, Negate: fr.Negate,
			When: fr.When, Text: fr.Text, Mode: streamrules.Mode(fr.Mode), Repeat: fr.Repeat,
			Disabled:  fr.Enabled != nil && !*fr.Enabled,
			Predicate: fr.Predicate, AppliesWhen: fr.AppliesWhen, Field: fr.Field, Fix: fr.Fix,
			Severity: fr.Severity, Explanation: fr.Explanation,
			Shadow: fr.Shadow, Early: fr.Early,
		}
		r.Normalize()
		if err := streamrules.Validate(&r, known); err != nil {
			return Set{}, fmt.Errorf("seeds: rule #%d %q: %w", i+1, r.Name, err)
		}
		if j, dup := seen[r.Name]; dup {
			return Set{}, fmt.Errorf("seeds: rule #%d %q: %w", i+1, r.Name,
				&streamrules.ValidationError{Field: "name", Reason: fmt.Sprintf("duplicate of rule #%d", j)})
		}
		seen[r.Name] = i + 1
		set.Rules = append(set.Rules, r)
	}
	return set, nil
}

// Names returns the names of the set's rules, in file order.
func (s Set) Names() []string {
	out := make([]string, len(s.Rules))
	for i, r := range s.Rules {
		out[i] = r.Name
	}
	return out
}

// Rule returns the set's rule named name.
func (s Set) Rule(name string) (streamrules.Rule, bool) {
	for _, r := range s.Rules {
		if r.Name == name {
			r.When = slices.Clone(r.When)
			return r, true
		}
	}
	return streamrules.Rule{}, false
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the JSON value")
	}
	return nil
}

// nameHint returns ` "name"` when raw has a readable name, for errors about a rule that
// did not decode.
func nameHint(raw []byte) string {
	var n struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &n) == nil && n.Name != "" {
		return fmt.Sprintf(" %q", n.Name)
	}
	return ""
}
