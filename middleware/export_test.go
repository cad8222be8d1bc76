package middleware

import (
	"sync"
	"time"
)

// FakeClock drives the runtime boundaries in tests: every timer the code starts is
// sent on Timers, and fires only when the test calls Fire.
type FakeClock struct {
	Timers chan *FakeTimer
	mu     sync.Mutex
	now    time.Time
}

// NewFakeClock returns a clock at a fixed instant.
func NewFakeClock() *FakeClock {
	return &FakeClock{Timers: make(chan *FakeTimer, 1000), now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// FakeTimer is one AfterFunc the code started.
type FakeTimer struct {
	D  time.Duration
	c  *FakeClock
	f  func()
	mu sync.Mutex
	st int // 0 waiting, 1 fired, 2 stopped
}

// Fire moves the clock to the timer's deadline and runs its func, unless it was stopped.
// It reports whether it ran.
func (t *FakeTimer) Fire() bool {
	t.mu.Lock()
	if t.st != 0 {
		t.mu.Unlock()
		return false
	}
	t.st = 1
	t.mu.Unlock()
	t.c.mu.Lock()
	t.c.now = t.c.now.Add(t.D)
	t.c.mu.Unlock()
	t.f()
	return true
}

// Stopped reports whether the code stopped the timer.
func (t *FakeTimer) Stopped() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.st == 2
}

func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *FakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	t := &FakeTimer{D: d, c: c, f: f}
	c.Timers <- t
	return func() bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.st != 0 {
			return false
		}
		t.st = 2
		return true
	}
}

// SetClock makes cfg's boundaries run on c.
func SetClock(cfg *Config, c *FakeClock) { cfg.clock = c }

// IsToolChunk is isToolChunk (chunks.go), for its table and fuzz tests.
var IsToolChunk = isToolChunk
