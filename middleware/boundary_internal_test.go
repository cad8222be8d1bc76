package middleware

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"
)

// TestRetryDelayTable: which failures are retried, and after how long (the README's table).
func TestRetryDelayTable(t *testing.T) {
	t.Parallel()
	b := newBoundaries((&Config{CallRetries: 1, RetryDelay: time.Second, RetryMaxDelay: 10 * time.Second}).WithDefaults())
	b.jitter = func() float64 { return 0.5 } // no jitter: exactly the base
	b.clock = NewFakeClock()
	now := b.clock.Now()
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	tests := []struct {
		name  string
		err   error
		rec   attemptRecord
		retry bool
		wait  time.Duration
	}{
		{name: "our timeout", err: &timeoutError{after: time.Minute}, retry: true, wait: time.Second},
		{name: "connection reset", err: fmt.Errorf("wrapped: %w", reset), retry: true, wait: time.Second},
		{name: "refused", err: &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, retry: true, wait: time.Second},
		{name: "cut mid-stream", err: fmt.Errorf("error reading streaming response: %w", io.ErrUnexpectedEOF), retry: true, wait: time.Second},
		{name: "reset seen by the transport", err: errors.New("request failed"), rec: attemptRecord{netErr: reset}, retry: true, wait: time.Second},
		{name: "503 in the text", err: errors.New("API returned unexpected status code: 503: overloaded"), retry: true, wait: time.Second},
		{name: "500 from the transport", err: errors.New("x"), rec: attemptRecord{status: 500}, retry: true, wait: time.Second},
		{name: "429 with Retry-After seconds", err: errors.New("x"), rec: attemptRecord{status: 429, retryAfter: "4"}, retry: true, wait: 4 * time.Second},
		{name: "429 with Retry-After date", err: errors.New("x"), rec: attemptRecord{status: 429, retryAfter: now.Add(3 * time.Second).Format(http1123)}, retry: true, wait: 3 * time.Second},
		{name: "429 Retry-After over the cap", err: errors.New("x"), rec: attemptRecord{status: 429, retryAfter: "60"}},
		{name: "400", err: errors.New("API returned unexpected status code: 400: bad")},
		{name: "401 from the transport", err: errors.New("x"), rec: attemptRecord{status: 401}},
		{name: "404", err: errors.New("x"), rec: attemptRecord{status: 404}},
		{name: "rate limit code", err: llms.NewError(llms.ErrCodeRateLimit, "p", "slow"), retry: true, wait: time.Second},
		{name: "content filter code", err: llms.NewError(llms.ErrCodeContentFilter, "p", "no")},
		{name: "caller cancelled", err: context.Canceled},
		{name: "something else", err: errors.New("streaming func returned an error: boom")},
	}
	for i := range tests {
		tt := &tests[i]
		wait, retry := b.retryDelay(0, tt.err, &tt.rec)
		if retry != tt.retry || retry && wait != tt.wait {
			t.Errorf("%s: retry %v after %v, want %v after %v", tt.name, retry, wait, tt.retry, tt.wait)
		}
	}
}

const http1123 = "Mon, 02 Jan 2006 15:04:05 GMT"

// TestBackoff: doubling from RetryDelay, ±25 % jitter, capped.
func TestBackoff(t *testing.T) {
	t.Parallel()
	b := newBoundaries((&Config{RetryDelay: time.Second, RetryMaxDelay: 5 * time.Second}).WithDefaults())
	for _, j := range []float64{0, 0.5, 0.999} {
		b.jitter = func() float64 { return j }
		for n, base := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second} {
			got := b.backoff(n)
			lo, hi := base*3/4, min(base*5/4, 5*time.Second)
			if got < lo || got > hi {
				t.Errorf("jitter %v retry %d: %v, want in [%v, %v]", j, n, got, lo, hi)
			}
		}
	}
}
