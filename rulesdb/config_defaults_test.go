package rulesdb

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/streamrules/streamrules/internal/configtest"
)

// Open refuses what validate refuses, before it touches the DSN (TestOpenErrors,
// TestOpenUsesWithDefaults).
func TestConfigRejects(t *testing.T) {
	t.Parallel()
	configtest.Refuses(t, "rulesdb: ", []configtest.Case[Config]{
		{Field: "Environments", Config: Config{Environments: []string{"Bad Name"}}},
		{Field: "ReloadMode", Config: Config{ReloadMode: "listen"}},
		{Field: "MaxOpenConns", Config: Config{MaxOpenConns: -1}},
		{Field: "StatRetention", Config: Config{StatRetention: Retention(-time.Hour)}},
		{Field: "QueueSize", Config: Config{QueueSize: -1}},
		{Field: "WriteTimeout", Config: Config{WriteTimeout: -time.Second}},
		{Field: "FlushTimeout", Config: Config{FlushTimeout: -time.Second}},
		{Field: "BatchSize", Config: Config{BatchSize: -1}},
		{Field: "ChatCacheTTL", Config: Config{ChatCacheTTL: -time.Second}},
	}, func(c *Config) error { return c.WithDefaults().validate() })
}

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	d := (*Config)(nil).WithDefaults()
	want := Config{
		DefaultSQLitePath: defaultSQLitePath, ReloadMode: ReloadNotify, ReloadInterval: defaultReloadInterval,
		QueueSize: defaultQueueSize, WriteTimeout: defaultWriteTimeout, FlushTimeout: defaultFlushTimeout,
		BatchSize: defaultBatchSize, BatchDelay: defaultBatchDelay,
	}
	if d.Logger != slog.Default() {
		t.Errorf("Logger %v, want slog.Default()", d.Logger)
	}
	d.Logger = nil
	if d.DefaultSQLitePath != want.DefaultSQLitePath || d.ReloadMode != want.ReloadMode || d.ReloadInterval != want.ReloadInterval ||
		d.QueueSize != want.QueueSize || d.WriteTimeout != want.WriteTimeout || d.FlushTimeout != want.FlushTimeout ||
		d.BatchSize != want.BatchSize || d.BatchDelay != want.BatchDelay || d.MaxOpenConns != 0 {
		t.Errorf("nil.WithDefaults() = %+v, want %+v", d, want)
	}
	if err := d.validate(); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}
	if p := (&Config{ReloadMode: ReloadPoll}).WithDefaults(); p.ReloadInterval != defaultPollInterval {
		t.Errorf("poll mode: ReloadInterval %s, want %s", p.ReloadInterval, defaultPollInterval)
	}
	// "Off" stays off, set values stay, the receiver is not touched, a second pass changes nothing.
	in := &Config{ReloadInterval: -1, BatchDelay: -1, QueueSize: 7, Environments: []string{"voice"}}
	d = in.WithDefaults()
	if d.ReloadInterval != -1 || d.BatchDelay != -1 || d.QueueSize != 7 {
		t.Errorf("WithDefaults changed set values: %+v", d)
	}
	if in.DefaultSQLitePath != "" || in.ReloadMode != "" || in.Logger != nil || in.WriteTimeout != 0 {
		t.Errorf("WithDefaults changed its receiver: %+v", in)
	}
	d.Environments[0] = "other"
	if in.Environments[0] != "voice" {
		t.Error("WithDefaults shares Environments with its receiver")
	}
	again := d.WithDefaults()
	if again.ReloadInterval != d.ReloadInterval || again.BatchDelay != d.BatchDelay || again.QueueSize != d.QueueSize ||
		again.WriteTimeout != d.WriteTimeout || again.DefaultSQLitePath != d.DefaultSQLitePath || again.Logger != d.Logger {
		t.Errorf("WithDefaults is not idempotent: %+v then %+v", d, again)
	}
}

// The store runs with exactly what WithDefaults gives: no second default elsewhere.
func TestOpenUsesWithDefaults(t *testing.T) {
	t.Parallel()
	cfg := &Config{QueueSize: 5, Logger: slog.New(slog.DiscardHandler)}
	s, err := Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "d.db"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := cfg.WithDefaults()
	if s.wq.max != d.QueueSize || s.wq.writeTimeout != d.WriteTimeout || s.wq.flushTimeout != d.FlushTimeout ||
		s.wq.batchSize != d.BatchSize || s.wq.batchDelay != d.BatchDelay || s.log != d.Logger {
		t.Errorf("store: queue %d, write %s, flush %s, batch %d after %s; WithDefaults says %+v",
			s.wq.max, s.wq.writeTimeout, s.wq.flushTimeout, s.wq.batchSize, s.wq.batchDelay, d)
	}
}
