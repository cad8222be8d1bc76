package middleware_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/middleware"
)

// cancelAfter is an HTTP transport that cancels the move's context once the client has
// read n bytes of a response body: a user who hangs up in the middle of a streamed answer.
type cancelAfter struct {
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		resp.Body = &cancelBody{ReadCloser: resp.Body, c: c}
	}
	return resp, err
}

type cancelBody struct {
	io.ReadCloser
	c    *cancelAfter
	read int
	once sync.Once
}

func (b *cancelBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.read += n; b.read >= b.c.n {
		b.once.Do(b.c.cancel)
	}
	return n, err
}

// TestCutAnswerIsAnError: LangChainGo's openai client answers a context cancelled
// mid-stream with the part it had and a nil error. Every path of the model wrapper
// (pass-through in a move, held speech, outside a move; boundaries off and on) returns
// the context's error instead, so the executor fails and the move is not counted as
// answered.
func TestCutAnswerIsAnError(t *testing.T) {
	t.Parallel()
	// 2,400 bytes in 600 paced chunks of about 200 bytes of SSE each: the cancel comes
	// after about 100 of them.
	long := strings.Repeat("lorem ipsum ", 200)
	for _, bounded := range []bool{false, true} {
		for _, path := range []string{"pass-through", "held", "outside a move"} {
			t.Run(path+map[bool]string{true: " bounded"}[bounded], func(t *testing.T) {
				t.Parallel()
				r := newRig(t, nil, imageRule())
				cfg := &middleware.Config{Callbacks: r.clean}
				if bounded {
					cfg.CallRetries, cfg.CallTimeout = 2, time.Hour
				}
				guard := newGuard(t, r.eng, cfg)
				srv := openaitest.New(t, scripted.Reply{Text: long, Chunk: 4, Pace: 200 * time.Microsecond})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				llm := srv.LLM(t, openai.WithCallback(r.clean), openai.WithHTTPClient(&http.Client{Transport: &cancelAfter{n: 20000, cancel: cancel}}))
				var streamed strings.Builder
				stream := llms.WithStreamingFunc(func(_ context.Context, c []byte) error { streamed.Write(c); return nil })
				if path == "outside a move" {
					resp, err := guard.Model(llm).GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}, stream)
					if !errors.Is(err, context.Canceled) || resp != nil {
						t.Fatalf("resp %v err %v, want context.Canceled", resp != nil, err)
					}
					if streamed.Len() == 0 || streamed.Len() >= len(long) {
						t.Errorf("streamed %d of %d bytes: the cancel was not mid-stream", streamed.Len(), len(long))
					}
					if reqs := srv.Requests(); reqs[0].Complete {
						t.Error("the stream was not cut")
					}
					return
				}
				env := map[string][]string{"pass-through": nil, "held": {"telegram"}}[path]
				a := agentsFunctions(&rig{t: t, eng: r.eng, guard: guard}, llm, nil)
				_, _, err := r.run(ctx, a, "chat-cut", "talk", env...)
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("err %v, want context.Canceled", err)
				}
				state, err := r.store.LoadChat(context.Background(), "chat-cut")
				if err != nil {
					t.Fatal(err)
				}
				if state.Moves != 0 {
					t.Errorf("the cut move was counted as answered (moves %d)", state.Moves)
				}
				// What the client saw: part of the answer when passed through, nothing of a
				// held answer that was never accepted.
				switch got := strings.Join(r.rec.streamed(), ""); {
				case path == "held" && got != "":
					t.Errorf("the held speech of a cut answer reached the client (%d bytes)", len(got))
				case path == "pass-through" && (got == "" || len(got) >= len(long)):
					t.Errorf("streamed %d of %d bytes: the cancel was not mid-stream", len(got), len(long))
				}
				if path == "held" && strings.Contains(r.rec.all(), "llm end") {
					t.Errorf("the held End event of a cut answer reached the client:\n%.300s", r.rec.all())
				}
				reqs := srv.Requests()
				if len(reqs) != 1 || reqs[0].Complete {
					t.Errorf("%d requests; the stream was not cut (complete %v)", len(reqs), len(reqs) > 0 && reqs[0].Complete)
				}
			})
		}
	}
}
