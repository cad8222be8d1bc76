package streamrules

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/streamrules/streamrules/internal/configtest"
)

func emptyStore(t *testing.T) *MemoryStore {
	t.Helper()
	st, err := NewMemoryStore(nil, testEnvs...)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestConfigRejects(t *testing.T) {
	t.Parallel()
	st := emptyStore(t)
	many := make([]string, maxEnvironments)
	for i := range many {
		many[i] = fmt.Sprintf("env_%d", i)
	}
	configtest.Refuses(t, "streamrules: ", []configtest.Case[Config]{
		{Field: "ToolResultMaxChars", Config: Config{ToolResultMaxChars: -1}},
		{Field: "ReminderBudget", Config: Config{ReminderBudget: -1}},
		{Field: "StoreTimeout", Config: Config{StoreTimeout: -time.Second}},
		{Field: "Environments", Config: Config{Environments: []string{"Voice"}}},
		{Field: "Environments", Config: Config{Environments: many}},
	}, func(c *Config) error {
		eng, err := New(context.Background(), st, c)
		if err == nil {
			eng.Close()
		}
		return err
	})
}

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	d := (*Config)(nil).WithDefaults()
	if d.MaxRetriesPerMove != 1 || d.StoreTimeout != defaultStoreTimeout || d.Logger != slog.Default() {
		t.Errorf("nil.WithDefaults() = %+v", d)
	}
	if err := d.validate(); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}
	// Set values and "off" stay; the receiver is not touched; a second pass changes nothing.
	quiet := slog.New(slog.DiscardHandler)
	in := &Config{MaxRetriesPerMove: -1, StoreTimeout: time.Minute, Logger: quiet, Environments: []string{"voice"}}
	orig := *in
	orig.Environments = []string{"voice"}
	d = in.WithDefaults()
	if d.MaxRetriesPerMove != -1 || d.StoreTimeout != time.Minute || d.Logger != quiet {
		t.Errorf("WithDefaults changed set values: %+v", d)
	}
	if !reflect.DeepEqual(*in, orig) {
		t.Errorf("WithDefaults changed its receiver: %+v", *in)
	}
	d.Environments[0] = "other"
	if in.Environments[0] != "voice" {
		t.Error("WithDefaults shares Environments with its receiver")
	}
	if again := d.WithDefaults(); !reflect.DeepEqual(again.Environments, d.Environments) || again.MaxRetriesPerMove != d.MaxRetriesPerMove || again.StoreTimeout != d.StoreTimeout || again.Logger != d.Logger {
		t.Errorf("WithDefaults is not idempotent: %+v then %+v", d, again)
	}
}

// The engine runs with exactly what WithDefaults gives: no second default elsewhere.
func TestNewUsesWithDefaults(t *testing.T) {
	t.Parallel()
	st := emptyStore(t)
	for _, cfg := range []*Config{nil, {MaxRetriesPerMove: -1}, {MaxRetriesPerMove: 3, StoreTimeout: time.Second}} {
		eng, err := New(context.Background(), st, cfg)
		if err != nil {
			t.Fatal(err)
		}
		d := cfg.WithDefaults()
		if eng.storeTimeout != d.StoreTimeout || eng.maxRetries != max(d.MaxRetriesPerMove, 0) || eng.log != d.Logger {
			t.Errorf("%+v: engine has timeout %s, retries %d; WithDefaults says %+v", cfg, eng.storeTimeout, eng.maxRetries, d)
		}
		eng.Close()
	}
}
