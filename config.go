package streamrules

import (
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// defaultStoreTimeout is Config.StoreTimeout's default: long enough for a loaded database
// far away, short beside a model's answer.
const defaultStoreTimeout = 2 * time.Second

// maxEnvironments is how many environment names an engine knows, BuiltinEnvironments
// included: a rule's `when` is a bit set in one uint64.
const maxEnvironments = 64

// WithDefaults returns a copy of c with every zero field that has a default set to it
// (a nil c gives all defaults). Negative values are left for validate to refuse, or,
// where negative means off (MaxRetriesPerMove), kept. New calls it once; hosts may call
// it to see what an engine will run with.
func (c *Config) WithDefaults() *Config {
	if c == nil {
		c = &Config{}
	}
	d := *c
	d.Environments = slices.Clone(c.Environments)
	if d.MaxRetriesPerMove == 0 {
		d.MaxRetriesPerMove = 1
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.StoreTimeout == 0 {
		d.StoreTimeout = defaultStoreTimeout
	}
	return &d
}

// validate checks a Config that WithDefaults returned; each error names the field.
func (c *Config) validate() error {
	if c.ToolResultMaxChars < 0 {
		return fmt.Errorf("streamrules: ToolResultMaxChars %d is negative", c.ToolResultMaxChars)
	}
	if c.ReminderBudget < 0 {
		return fmt.Errorf("streamrules: ReminderBudget %d is negative", c.ReminderBudget)
	}
	if c.StoreTimeout < 0 {
		return fmt.Errorf("streamrules: StoreTimeout %s is negative", c.StoreTimeout)
	}
	for _, name := range c.Environments {
		if !ValidName(name) {
			return fmt.Errorf("streamrules: Environments: name %q must match [a-z][a-z0-9_]*", name)
		}
	}
	if n := len(BuiltinEnvironments) + len(c.Environments); n > maxEnvironments {
		return fmt.Errorf("streamrules: Environments: %d environments with the builtin ones, at most %d", n, maxEnvironments)
	}
	return nil
}
