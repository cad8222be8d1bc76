package middleware

import (
	"fmt"
	"time"
)

// The defaults of Config's retry waits.
const (
	defaultRetryDelay    = time.Second
	defaultRetryMaxDelay = 30 * time.Second
)

// WithDefaults returns a copy of c with every zero field that has a default set to it
// (a nil c gives all defaults). Negative values are left for New to refuse. New calls it
// once; hosts may call it to see what a Guard will run with.
func (c *Config) WithDefaults() *Config {
	if c == nil {
		c = &Config{}
	}
	d := *c
	if d.RetryDelay == 0 {
		d.RetryDelay = defaultRetryDelay
	}
	if d.RetryMaxDelay == 0 {
		d.RetryMaxDelay = defaultRetryMaxDelay
	}
	if d.clock == nil {
		d.clock = realClock{}
	}
	return &d
}

// validate checks a Config that WithDefaults returned; each error names the field.
func (c *Config) validate() error {
	for _, f := range []struct {
		name string
		v    time.Duration
	}{
		{"CallTimeout", c.CallTimeout},
		{"RetryDelay", c.RetryDelay},
		{"RetryMaxDelay", c.RetryMaxDelay},
		{"Heartbeat", c.Heartbeat},
	} {
		if f.v < 0 {
			return fmt.Errorf("middleware: %s %s is negative", f.name, f.v)
		}
	}
	if c.CallRetries < 0 {
		return fmt.Errorf("middleware: CallRetries %d is negative", c.CallRetries)
	}
	return nil
}
