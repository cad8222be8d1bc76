package middleware_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamrules/streamrules/internal/streamrulestest"
	"github.com/streamrules/streamrules/seeds"

	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
)

// chunkCounter sits between the guard and the provider and counts the provider's
// chunks, so the client's func can tell at which provider chunk each of its own came.
type chunkCounter struct {
	llms.Model
	mu sync.Mutex
	n  int // provider chunks of the current call
}

func (c *chunkCounter) GenerateContent(ctx context.Context, ms []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var opts llms.CallOptions
	for _, o := range options {
		o(&opts)
	}
	c.mu.Lock()
	c.n = 0
	c.mu.Unlock()
	if f := opts.StreamingFunc; f != nil {
		options = append(options, llms.WithStreamingFunc(func(ctx context.Context, chunk []byte) error {
			c.mu.Lock()
			c.n++
			c.mu.Unlock()
			return f(ctx, chunk)
		}))
	}
	return c.Model.GenerateContent(ctx, ms, options...)
}

func (c *chunkCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// clientChunk is one chunk the client got, and the provider's chunk count then.
type clientChunk struct {
	text string
	at   int
}

// streamSeeded plays one move of a Telegram chat with no picture, the six seeded rules
// armed and message_id 4711 set, through a tool-calling agent over llm (wrapped in a
// chunk counter), and returns the output and the client's chunks.
//
// The user says "hi": no audio was asked for, so unbacked_tool_claim does not apply and
// its context folds it away. Where it applies and is unbacked, no prefix of a Telegram
// reply is final (TestReleaseHeldWhileClaimUnbacked).
func streamSeeded(t *testing.T, llm llms.Model, cfg *streamrules.Config) (string, []clientChunk, *rig) {
	t.Helper()
	return streamSeededWith(t, llm, cfg, "hi", false)
}

func streamSeededWith(t *testing.T, llm llms.Model, cfg *streamrules.Config, input string, speechMade bool) (string, []clientChunk, *rig) {
	t.Helper()
	r := newRig(t, cfg, allSeedRules(t)...)
	counter := &chunkCounter{Model: llm}
	exec, _ := r.executor(kindFunctions, counter)
	ctx, move := r.eng.BeginMove(context.Background(), "tg-1", seeds.EnvTelegram)
	move.SetVar("message_id", "4711")
	if speechMade {
		move.ToolReminders(ctx, "generate_speech", `{"text":"hi"}`)
	}
	var mu sync.Mutex
	var got []clientChunk
	stream := chains.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
		mu.Lock()
		got = append(got, clientChunk{string(chunk), counter.count()})
		mu.Unlock()
		return nil
	})
	out, err := chains.Call(ctx, exec, map[string]any{"input": input}, stream)
	if err = move.End(ctx, err); err != nil {
		t.Fatal(err)
	}
	s, _ := out["output"].(string)
	return s, got, r
}

func joined(cs []clientChunk) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.text)
	}
	return b.String()
}

// compliant2K is a compliant Telegram reply of about 2 KB.
func compliant2K() string {
	return strings.Repeat("The weather in Paris is mild today, with a light breeze. ", 36) + "\n\n↩ #4711"
}

// TestReleaseCompliantStreams: the measurement, in 8-byte chunks, through the
// scripted streaming model and through LangChainGo's openai client against a local
// server: the client's first chunk comes within 4 provider chunks of the first, at
// least 95 % of the bytes come before the provider's last chunk, and what the client got
// is the answer, byte for byte.
func TestReleaseCompliantStreams(t *testing.T) {
	t.Parallel()
	text := compliant2K()
	reply := scripted.Reply{Text: text, Chunk: 8}
	for _, tt := range []struct {
		name string
		llm  func(t *testing.T) llms.Model
	}{
		{"scripted", func(*testing.T) llms.Model { return scripted.New(reply) }},
		{"openai", func(t *testing.T) llms.Model { return openaitest.New(t, reply).LLM(t) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var infos []streamrules.SpeechInfo
			var mu sync.Mutex
			cfg := &streamrules.Config{OnSpeech: func(s streamrules.SpeechInfo) { mu.Lock(); infos = append(infos, s); mu.Unlock() }}
			out, got, _ := streamSeeded(t, tt.llm(t), cfg)
			if out != text || joined(got) != text {
				t.Fatalf("output %q\nclient %q", out, joined(got))
			}
			total := len(scripted.SplitChunks(text, 8))
			before := 0
			for _, c := range got {
				if c.at < total {
					before += len(c.text)
				}
			}
			t.Logf("%d provider chunks; client's first at provider chunk %d; %d client chunks; %.1f%% before the last",
				total, got[0].at, len(got), 100*float64(before)/float64(len(text)))
			if got[0].at > 4 {
				t.Errorf("client's first chunk came at provider chunk %d of %d", got[0].at, total)
			}
			if before*100 < 95*len(text) {
				t.Errorf("%d of %d bytes before the provider's last chunk", before, len(text))
			}
			mu.Lock()
			defer mu.Unlock()
			if len(infos) != 1 || infos[0].HeldBytes != len(text) || infos[0].ReleasedEarlyBytes < before || !infos[0].Visible || infos[0].Discarded {
				t.Errorf("speech info %+v", infos)
			}
		})
	}
}

// TestReleaseHeldWhileClaimUnbacked: in a tour where the user asked for audio and no
// generate_speech call succeeded, unbacked_tool_claim is live, and no prefix of a
// Telegram reply is final: whatever came first, "aud![x](io) saved: y" may follow (the
// image's repair makes the claim, which discards the answer). The compliant reply
// reaches the client whole, at the end.
func TestReleaseHeldWhileClaimUnbacked(t *testing.T) {
	t.Parallel()
	text := compliant2K()
	out, got, _ := streamSeededWith(t, scripted.New(scripted.Reply{Text: text, Chunk: 8}), nil, "Send the team a voice message, please.", false)
	if out != text || joined(got) != text {
		t.Fatalf("output %q\nclient %q", out, joined(got))
	}
	if n := len(scripted.SplitChunks(text, 8)); got[0].at < n {
		t.Errorf("client's first chunk at provider chunk %d of %d: released while the claim could still be made", got[0].at, n)
	}
}

// TestReleaseMissingTail: a reply without its tail streams whole and gets the tail
// appended at the end by the fix.
func TestReleaseMissingTail(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("No tail on this one, but plenty of words. ", 20) + "\n"
	out, got, r := streamSeeded(t, scripted.New(scripted.Reply{Text: text, Chunk: 8}), nil)
	want := strings.TrimSpace(text) + "\n\n↩ #4711"
	if out != want || joined(got) != want {
		t.Fatalf("output %q\nclient %q", out, joined(got))
	}
	if got[0].at > 4 || !strings.HasSuffix(got[len(got)-1].text, "↩ #4711") {
		t.Errorf("first chunk at provider chunk %d; last chunk %q", got[0].at, got[len(got)-1].text)
	}
	if f := r.store.AllFirings(); len(f) != 1 || f[0].Rule != "telegram_reply_tail" || f[0].Outcome != streamrules.OutcomeFixed {
		t.Errorf("firings %+v", f)
	}
}

// TestReleaseImage: a markdown image in the middle: the text before it streams, the
// image reaches the client as its plain link, and nothing of the raw image is ever sent.
func TestReleaseImage(t *testing.T) {
	t.Parallel()
	head := strings.Repeat("Here is the cat you asked about, in all its glory. ", 10)
	text := head + "![cat](https://x/c.png) and that is all.\n\n↩ #4711"
	out, got, _ := streamSeeded(t, scripted.New(scripted.Reply{Text: text, Chunk: 8}), nil)
	want := head + "https://x/c.png and that is all.\n\n↩ #4711"
	if out != want || joined(got) != want {
		t.Fatalf("output %q\nclient %q", out, joined(got))
	}
	headChunks := len(scripted.SplitChunks(head, 8))
	streamed := 0
	for _, c := range got {
		if strings.Contains(c.text, "![") {
			t.Errorf("the raw image reached the client: %q", c.text)
		}
		if c.at <= headChunks+1 {
			streamed += len(c.text)
		}
	}
	if got[0].at > 4 || streamed < len(head)-8 {
		t.Errorf("first chunk at provider chunk %d; %d of the %d bytes before the image streamed before it", got[0].at, streamed, len(head))
	}
}

// TestReleaseBareEmoji: a bare emoji is never shown: it is discarded unseen and the
// replay's answer is what the client gets.
func TestReleaseBareEmoji(t *testing.T) {
	t.Parallel()
	const good = "Glad you liked it!\n\n↩ #4711"
	out, got, _ := streamSeeded(t, scripted.New(scripted.Reply{Text: "👍", Chunk: 1}, scripted.Reply{Text: good, Chunk: 8}), nil)
	if out != good || joined(got) != good {
		t.Fatalf("output %q\nclient %q", out, joined(got))
	}
	for _, c := range got {
		if strings.Contains(c.text, "👍") {
			t.Fatalf("the emoji was shown: %q", c.text)
		}
	}
}

// TestReleaseToolCallsOpenAI: an answer that says something and declares a tool call,
// through LangChainGo's openai client: the text streams as it becomes final, and what the
// client gets in all is what pass-through would have sent (the text, then the tool
// call's JSON fragments as they came).
func TestReleaseToolCallsOpenAI(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("Let me look that up for you, one moment please. ", 8) + "\n\n↩ #4711"
	call := toolCall("shell", `{"__arg1":"date"}`)
	reply := func() scripted.Reply {
		return scripted.Reply{Text: text, Chunk: 8, ToolCalls: []llms.ToolCall{call}}
	}
	final := "Done.\n\n↩ #4711"
	collect := func(env ...string) (string, int) {
		srv := openaitest.New(t, reply(), scripted.Reply{Text: final, Chunk: 8})
		r := newRig(t, nil, allSeedRules(t)...)
		counter := &chunkCounter{Model: srv.LLM(t)}
		exec, _ := r.executor(kindFunctions, counter, &echoTool{name: "shell"})
		ctx, move := r.eng.BeginMove(context.Background(), "tg", env...)
		move.SetVar("message_id", "4711")
		move.ToolReminders(ctx, "generate_speech", `{"text":"hi"}`) // the claim is backed
		var mu sync.Mutex
		var b strings.Builder
		first := -1
		stream := chains.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
			mu.Lock()
			defer mu.Unlock()
			if first < 0 && len(chunk) > 0 {
				first = counter.count()
			}
			b.Write(chunk)
			return nil
		})
		_, err := chains.Call(ctx, exec, map[string]any{"input": "what time is it"}, stream)
		if err = move.End(ctx, err); err != nil {
			t.Fatal(err)
		}
		return b.String(), first
	}
	passed, _ := collect()                    // no Telegram: no text rule can fire, pass-through
	held, first := collect(seeds.EnvTelegram) // the Telegram rules armed
	if held != passed {
		t.Errorf("client got\n%q\npass-through gives\n%q", held, passed)
	}
	if !strings.HasPrefix(held, text) || first > 4 {
		t.Errorf("first chunk at provider chunk %d; client got %q", first, held)
	}
}

// TestEarlyTreeOpenAI: the second defect, as a user met it. An early text rule
// whose condition is a tree (any_of of two contains_regex, not negated, no anchor, no fix)
// used to stream the doomed answer to its last chunk and be discarded at the end: now the
// provider is stopped shortly after the miss, nothing reaches the client, and the replay's
// answer is what it gets.
func TestEarlyTreeOpenAI(t *testing.T) {
	t.Parallel()
	bad, text := doomed(200 * time.Microsecond)
	tree := streamrules.AnyOf(streamrules.Contains(`!\[[^\]]*\]\([^)\s]+\)`), streamrules.Contains(`(?i)\bas an ai\b`))
	rule := streamrules.Rule{Name: "no_images_no_ai", Scope: "text", Predicate: &tree, Text: "No images.", Early: true}
	const good = "Here it is: https://x/c.png"
	r := newRig(t, nil, rule)
	srv := openaitest.New(t, bad, scripted.Reply{Text: good, Chunk: 5})
	exec, _ := r.executor(kindFunctions, srv.LLM(t), &echoTool{name: "shell"})
	out, _, err := r.run(context.Background(), exec, "chat-tree", "show the cat")
	if err != nil {
		t.Fatal(err)
	}
	if out != good {
		t.Fatalf("output %q", out)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Complete || reqs[0].Streamed > 400 {
		t.Fatalf("%d requests; the doomed one streamed %d of 1,000 chunks (complete %v)", len(reqs), reqs[0].Streamed, reqs[0].Complete)
	}
	f := r.store.AllFirings()
	at := strings.Index(text, ")") + 1
	if len(f) != 1 || !f[0].Early || f[0].CutAtBytes < at || f[0].CutAtBytes > at+2*streamrulestest.EarlyBatchBytes {
		t.Fatalf("firings %+v (miss ends at byte %d)", f, at)
	}
	if got := strings.Join(r.rec.streamed(), ""); got != good {
		t.Errorf("client stream %q", got)
	}
}
