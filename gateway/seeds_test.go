package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/seeds"
)

// seedCase is one seeded rule acting through the gateway: what a client sends, what the
// upstream answers, what the client must get and what the upstream must have been sent.
type seedCase struct {
	rule     string
	hdr      []string // identity headers
	prompt   string
	replies  []scripted.Reply
	final    string   // the client's final answer
	thought  string   // the reasoning the client got (the accepted response's)
	calls    []string // the tool calls the client got, "name args"
	upstream int      // upstream requests in all
	check    func(t *testing.T, reqs []openaitest.Request)
}

// lastHas checks that request i's last message (from the end: back) holds s.
func lastHas(i, back int, s string) func(t *testing.T, reqs []openaitest.Request) {
	return func(t *testing.T, reqs []openaitest.Request) {
		t.Helper()
		m := reqs[i].Body.Messages
		if got := m[len(m)-1-back].Content.String(); !strings.Contains(got, s) {
			t.Errorf("upstream request %d, message %d from the end: %q lacks %q", i, back, got, s)
		}
	}
}

func seedCases() []seedCase {
	writeFile := scripted.Reply{ToolCalls: []llms.ToolCall{call("write_file", `{"path":"a.go","content":"package a"}`)}}
	return []seedCase{
		{rule: "telegram_markdown_image", hdr: []string{"X-Streamrules-Env: telegram", "X-Streamrules-Vars: message_id=3"}, prompt: "the map?",
			replies: []scripted.Reply{{Text: "See ![map](https://x/m.png) ↩ #3", Chunk: 4}}, final: "See https://x/m.png ↩ #3", upstream: 1},
		{rule: "telegram_reply_tail", hdr: []string{"X-Streamrules-Env: telegram", "X-Streamrules-Vars: message_id=8"}, prompt: "ok?",
			replies: []scripted.Reply{{Text: "Sure.", Chunk: 2}}, final: "Sure.\n\n↩ #8", upstream: 1},
		{rule: "telegram_react_not_emoji", hdr: []string{"X-Streamrules-Env: telegram", "X-Streamrules-Vars: message_id=2"}, prompt: "thanks",
			replies: []scripted.Reply{{Text: "👍"}, {Text: "You're welcome. ↩ #2", Chunk: 5}}, final: "You're welcome. ↩ #2", upstream: 2,
			check: lastHas(1, 0, `rule="telegram_react_not_emoji"`)},
		{rule: "look_before_refusing", hdr: []string{"X-Streamrules-Env: picture"}, prompt: "what is in the photo?",
			replies: []scripted.Reply{{Text: "Sorry, I can't see the image."}, {Text: "It shows a cat on a mat.", Chunk: 5}}, final: "It shows a cat on a mat.", upstream: 2,
			check: lastHas(1, 0, `rule="look_before_refusing"`)},
		{rule: "look_before_refusing_thinking", hdr: []string{"X-Streamrules-Env: picture"}, prompt: "describe the photo",
			replies: []scripted.Reply{
				{Reasoning: "The user wants the photo described. But I can't see the image, so I will say I cannot. " + strings.Repeat("Wording the apology. ", 30), Text: "I cannot tell.", Chunk: 8},
				{Reasoning: "The photo shows a cat on a mat.", Text: "It shows a cat on a mat.", Chunk: 5}},
			final: "It shows a cat on a mat.", thought: "The photo shows a cat on a mat.", upstream: 2,
			check: func(t *testing.T, reqs []openaitest.Request) {
				t.Helper()
				lastHas(1, 0, `rule="look_before_refusing_thinking"`)(t, reqs)
				if bytes.Contains(reqs[1].Raw, []byte("see the image")) || bytes.Contains(reqs[1].Raw, []byte("apology")) || bytes.Contains(reqs[1].Raw, []byte("reasoning")) {
					t.Errorf("the discarded reasoning went back upstream: %s", reqs[1].Raw)
				}
			}},
		{rule: "unbacked_tool_claim", prompt: "read it aloud please",
			replies: []scripted.Reply{{Text: "Audio saved: a.mp3", Chunk: 3}}, final: "I could not make the audio: the speech tool did not run.", upstream: 1},
		{rule: "verify_before_done", prompt: "write a.go",
			replies: []scripted.Reply{writeFile, {Text: "done"}, {Text: "Wrote a.go; run_tests has not run yet.", Chunk: 6}},
			final:   "Wrote a.go; run_tests has not run yet.", calls: []string{`write_file {"path":"a.go","content":"package a"}`}, upstream: 3,
			check: lastHas(2, 0, `rule="verify_before_done"`)},
		{rule: "write_diff_over_write_file", prompt: "write a.go",
			replies: []scripted.Reply{writeFile, {Text: "Wrote a.go."}}, final: "Wrote a.go.", calls: []string{`write_file {"path":"a.go","content":"package a"}`}, upstream: 2,
			check: lastHas(1, 0, `<system-reminder rule="write_diff_over_write_file">`)},
		{rule: "local_shell_for_his_machine", hdr: []string{"X-Streamrules-Env: client_ops"}, prompt: "list the files",
			replies: []scripted.Reply{{ToolCalls: []llms.ToolCall{call("shell", `{"cmd":"ls"}`)}}, {Text: "Listed them."}},
			final:   "Listed them.", calls: []string{`shell {"cmd":"ls"}`}, upstream: 2,
			check: lastHas(1, 0, `<system-reminder rule="local_shell_for_his_machine">`)},
		{rule: "destructive_shell", hdr: []string{"X-Streamrules-Env: client_ops"}, prompt: "free some space",
			replies: []scripted.Reply{{ToolCalls: []llms.ToolCall{call("shell", `{"cmd":"rm -rf /"}`)}}, {ToolCalls: []llms.ToolCall{call("shell", `{"cmd":"du -sh ."}`)}}, {Text: "Checked the sizes."}},
			final:   "Checked the sizes.", calls: []string{`shell {"cmd":"du -sh ."}`}, upstream: 3,
			check: lastHas(1, 0, `rule="destructive_shell"`)},
	}
}

// clientResult is what a client saw of a move.
type clientResult struct {
	Final    string `json:"final"`
	Streamed string `json:"streamed"`  // the final tour's streamed text
	Thought  string `json:"reasoning"` // the final message's reasoning (streaming: its deltas, summed)
	// StreamedThought is every reasoning delta the client got over the whole move.
	StreamedThought string   `json:"streamed_reasoning"`
	Calls           []string `json:"calls"`
	Error           string   `json:"error"`
	Usage           *struct {
		Total int `json:"total_tokens"`
	} `json:"usage"`
}

// TestSeedsEveryRuleEveryClient: each seeded rule acts through the gateway for
// LangChainGo's openai client and the official JavaScript SDK, streaming and not.
func TestSeedsEveryRuleEveryClient(t *testing.T) {
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	cases := seedCases()
	if len(cases) != len(set.Rules) {
		t.Fatalf("%d cases for %d seeded rules", len(cases), len(set.Rules))
	}
	clients := map[string]func(t *testing.T, r *rig, c seedCase, stream bool) clientResult{
		"langchaingo": runLangChainGo,
		"js":          runJS,
	}
	for _, c := range cases {
		for name, client := range clients {
			for _, stream := range []bool{false, true} {
				mode := "complete"
				if stream {
					mode = "stream"
				}
				t.Run(c.rule+"/"+name+"/"+mode, func(t *testing.T) {
					t.Parallel()
					r := newRig(t, nil, c.replies...)
					got := client(t, r, c, stream)
					if got.Error != "" {
						t.Fatalf("client error: %s", got.Error)
					}
					if got.Final != c.final {
						t.Errorf("client's final answer %q, want %q", got.Final, c.final)
					}
					if stream && got.Streamed != c.final {
						t.Errorf("client streamed %q, want %q", got.Streamed, c.final)
					}
					if got.Thought != c.thought {
						t.Errorf("client's reasoning %q, want %q", got.Thought, c.thought)
					}
					if stream && got.StreamedThought != c.thought {
						t.Errorf("client was streamed the reasoning %q, want %q", got.StreamedThought, c.thought)
					}
					if strings.Join(got.Calls, "\n") != strings.Join(c.calls, "\n") {
						t.Errorf("client's calls %q, want %q", got.Calls, c.calls)
					}
					reqs := r.up.Requests()
					if len(reqs) != c.upstream {
						t.Fatalf("upstream got %d requests, want %d", len(reqs), c.upstream)
					}
					for _, q := range reqs {
						if q.Body.Stream != stream {
							t.Errorf("upstream request %d stream=%v", q.N, q.Body.Stream)
						}
					}
					if c.check != nil {
						c.check(t, reqs)
					}
				})
			}
		}
	}
}

// runLangChainGo drives LangChainGo's openai client through one move.
func runLangChainGo(t *testing.T, r *rig, c seedCase, stream bool) clientResult {
	t.Helper()
	llm := r.llm(append([]string{"X-Streamrules-Chat: lc-" + c.rule}, c.hdr...)...)
	ctx := context.Background()
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, c.prompt)}
	var out clientResult
	var thought chunks // every reasoning delta of the move
	for tour := 0; tour < 6; tour++ {
		var ch chunks
		opts := []llms.CallOption{llms.WithTools(toolDefs)}
		if stream {
			opts = append(opts, llms.WithStreamingFunc(ch.fn), llms.WithStreamingReasoningFunc(func(ctx context.Context, r, _ []byte) error {
				return thought.fn(ctx, r)
			}))
		}
		resp, err := llm.GenerateContent(ctx, msgs, opts...)
		if err != nil {
			return clientResult{Error: err.Error()}
		}
		choice := resp.Choices[0]
		if len(choice.ToolCalls) == 0 {
			out.Final, out.Streamed, out.Thought = choice.Content, ch.text(), choice.ReasoningContent
			out.StreamedThought = thought.text()
			return out
		}
		ai := llms.MessageContent{Role: llms.ChatMessageTypeAI}
		for _, tc := range choice.ToolCalls {
			ai.Parts = append(ai.Parts, tc)
		}
		msgs = append(msgs, ai)
		for _, tc := range choice.ToolCalls {
			out.Calls = append(out.Calls, tc.FunctionCall.Name+" "+tc.FunctionCall.Arguments)
			msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
				llms.ToolCallResponse{ToolCallID: tc.ID, Name: tc.FunctionCall.Name, Content: "ok " + tc.FunctionCall.Name}}})
		}
	}
	return clientResult{Error: "no final answer in 6 tours"}
}

// jsDir holds the pinned openai package (.ci/run installs it with npm ci).
var jsDir = filepath.Join("testdata", "js")

// runJS drives the official openai SDK (Node) through one move.
func runJS(t *testing.T, r *rig, c seedCase, stream bool) clientResult {
	t.Helper()
	if _, err := os.Stat(filepath.Join(jsDir, "node_modules", "openai")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the openai npm package is not installed in %s: run npm ci there (.ci/run does)", jsDir)
		}
		t.Skipf("SKIPPING the JavaScript SDK tests: no %s/node_modules (run: cd gateway/%s && npm ci)", jsDir, jsDir)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is not installed")
		}
		t.Skip("SKIPPING the JavaScript SDK tests: no node on PATH")
	}
	hdr := map[string]string{"X-Streamrules-Chat": "js-" + c.rule}
	for _, kv := range c.hdr {
		k, v, _ := strings.Cut(kv, ":")
		hdr[k] = strings.TrimSpace(v)
	}
	hj, _ := json.Marshal(hdr)
	cmd := exec.Command(node, "client.mjs")
	cmd.Dir = jsDir
	cmd.Env = append(os.Environ(), "GATEWAY_URL="+r.srv.URL+"/v1", "GATEWAY_HEADERS="+string(hj), "PROMPT="+c.prompt)
	if stream {
		cmd.Env = append(cmd.Env, "STREAM=1")
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var out clientResult
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &out); err != nil {
		t.Fatalf("node printed %q (%v); stderr %s", stdout.String(), err, stderr.String())
	}
	return out
}
