package middleware_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/seeds"
)

// boundRig is an engine with the image rule, a Guard with the given boundaries on a fake
// clock, and LangChainGo's real openai client on a local server.
type boundRig struct {
	*rig
	guard *middleware.Guard
	clk   *middleware.FakeClock
	srv   *openaitest.Server
	llm   llms.Model
	// arrived gets each request's number as the server takes it up.
	arrived chan int
}

func newBoundRig(t *testing.T, cfg middleware.Config, withTransport bool, replies ...scripted.Reply) *boundRig {
	t.Helper()
	r := newRig(t, nil, imageRule())
	clk := middleware.NewFakeClock()
	middleware.SetClock(&cfg, clk)
	arrived := make(chan int, 100)
	next := scripted.Sequence(replies...)
	srv := openaitest.NewFunc(t, func(req openaitest.Request) scripted.Reply {
		arrived <- req.N
		if reply, ok := next(); ok {
			return reply
		}
		return scripted.Reply{Err: errors.New("no reply left")}
	})
	var opts []openai.Option
	if withTransport {
		opts = append(opts, openai.WithHTTPClient(&http.Client{Transport: middleware.Transport(nil)}))
	}
	g := newGuard(t, r.eng, &cfg)
	return &boundRig{rig: r, guard: g, clk: clk, srv: srv, llm: g.Model(srv.LLM(t, opts...)), arrived: arrived}
}

type callResult struct {
	text string
	err  error
}

// call runs one tour in a move (telegram: the image rule is armed and speech held, unless
// held is false) and returns at once; the result comes on the channel.
func (b *boundRig) call(held bool, stream func(context.Context, []byte) error) (<-chan callResult, *streamrules.Move) {
	env := []string{}
	if held {
		env = append(env, seeds.EnvTelegram)
	}
	// Cancelled when the test ends: a test that fails while the call still waits on a
	// stalled server ends the call, so the server's Close does not wait for it.
	ctx, cancel := context.WithCancel(context.Background())
	b.t.Cleanup(cancel)
	ctx, move := b.eng.BeginMove(ctx, "chat-b", env...)
	ctx = middleware.AgentTour(ctx, middleware.FormatToolCalling)
	done := make(chan callResult, 1)
	go func() {
		opts := []llms.CallOption{}
		if stream != nil {
			opts = append(opts, llms.WithStreamingFunc(stream))
		}
		resp, err := b.llm.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}, opts...)
		var text string
		if err == nil {
			text = resp.Choices[0].Content
		}
		done <- callResult{text, err}
	}()
	return done, move
}

// timer waits for the next timer the code starts.
func (b *boundRig) timer(t *testing.T) *middleware.FakeTimer {
	t.Helper()
	select {
	case tm := <-b.clk.Timers:
		return tm
	case <-time.After(10 * time.Second):
		t.Fatal("no timer started")
		return nil
	}
}

// request waits until the server has taken up request n.
func (b *boundRig) request(t *testing.T, n int) {
	t.Helper()
	select {
	case got := <-b.arrived:
		if got != n {
			t.Fatalf("request %d arrived, want %d", got, n)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("request %d never arrived", n)
	}
}

func wait(t *testing.T, ch <-chan callResult) callResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not return")
		return callResult{}
	}
}

// nextBeat waits for the next heartbeat: a beat that never comes fails the test at once,
// not at go test's timeout.
func nextBeat(t *testing.T, beats <-chan middleware.Heartbeat) middleware.Heartbeat {
	t.Helper()
	select {
	case h := <-beats:
		return h
	case <-time.After(10 * time.Second):
		t.Fatal("no heartbeat")
		return middleware.Heartbeat{}
	}
}

func noMoreTimers(t *testing.T, b *boundRig) {
	t.Helper()
	select {
	case tm := <-b.clk.Timers:
		t.Errorf("unexpected timer %v", tm.D)
	default:
	}
}

var unavailable = &openaitest.StatusError{Code: 503, Type: "server_error", Message: "overloaded"}

// TestRetry503TwiceThenOK: two 503s are retried with exponential backoff and jitter, the
// third answer is accepted, and the move's rule retry is untouched. With and without the
// Transport (without it, the status comes from the client's error text).
func TestRetry503TwiceThenOK(t *testing.T) {
	t.Parallel()
	for _, tr := range []bool{true, false} {
		b := newBoundRig(t, middleware.Config{CallRetries: 3, RetryDelay: time.Second}, tr,
			scripted.Reply{Err: unavailable}, scripted.Reply{Err: unavailable}, scripted.Reply{Text: "fine", Chunk: 2})
		var shown strings.Builder
		done, move := b.call(true, func(_ context.Context, c []byte) error { shown.Write(c); return nil })
		for i, base := range []time.Duration{time.Second, 2 * time.Second} {
			tm := b.timer(t)
			if tm.D < base*3/4 || tm.D >= base*5/4 {
				t.Errorf("transport %v: backoff %d is %v, want %v ±25%%", tr, i, tm.D, base)
			}
			tm.Fire()
		}
		res := wait(t, done)
		if res.err != nil || res.text != "fine" {
			t.Fatalf("transport %v: %q %v", tr, res.text, res.err)
		}
		if n := len(b.srv.Requests()); n != 3 {
			t.Errorf("transport %v: %d requests, want 3", tr, n)
		}
		if shown.String() != "fine" {
			t.Errorf("transport %v: client saw %q", tr, shown.String())
		}
		if !move.Armed() {
			t.Errorf("transport %v: the transport retries spent the move's retry", tr)
		}
		noMoreTimers(t, b)
	}
}

// TestRetryAfterHonoured: a 429's Retry-After replaces the backoff; one longer than
// RetryMaxDelay is not retried.
func TestRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	limited := func(after string) scripted.Reply {
		return scripted.Reply{Err: &openaitest.StatusError{Code: 429, Type: "rate_limit_exceeded", Message: "slow down", RetryAfter: after}}
	}
	b := newBoundRig(t, middleware.Config{CallRetries: 2}, true, limited("7"), scripted.Reply{Text: "ok"})
	done, _ := b.call(false, nil)
	if tm := b.timer(t); tm.D != 7*time.Second {
		t.Errorf("waited %v, want the Retry-After 7s", tm.D)
	} else {
		tm.Fire()
	}
	if res := wait(t, done); res.err != nil || res.text != "ok" {
		t.Fatalf("%q %v", res.text, res.err)
	}

	b = newBoundRig(t, middleware.Config{CallRetries: 2, RetryMaxDelay: time.Minute}, true, limited("3600"), scripted.Reply{Text: "ok"})
	done, _ = b.call(false, nil)
	res := wait(t, done)
	if res.err == nil || !strings.Contains(res.err.Error(), "429") {
		t.Fatalf("err %v, want the 429", res.err)
	}
	if n := len(b.srv.Requests()); n != 1 {
		t.Errorf("%d requests: a Retry-After over RetryMaxDelay was retried", n)
	}
	noMoreTimers(t, b)
}

// Test400NotRetried: a client error is returned at once.
func Test400NotRetried(t *testing.T) {
	t.Parallel()
	for _, held := range []bool{true, false} {
		b := newBoundRig(t, middleware.Config{CallRetries: 3}, true,
			scripted.Reply{Err: &openaitest.StatusError{Code: 400, Type: "invalid_request_error", Message: "bad"}}, scripted.Reply{Text: "ok"})
		res := wait(t, first(b.call(held, nil)))
		if res.err == nil || !strings.Contains(res.err.Error(), "400") {
			t.Fatalf("held %v: err %v", held, res.err)
		}
		if n := len(b.srv.Requests()); n != 1 {
			t.Errorf("held %v: %d requests, want 1", held, n)
		}
		noMoreTimers(t, b)
	}
}

func first(ch <-chan callResult, _ *streamrules.Move) <-chan callResult { return ch }

// TestStallTimesOutAndRetries: a server that never answers is cut by the per-call timeout
// and the request is made again; without retries the timeout is the error.
func TestStallTimesOutAndRetries(t *testing.T) {
	t.Parallel()
	stall := scripted.Reply{Delay: time.Hour}
	b := newBoundRig(t, middleware.Config{CallTimeout: time.Minute, CallRetries: 1}, true, stall, scripted.Reply{Text: "late but fine"})
	done, _ := b.call(true, nil)
	if tm := b.timer(t); tm.D != time.Minute {
		t.Fatalf("first timer %v, want the call timeout", tm.D)
	} else {
		b.request(t, 0) // the server is stalling on it
		tm.Fire()
	}
	b.timer(t).Fire() // the backoff
	timeout2 := b.timer(t)
	res := wait(t, done)
	if res.err != nil || res.text != "late but fine" {
		t.Fatalf("%q %v", res.text, res.err)
	}
	if !timeout2.Stopped() {
		t.Error("the second call's timer was not stopped")
	}
	reqs := b.srv.Requests()
	if len(reqs) != 2 || reqs[0].Complete {
		t.Errorf("%d requests, first complete %v", len(reqs), reqs[0].Complete)
	}

	b = newBoundRig(t, middleware.Config{CallTimeout: time.Minute}, true, stall)
	done, _ = b.call(false, nil)
	tm := b.timer(t)
	b.request(t, 0)
	tm.Fire()
	if res := wait(t, done); !errors.Is(res.err, middleware.ErrCallTimeout) {
		t.Fatalf("err %v, want ErrCallTimeout", res.err)
	}
}

// TestDropMidStream: a connection lost after the client saw chunks is not retried; a held
// tour (nothing shown) is, and the client sees the whole answer once.
func TestDropMidStream(t *testing.T) {
	t.Parallel()
	const text = "a long answer that goes on and on"
	// How the call is made when its chunks reach the client: in a move that holds nothing,
	// or outside a move.
	shownCalls := map[string]func(b *boundRig, stream func(context.Context, []byte) error) <-chan callResult{
		"shown": func(b *boundRig, stream func(context.Context, []byte) error) <-chan callResult {
			return first(b.call(false, stream))
		},
		"shown outside a move": func(b *boundRig, stream func(context.Context, []byte) error) <-chan callResult {
			done := make(chan callResult, 1)
			go func() {
				_, err := b.llm.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")},
					llms.WithStreamingFunc(stream))
				done <- callResult{err: err}
			}()
			return done
		},
	}
	for name, call := range shownCalls {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := newBoundRig(t, middleware.Config{CallRetries: 3}, true,
				scripted.Reply{Text: text, Chunk: 4, DropAfter: 4}, scripted.Reply{Text: text})
			var shown strings.Builder
			res := wait(t, call(b, func(_ context.Context, c []byte) error { shown.Write(c); return nil }))
			if !errors.Is(res.err, io.ErrUnexpectedEOF) {
				t.Fatalf("err %v, want an unexpected EOF", res.err)
			}
			if shown.Len() == 0 {
				t.Fatal("the client saw nothing: the test needs chunks shown before the drop")
			}
			if n := len(b.srv.Requests()); n != 1 {
				t.Errorf("%d requests: a call whose chunks were shown was retried", n)
			}
			noMoreTimers(t, b)
		})
	}
	t.Run("held", func(t *testing.T) {
		t.Parallel()
		b := newBoundRig(t, middleware.Config{CallRetries: 3}, false,
			scripted.Reply{Text: text, Chunk: 4, DropAfter: 4}, scripted.Reply{Text: text, Chunk: 4})
		var shown strings.Builder
		done, _ := b.call(true, func(_ context.Context, c []byte) error { shown.Write(c); return nil })
		b.timer(t).Fire()
		if res := wait(t, done); res.err != nil || res.text != text {
			t.Fatalf("%q %v", res.text, res.err)
		}
		if shown.String() != text {
			t.Errorf("client saw %q", shown.String())
		}
		if n := len(b.srv.Requests()); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
	})
}

// TestHeartbeat: while a call runs, OnHeartbeat is called every period with the elapsed
// time and the attempt; it stops with the call.
func TestHeartbeat(t *testing.T) {
	t.Parallel()
	beats := make(chan middleware.Heartbeat, 10)
	cfg := middleware.Config{CallTimeout: time.Minute, Heartbeat: 10 * time.Second,
		OnHeartbeat: func(_ context.Context, h middleware.Heartbeat) { beats <- h }}
	b := newBoundRig(t, cfg, true, scripted.Reply{Delay: time.Hour})
	done, _ := b.call(true, nil)
	hb, timeout := b.timer(t), b.timer(t)
	if hb.D != 10*time.Second || timeout.D != time.Minute {
		t.Fatalf("timers %v %v", hb.D, timeout.D)
	}
	hb.Fire()
	if got := nextBeat(t, beats); got.Elapsed != 10*time.Second || got.Attempt != 1 {
		t.Errorf("heartbeat %+v", got)
	}
	next := b.timer(t) // re-armed
	if next.D != 10*time.Second {
		t.Fatalf("next heartbeat in %v", next.D)
	}
	timeout.Fire()
	if res := wait(t, done); !errors.Is(res.err, middleware.ErrCallTimeout) {
		t.Fatalf("err %v", res.err)
	}
	if !next.Stopped() {
		t.Error("the heartbeat outlived the call")
	}
	if next.Fire() {
		t.Error("a stopped heartbeat fired")
	}
	select {
	case h := <-beats:
		t.Errorf("beat after the call: %+v", h)
	default:
	}
}

// TestHeartbeatAcrossRetries: a beat during a retry counts the attempts begun so far, and
// its Elapsed runs from the call's start, the failed attempt and the backoff included.
func TestHeartbeatAcrossRetries(t *testing.T) {
	t.Parallel()
	beats := make(chan middleware.Heartbeat, 10)
	cfg := middleware.Config{CallTimeout: time.Minute, CallRetries: 1, Heartbeat: 10 * time.Minute,
		OnHeartbeat: func(_ context.Context, h middleware.Heartbeat) { beats <- h }}
	stall := scripted.Reply{Delay: time.Hour}
	b := newBoundRig(t, cfg, true, stall, stall)
	done, _ := b.call(true, nil)
	hb, timeout := b.timer(t), b.timer(t)
	b.request(t, 0)
	timeout.Fire()
	backoff := b.timer(t)
	backoff.Fire()
	timeout2 := b.timer(t)
	b.request(t, 1)
	hb.Fire()
	if got, want := nextBeat(t, beats), (middleware.Heartbeat{Elapsed: timeout.D + backoff.D + hb.D, Attempt: 2}); got != want {
		t.Errorf("heartbeat %+v, want %+v", got, want)
	}
	next := b.timer(t)
	timeout2.Fire()
	if res := wait(t, done); !errors.Is(res.err, middleware.ErrCallTimeout) {
		t.Fatalf("err %v, want ErrCallTimeout", res.err)
	}
	if !next.Stopped() {
		t.Error("the heartbeat outlived the call")
	}
	if n := len(b.srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}
