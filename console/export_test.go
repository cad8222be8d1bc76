package console

import "time"

// SetClock makes the console built from c read the time from now.
func SetClock(c *Config, now func() time.Time) { c.now = now }
