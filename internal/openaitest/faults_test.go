package openaitest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
)

// TestDropAfterCutsTheStream: the client has seen the first chunks, then reads a body
// that ends without [DONE]; the server records how far it got.
func TestDropAfterCutsTheStream(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, scripted.Reply{Text: "one two three four five six", Chunk: 4, DropAfter: 3})
	var c collector
	_, err := srv.LLM(t).GenerateContent(context.Background(),
		[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}, llms.WithStreamingFunc(c.Func))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err %v, want an unexpected EOF", err)
	}
	if got := strings.Join(c.chunks, ""); got != "one two " {
		t.Errorf("client saw %q before the drop", got)
	}
	req := srv.Requests()[0]
	if req.Streamed != 3 || req.Complete {
		t.Errorf("streamed %d complete %v", req.Streamed, req.Complete)
	}
}

// TestPacedStreamStopsWhenTheClientLeaves: a paced stream the client cancels is not sent
// to its end.
func TestPacedStreamStopsWhenTheClientLeaves(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("word ", 1000)
	srv := openaitest.New(t, scripted.Reply{Text: text, Chunk: 5, Pace: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	_, _ = srv.LLM(t).GenerateContent(ctx,
		[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")},
		llms.WithStreamingFunc(func(context.Context, []byte) error {
			if n++; n == 10 {
				cancel()
			}
			return nil
		}))
	// The handler may still be writing a chunk or two; it stops at its next tick.
	req := srv.Requests()[0]
	if req.Complete || req.Streamed >= 1000 {
		t.Errorf("streamed %d complete %v: the paced stream ran to its end", req.Streamed, req.Complete)
	}
}

// TestRetryAfterHeader: a StatusError with RetryAfter sends the header.
func TestRetryAfterHeader(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, scripted.Reply{Err: &openaitest.StatusError{Code: 429, Type: "rate_limit_exceeded", Message: "slow down", RetryAfter: "7"}})
	resp, err := http.Post(srv.URL+openaitest.ChatPath, "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// No Authorization header: the server answers 401 first, without the script.
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+openaitest.ChatPath, strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer x")
	resp2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	if resp2.StatusCode != 429 || resp2.Header.Get("Retry-After") != "7" {
		t.Errorf("status %d Retry-After %q", resp2.StatusCode, resp2.Header.Get("Retry-After"))
	}
}
