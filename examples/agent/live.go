package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/ruletools"
	"github.com/streamrules/streamrules/seeds"
)

// defaultBaseURL is the OpenAI endpoint used when OPENAI_BASE_URL is empty. It is always
// passed explicitly, so llms/openai never picks up a stray OPENAI_BASE_URL of its own.
const defaultBaseURL = "https://api.openai.com/v1"

// runLive talks to a real model: each line on stdin is a move in the -env environments;
// the answer streams to stdout. It ends at the end of stdin, printing the stats.
func runLive(ctx context.Context, cfg Config, opts options, log *slog.Logger, stdin io.Reader, w io.Writer) error {
	token, base := cfg.OpenAIAPIKey, cfg.OpenAIBaseURL
	if token == "" {
		token = "none" // a local server (Ollama, vLLM) needs no key, but the client wants one
	}
	if base == "" {
		base = defaultBaseURL
	}
	// The guard's Transport lets its retries see the HTTP status and Retry-After.
	llm, err := openai.New(openai.WithToken(token), openai.WithBaseURL(base), openai.WithModel(cfg.OpenAIModel),
		openai.WithHTTPClient(&http.Client{Transport: middleware.Transport(nil)}))
	if err != nil {
		return fmt.Errorf("OPENAI_*: %w", err)
	}
	r, err := openRig(ctx, cfg, opts.chat, log, w)
	if err != nil {
		return err
	}
	defer r.Close()
	ts := append(r.box.Tools(), ruletools.Reader(r.eng)) // any move reads a manifest rule
	if slices.Contains(opts.env, seeds.EnvMaster) {
		ts = append(ts, ruletools.New(r.store, r.eng)...) // the master edits the rules
	}
	if err := r.wire(&namedModel{Model: llm, about: fmt.Sprintf("model %s at %s", cfg.OpenAIModel, base)}, ts); err != nil {
		return err
	}
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name()
	}
	fmt.Fprintf(w, "live: model %s at %s\nenvironment of every move: %s\ntools: %s\n",
		cfg.OpenAIModel, base, strings.Join(opts.env, ", "), strings.Join(names, ", "))
	fmt.Fprintf(w, "type a message and press Enter; end with Ctrl-D\n")

	from := "the user"
	if slices.Contains(opts.env, seeds.EnvMaster) {
		from = "the master"
	}
	lines := readLines(ctx, stdin)
	moves, failed := 0, 0
	for {
		fmt.Fprint(w, "\nyou> ")
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			fmt.Fprintln(w)
			return ctx.Err()
		case line, ok = <-lines:
		}
		if !ok {
			fmt.Fprintln(w)
			break
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		// A failed move is printed in the transcript, and the chat goes on.
		moves++
		if _, err := r.play(ctx, from, opts.env, line, false); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			failed++
		}
	}
	if err := r.printStats(ctx); err != nil {
		return err
	}
	if moves > 0 && failed == moves {
		// Nothing worked: a script or a newcomer must see it in the exit code.
		return errors.Join(fmt.Errorf("every move failed (%d of %d); the errors are above", failed, moves), r.Close())
	}
	return r.Close()
}

// namedModel puts the model's name and URL on its errors: llms/openai says only
// "network error: failed to reach API server", which does not tell where it went.
type namedModel struct {
	llms.Model
	about string // "model M at URL"
}

func (m *namedModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	resp, err := m.Model.GenerateContent(ctx, msgs, options...)
	if err != nil && ctx.Err() == nil {
		err = fmt.Errorf("%s: %w", m.about, err)
	}
	return resp, err
}

func (m *namedModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// readLines sends stdin's lines on a channel, closed at the end of input, so a move loop
// can also watch its context.
func readLines(ctx context.Context, in io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			select {
			case ch <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}
