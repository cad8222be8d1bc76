package middleware_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/internal/testlog"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/seeds"
)

// The call timer fires between the early cut and the attempt's return: the cut is
// recorded (retry spent, rule silent) but bounds.call turns the attempt into a timeout and
// retries the same request with no interrupt; the bad answer passes unchecked.
func TestInterplayCutThenTimeout(t *testing.T) {
	bad, _ := doomed(0)
	bad.ToolCalls = nil
	const good = "Here it is: https://x/c.png"
	clk := middleware.NewFakeClock()
	stop := make(chan struct{})
	defer close(stop) // the backoff firer ends with the test
	store, _ := streamrules.NewMemoryStore([]streamrules.Rule{earlyImageRule()}, seeds.Environments()...)
	eng, err := streamrules.New(context.Background(), store, &streamrules.Config{
		Logger: slog.New(slog.NewTextHandler(&testlog.Buffer{}, nil)),
		OnFire: func(context.Context, streamrules.Firing) {
			tm := <-clk.Timers // attempt 1's timeout timer
			tm.Fire()
			go fireBackoffs(clk, stop)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv := openaitest.NewFunc(t, func(req openaitest.Request) scripted.Reply {
		if strings.Contains(requestText(t, req), "system-interrupt") {
			return scripted.Reply{Text: good, Chunk: 5}
		}
		return bad
	})
	cfg := middleware.Config{CallTimeout: time.Minute, CallRetries: 2, RetryDelay: time.Second}
	middleware.SetClock(&cfg, clk)
	g := newGuard(t, eng, &cfg)
	llm := g.Model(srv.LLM(t))
	ctx, move := eng.BeginMove(context.Background(), "chat-ct", "telegram")
	ctx = middleware.AgentTour(ctx, middleware.FormatToolCalling)
	var shown strings.Builder
	resp, err := llm.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "cat?")},
		llms.WithStreamingFunc(func(_ context.Context, c []byte) error { shown.Write(c); return nil }))
	move.End(ctx, err)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(resp.Choices[0].Content, "![cat]") || strings.Contains(shown.String(), "![cat]") {
		t.Errorf("the violating answer was accepted: %d requests; firings %+v", len(srv.Requests()), move.Firings())
	}
}

// fireBackoffs fires every timer but the call timeouts (a minute) until stop is closed,
// or no timer came for 3s.
func fireBackoffs(clk *middleware.FakeClock, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case tm := <-clk.Timers:
			if tm.D != time.Minute {
				tm.Fire()
			}
		case <-time.After(3 * time.Second):
			return
		}
	}
}
