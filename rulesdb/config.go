package rulesdb

import (
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/streamrules/streamrules"
)

// The defaults of Config that are not the write queue's (queue.go, batch.go) or the
// poller's (poll.go).
const (
	defaultSQLitePath     = "streamrules.db"
	defaultReloadInterval = 30 * time.Second // the backstop in ReloadNotify mode
)

// MaxOpenConns's default depends on the dialect, which the DSN names, not Config: Open
// picks one of these when Config.MaxOpenConns is 0.
const (
	defaultPostgresConns = 10
	defaultSQLiteConns   = 4 // writers take turns anyway
)

// WithDefaults returns a copy of c with every zero field that has a default set to it
// (a nil c gives all defaults); MaxOpenConns stays 0 when unset, its default depending on
// the DSN. Negative values are left for Open to refuse, or, where negative means off
// (ReloadInterval, BatchDelay), kept. Open calls it once; hosts may call it to see what a
// Store will run with.
func (c *Config) WithDefaults() *Config {
	if c == nil {
		c = &Config{}
	}
	d := *c
	d.Environments = slices.Clone(c.Environments)
	if d.DefaultSQLitePath == "" {
		d.DefaultSQLitePath = defaultSQLitePath
	}
	if d.ReloadMode == "" {
		d.ReloadMode = ReloadNotify
	}
	if d.ReloadInterval == 0 {
		d.ReloadInterval = defaultReloadInterval
		if d.ReloadMode == ReloadPoll {
			d.ReloadInterval = defaultPollInterval
		}
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.QueueSize == 0 {
		d.QueueSize = defaultQueueSize
	}
	if d.WriteTimeout == 0 {
		d.WriteTimeout = defaultWriteTimeout
	}
	if d.FlushTimeout == 0 {
		d.FlushTimeout = defaultFlushTimeout
	}
	if d.BatchSize == 0 {
		d.BatchSize = defaultBatchSize
	}
	if d.BatchDelay == 0 {
		d.BatchDelay = defaultBatchDelay
	}
	return &d
}

// validate checks a Config that WithDefaults returned; each error names the field.
func (c *Config) validate() error {
	for _, name := range c.Environments {
		if !streamrules.ValidName(name) {
			return fmt.Errorf("rulesdb: Environments: name %q must match [a-z][a-z0-9_]*", name)
		}
	}
	if c.ReloadMode != ReloadNotify && c.ReloadMode != ReloadPoll {
		return fmt.Errorf("rulesdb: ReloadMode %q: want %q or %q", c.ReloadMode, ReloadNotify, ReloadPoll)
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"MaxOpenConns", c.MaxOpenConns},
		{"QueueSize", c.QueueSize},
		{"BatchSize", c.BatchSize},
	} {
		if f.v < 0 {
			return fmt.Errorf("rulesdb: %s %d is negative", f.name, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{
		{"StatRetention", time.Duration(c.StatRetention)},
		{"WriteTimeout", c.WriteTimeout},
		{"FlushTimeout", c.FlushTimeout},
		{"ChatCacheTTL", c.ChatCacheTTL},
	} {
		if f.v < 0 {
			return fmt.Errorf("rulesdb: %s %s is negative", f.name, f.v)
		}
	}
	return nil
}
