package middleware

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
)

func TestConfigRejects(t *testing.T) {
	t.Parallel()
	st, err := streamrules.NewMemoryStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := streamrules.New(context.Background(), st, &streamrules.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	tests := []struct {
		name  string
		cfg   Config
		field string
	}{
		{"negative call timeout", Config{CallTimeout: -time.Second}, "CallTimeout"},
		{"negative retries", Config{CallRetries: -1}, "CallRetries"},
		{"negative retry delay", Config{RetryDelay: -time.Second}, "RetryDelay"},
		{"negative retry cap", Config{RetryMaxDelay: -time.Second}, "RetryMaxDelay"},
		{"negative heartbeat", Config{Heartbeat: -time.Second, OnHeartbeat: func(context.Context, Heartbeat) {}}, "Heartbeat"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, err := New(eng, &tt.cfg)
			if err == nil || g != nil {
				t.Fatalf("New = %v, %v; want an error", g, err)
			}
			if !strings.HasPrefix(err.Error(), "middleware: "+tt.field+" ") {
				t.Errorf("error %q does not name %s", err, tt.field)
			}
		})
	}
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
