package middleware

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/tmc/langchaingo/llms"
)

// Runtime boundaries of a provider call (seed 001): a per-call timeout, transport retries
// with exponential backoff, and a heartbeat. LangChainGo's providers do none of this for
// an agent loop. All of it is off by default (see Config).
//
// A transport retry is not a rule retry: it replays the same request because the first
// one never produced an answer (a timeout, a dropped connection, an overloaded provider),
// and it does not spend the move's retry. It is never made once a chunk of that call has
// reached the client: the client would see the answer twice. A held tour has shown
// nothing, so it may always be retried.

// ErrCallTimeout is returned (wrapped) when a provider call ran past Config.CallTimeout
// and was not retried.
var ErrCallTimeout = errors.New("middleware: model call timed out")

// errTimeout is the cause a call's context is cancelled with when its timer fires.
var errTimeout = errors.New("middleware: call timeout")

// Heartbeat is what Config.OnHeartbeat is told while a model call runs.
type Heartbeat struct {
	// Elapsed is the time since the call began, its retries and backoff waits included.
	Elapsed time.Duration
	// Attempt is how many provider requests this call has begun so far (1 until a retry).
	Attempt int
}

// clock is the time source of the boundaries; tests drive their own.
type clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d; stop reports whether it stopped f
	// from being called.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// boundaries is Config's runtime part, defaults applied.
type boundaries struct {
	timeout     time.Duration
	retries     int
	delay, max  time.Duration
	every       time.Duration
	onHeartbeat func(context.Context, Heartbeat)
	clock       clock
	jitter      func() float64 // in [0,1)
}

// newBoundaries takes a Config that WithDefaults returned and validate passed.
func newBoundaries(cfg *Config) boundaries {
	b := boundaries{
		timeout: cfg.CallTimeout, retries: cfg.CallRetries,
		delay: cfg.RetryDelay, max: cfg.RetryMaxDelay,
		clock: cfg.clock, jitter: rand.Float64,
	}
	if cfg.Heartbeat > 0 && cfg.OnHeartbeat != nil {
		b.every, b.onHeartbeat = cfg.Heartbeat, cfg.OnHeartbeat
	}
	return b
}

func (b *boundaries) on() bool { return b.timeout > 0 || b.retries > 0 || b.every > 0 }

// attemptFunc makes one provider request. shown reports whether any of its chunks reached
// the client (then it must never be retried).
type attemptFunc func(ctx context.Context) (resp *llms.ContentResponse, shown bool, err error)

// call runs attempt within the boundaries. Whatever the provider returned, when ctx has
// ended the result is ctx's error: the openai client answers a cancelled stream with the
// part it had and a nil error, and a cut answer must never pass for a whole one.
func (b *boundaries) call(ctx context.Context, attempt attemptFunc) (*llms.ContentResponse, error) {
	if !b.on() {
		resp, _, err := attempt(ctx)
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return resp, err
	}
	hb := b.heartbeat(ctx)
	defer hb.stop()
	for {
		hb.next()
		rec := &attemptRecord{}
		actx := context.WithValue(ctx, attemptKey{}, rec)
		var timedOut func() bool
		if b.timeout > 0 {
			var cancel context.CancelCauseFunc
			actx, cancel = context.WithCancelCause(actx)
			stop := b.clock.AfterFunc(b.timeout, func() { cancel(errTimeout) })
			timedOut = func() bool {
				fired := !stop()
				cancel(nil)
				return fired
			}
		}
		resp, shown, err := attempt(actx)
		if timedOut != nil && timedOut() && (resp != nil || err != nil) { // (nil, nil): cut early, final
			// A stream cut by our timer may come back as a partial answer and no error.
			resp, err = nil, &timeoutError{after: b.timeout}
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		if err == nil {
			return resp, nil
		}
		tries := hb.attempts()
		wait, ok := b.retryDelay(tries-1, err, rec)
		if !ok || shown || tries > b.retries {
			return nil, err
		}
		if err := b.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

type timeoutError struct{ after time.Duration }

func (e *timeoutError) Error() string { return ErrCallTimeout.Error() + " after " + e.after.String() }
func (e *timeoutError) Unwrap() error { return ErrCallTimeout }

// sleep waits d on the clock, or until ctx ends.
func (b *boundaries) sleep(ctx context.Context, d time.Duration) error {
	done := make(chan struct{})
	stop := b.clock.AfterFunc(d, func() { close(done) })
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		stop()
		return ctx.Err()
	}
}

// backoff is the wait before retry n (0-based): RetryDelay doubled per retry, with ±25 %
// jitter (so replicas that failed together do not come back together), capped at
// RetryMaxDelay.
func (b *boundaries) backoff(n int) time.Duration {
	d := b.delay
	for range n {
		if d >= b.max {
			break
		}
		d *= 2
	}
	d = time.Duration(float64(d) * (0.75 + 0.5*b.jitter()))
	return min(d, b.max)
}

// retryDelay says whether a failed attempt may be retried, and after how long.
// Retried: our timeout, dropped or refused connections, 429 and 5xx (Retry-After
// honoured when it is within RetryMaxDelay; a longer one is not retried, since retrying
// sooner would be refused again). Never: other 4xx, errors of the caller's own streaming
// func, anything else.
func (b *boundaries) retryDelay(n int, err error, rec *attemptRecord) (time.Duration, bool) {
	status, retryAfter, netErr := rec.get()
	if status == 0 {
		status = statusInError(err)
	}
	switch {
	case status == http.StatusTooManyRequests || status >= 500:
		if d, ok := parseRetryAfter(retryAfter, b.clock.Now()); ok {
			return d, d <= b.max
		}
		return b.backoff(n), true
	case status >= 400:
		return 0, false
	case errors.Is(err, ErrCallTimeout), transient(netErr), transient(err):
		return b.backoff(n), true
	}
	var le *llms.Error
	if errors.As(err, &le) {
		switch le.Code {
		case llms.ErrCodeRateLimit, llms.ErrCodeProviderUnavailable, llms.ErrCodeTimeout:
			return b.backoff(n), true
		}
	}
	return 0, false
}

// transient reports a connection-level failure worth another try.
func transient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// statusRE finds the HTTP status in the error text of clients that give it no other way
// (LangChainGo's openai client: "API returned unexpected status code: 503: …"). Transport
// records it exactly; this is the fallback for hosts that do not install it.
var statusRE = regexp.MustCompile(`status code: (\d{3})\b`)

func statusInError(err error) int {
	if m := statusRE.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

// parseRetryAfter reads a Retry-After header: seconds, or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// ---- the heartbeat ----

type heartbeat struct {
	b     *boundaries
	ctx   context.Context
	start time.Time
	mu    sync.Mutex
	n     int // attempts begun
	stopF func() bool
	done  bool
	beats sync.WaitGroup // callbacks under way: stop waits for them, so none comes after the call
}

// heartbeat starts calling OnHeartbeat every Config.Heartbeat until stop.
func (b *boundaries) heartbeat(ctx context.Context) *heartbeat {
	h := &heartbeat{b: b, ctx: ctx, start: b.clock.Now()}
	if b.every > 0 {
		h.arm()
	}
	return h
}

func (h *heartbeat) arm() {
	h.stopF = h.b.clock.AfterFunc(h.b.every, func() {
		h.mu.Lock()
		if h.done {
			h.mu.Unlock()
			return
		}
		beat := Heartbeat{Elapsed: h.b.clock.Now().Sub(h.start), Attempt: h.n}
		h.arm()
		h.beats.Add(1)
		h.mu.Unlock()
		defer h.beats.Done()
		h.b.onHeartbeat(h.ctx, beat)
	})
}

func (h *heartbeat) next() {
	h.mu.Lock()
	h.n++
	h.mu.Unlock()
}

func (h *heartbeat) attempts() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// stop ends the heartbeat and waits for a beat under way: no beat arrives after the
// model call has returned.
func (h *heartbeat) stop() {
	h.mu.Lock()
	h.done = true
	if h.stopF != nil {
		h.stopF()
	}
	h.mu.Unlock()
	h.beats.Wait()
}

// ---- the transport ----

// attemptRecord is what Transport saw of one provider request.
type attemptRecord struct {
	mu         sync.Mutex
	status     int
	retryAfter string
	netErr     error // the round trip's error, or a read error of the body
}

func (r *attemptRecord) get() (int, string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status, r.retryAfter, r.netErr
}

type attemptKey struct{}

// Transport wraps base (nil: http.DefaultTransport) for a provider's HTTP client, e.g.
// openai.WithHTTPClient(&http.Client{Transport: middleware.Transport(nil)}). It lets the
// model wrapper see each request's HTTP status, Retry-After header and connection errors,
// which LangChainGo's clients fold into error text or drop. Requests made outside the
// model wrapper pass through untouched.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base}
}

type transport struct{ base http.RoundTripper }

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec, _ := req.Context().Value(attemptKey{}).(*attemptRecord)
	resp, err := t.base.RoundTrip(req)
	if rec == nil {
		return resp, err
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if err != nil {
		rec.netErr = err
		return resp, err
	}
	rec.status, rec.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	resp.Body = &recordedBody{ReadCloser: resp.Body, rec: rec}
	return resp, nil
}

// recordedBody keeps a body's read error (a connection dropped mid-stream).
type recordedBody struct {
	io.ReadCloser
	rec *attemptRecord
}

func (b *recordedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.rec.mu.Lock()
		if b.rec.netErr == nil {
			b.rec.netErr = err
		}
		b.rec.mu.Unlock()
	}
	return n, err
}
