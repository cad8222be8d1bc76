package middleware_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
)

// TestEmptyChunkIsNotShown: the openai client passes empty chunks to the streaming func
// (the role delta) before any text; the client saw nothing, so a connection lost right
// after them is retried and the client gets the whole answer of the retry.
func TestEmptyChunkIsNotShown(t *testing.T) {
	t.Parallel()
	b := newBoundRig(t, middleware.Config{CallRetries: 1}, true,
		scripted.Reply{Text: "lost", Chunk: 4, DropAfter: 1}, scripted.Reply{Text: "fine", Chunk: 2})
	var (
		mu     sync.Mutex
		chunks []string
	)
	done, _ := b.call(false, func(_ context.Context, c []byte) error {
		mu.Lock()
		chunks = append(chunks, string(c))
		mu.Unlock()
		return nil
	})
	b.timer(t).Fire() // the backoff before the retry
	res := wait(t, done)
	if res.err != nil || res.text != "fine" {
		t.Fatalf("%q %v: a drop after empty chunks only was not retried", res.text, res.err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(chunks) == 0 || chunks[0] != "" {
		t.Fatalf("chunks %q: the test needs an empty chunk before the drop", chunks)
	}
	if got := strings.Join(chunks, ""); got != "fine" {
		t.Errorf("client saw %q, want %q", got, "fine")
	}
	if n := len(b.srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// TestRetryAfterZero: "Retry-After: 0" means retry now: no wait, not the backoff.
func TestRetryAfterZero(t *testing.T) {
	t.Parallel()
	limited := scripted.Reply{Err: &openaitest.StatusError{Code: 429, Type: "rate_limit_exceeded", Message: "slow down", RetryAfter: "0"}}
	b := newBoundRig(t, middleware.Config{CallRetries: 1, RetryDelay: time.Minute}, true, limited, scripted.Reply{Text: "ok"})
	done, _ := b.call(false, nil)
	if tm := b.timer(t); tm.D != 0 {
		t.Errorf("waited %v before the retry, want the Retry-After 0s", tm.D)
		tm.Fire()
	} else {
		tm.Fire()
	}
	if res := wait(t, done); res.err != nil || res.text != "ok" {
		t.Fatalf("%q %v", res.text, res.err)
	}
	if n := len(b.srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}
