package console_test

import (
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/streamrules/streamrules/console"
)

// clock is a time the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// The limit lasts its window; a session lasts its TTL.
func TestLoginWindowAndSessionExpiry(t *testing.T) {
	clk := &clock{t: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)}
	cfg := &console.Config{Password: testPassword, LoginAttempts: 2, LoginWindow: time.Minute, SessionTTL: time.Hour}
	console.SetClock(cfg, clk.now)
	fx := newFixture(t, backends[0].dsn(t), cfg)
	c := fx.client(t)
	for range 2 {
		c.post("/console/login", "/console/login", url.Values{"password": {"nope"}})
	}
	if resp, _ := c.post("/console/login", "/console/login", url.Values{"password": {testPassword}}); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third attempt: %d, want 429", resp.StatusCode)
	}
	clk.add(time.Minute)
	c.login() // the window is over
	if resp, _ := c.post("/console/rules/local_shell", "/console/rules/local_shell/state", url.Values{"action": {"shadow"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("write in session: %d", resp.StatusCode)
	}
	clk.add(time.Hour + time.Second)
	if resp, _ := c.post("/console/rules/local_shell", "/console/rules/local_shell/state", url.Values{"action": {"enforce"}}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("write after the session's TTL: %d, want 403", resp.StatusCode)
	}
	r, err := fx.store.GetRule(t.Context(), "local_shell")
	if err != nil || !r.Shadow {
		t.Errorf("shadow %v (%v): the expired session's write went through", r.Shadow, err)
	}
}
