package middleware

import (
	"context"
	"testing"
	"time"

	"github.com/streamrules/streamrules/internal/configtest"
)

// New validates before it touches the engine: a nil one is never reached here.
func TestConfigRejects(t *testing.T) {
	t.Parallel()
	configtest.Refuses(t, "middleware: ", []configtest.Case[Config]{
		{Field: "CallTimeout", Config: Config{CallTimeout: -time.Second}},
		{Field: "CallRetries", Config: Config{CallRetries: -1}},
		{Field: "RetryDelay", Config: Config{RetryDelay: -time.Second}},
		{Field: "RetryMaxDelay", Config: Config{RetryMaxDelay: -time.Second}},
		{Field: "Heartbeat", Config: Config{Heartbeat: -time.Second, OnHeartbeat: func(context.Context, Heartbeat) {}}},
	}, func(c *Config) error {
		g, err := New(nil, c)
		if g != nil {
			t.Errorf("New returned a Guard with the error %v", err)
		}
		return err
	})
}

// The boundaries run on exactly what WithDefaults gives: no second default elsewhere.
func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	d := (*Config)(nil).WithDefaults()
	if d.RetryDelay != defaultRetryDelay || d.RetryMaxDelay != defaultRetryMaxDelay || d.clock != (realClock{}) {
		t.Errorf("nil.WithDefaults() = %+v", d)
	}
	b := newBoundaries(d)
	if b.delay != defaultRetryDelay || b.max != defaultRetryMaxDelay || b.clock != (realClock{}) || b.on() {
		t.Errorf("boundaries of the defaults: %+v", b)
	}
	in := &Config{CallTimeout: time.Minute, RetryDelay: 2 * time.Second, RetryMaxDelay: time.Minute}
	d = in.WithDefaults()
	if in.clock != nil || in.CallTimeout != time.Minute || in.RetryDelay != 2*time.Second || in.RetryMaxDelay != time.Minute {
		t.Errorf("WithDefaults changed its receiver: %+v", *in)
	}
	if d.RetryDelay != 2*time.Second || d.RetryMaxDelay != time.Minute || d.CallTimeout != time.Minute {
		t.Errorf("WithDefaults changed set values: %+v", d)
	}
	if again := d.WithDefaults(); again.RetryDelay != d.RetryDelay || again.RetryMaxDelay != d.RetryMaxDelay || again.CallTimeout != d.CallTimeout || again.clock != d.clock {
		t.Errorf("WithDefaults is not idempotent: %+v then %+v", d, again)
	}
}
