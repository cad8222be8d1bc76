package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/gateway"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/seeds"
)

// seedRules returns the seeds with edit applied to the rule named.
func seedRules(t *testing.T, name string, edit func(*streamrules.Rule)) []streamrules.Rule {
	t.Helper()
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	for i := range set.Rules {
		if set.Rules[i].Name == name {
			edit(&set.Rules[i])
		}
	}
	return set.Rules
}

func ruleStat(t *testing.T, eng *streamrules.Engine, name string) streamrules.RuleStat {
	t.Helper()
	st, err := eng.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range st.Rules {
		if r.Rule == name {
			return r
		}
	}
	t.Fatalf("no stats for %s", name)
	return streamrules.RuleStat{}
}

// TestShadowGateLetsTheCallThrough: a gate in shadow lets the client have the call and
// counts a would-fire when the move ends. The test waits on the store's write (OnSave),
// never on time: stats are written when the move ends.
func TestShadowGateLetsTheCallThrough(t *testing.T) {
	saved := make(chan error, 4)
	rules := seedRules(t, "destructive_shell", func(r *streamrules.Rule) { r.Shadow = true })
	r := newRigRules(t, &streamrules.Config{OnSave: func(s streamrules.SaveInfo) { saved <- s.Err }}, rules,
		scripted.Reply{ToolCalls: []llms.ToolCall{call("shell", `{"cmd":"rm -rf /"}`)}},
		scripted.Reply{Text: "Removed."},
	)
	got := runLangChainGo(t, r, seedCase{rule: "shadow", hdr: []string{"X-Streamrules-Env: client_ops"}, prompt: "wipe it"}, false)
	if got.Error != "" || len(got.Calls) != 1 || got.Calls[0] != `shell {"cmd":"rm -rf /"}` || got.Final != "Removed." {
		t.Fatalf("client got %+v", got)
	}
	if n := len(r.up.Requests()); n != 2 {
		t.Fatalf("upstream got %d requests", n)
	}
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
	if st := ruleStat(t, r.eng, "destructive_shell"); st.Shadow != 1 || st.Fired != 0 {
		t.Fatalf("destructive_shell stats %+v, want one would-fire", st)
	}
}

// TestStreamGateRefusesAfterShownText: with the text of a response already streamed, a
// gate cannot discard it: the call is refused in place, the upstream gets the refusal as
// its result, and the client's stream goes on with what follows; the call never reaches
// the client.
func TestStreamGateRefusesAfterShownText(t *testing.T) {
	r := newRig(t, nil,
		scripted.Reply{Text: "Let me clean that up for you now.", ToolCalls: []llms.ToolCall{call("shell", `{"cmd":"rm -rf ~"}`)}, Chunk: 4},
		scripted.Reply{Text: " I will not delete your home directory.", Chunk: 5},
	)
	got := runLangChainGo(t, r, seedCase{rule: "shown", hdr: []string{"X-Streamrules-Env: client_ops"}, prompt: "clean up"}, true)
	if got.Error != "" || len(got.Calls) != 0 {
		t.Fatalf("client got %+v", got)
	}
	want := "Let me clean that up for you now. I will not delete your home directory."
	if got.Streamed != want || got.Final != want {
		t.Fatalf("client streamed %q, final %q", got.Streamed, got.Final)
	}
	msgs := r.upstreamMessages(1)
	n := len(msgs)
	if msgs[n-2].Role != "assistant" || len(msgs[n-2].ToolCalls) != 1 || msgs[n-1].Role != "tool" ||
		!strings.Contains(msgs[n-1].Content.String(), `rule="destructive_shell"`) {
		t.Fatalf("refusal tour: %+v", msgs[n-2:])
	}
}

// TestUpstreamErrorPassesThrough: an upstream 429 reaches the client with its status,
// Retry-After and body.
func TestUpstreamErrorPassesThrough(t *testing.T) {
	r := newRig(t, nil, scripted.Reply{Err: &openaitest.StatusError{Code: 429, Type: "rate_limit_exceeded", Message: "slow down", RetryAfter: "7"}})
	req, _ := http.NewRequest(http.MethodPost, r.srv.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" || !strings.Contains(string(b), "slow down") || !strings.Contains(string(b), "rate_limit_exceeded") {
		t.Fatalf("%d %v %s", resp.StatusCode, resp.Header, b)
	}
}

// TestUpstreamTimeout: an upstream that hangs is bounded by UpstreamTimeout: 504.
func TestUpstreamTimeout(t *testing.T) {
	set, _ := seeds.Default()
	r := newRigWith(t, nil, set.Rules, func(c *gateway.Config) { c.UpstreamTimeout = 50 * time.Millisecond },
		scripted.Reply{Text: "late", Delay: time.Minute}, scripted.Reply{Text: "late", Delay: time.Minute})
	for _, stream := range []string{"false", "true"} {
		status, body := r.post(`{"model":"m","stream":` + stream + `,"messages":[{"role":"user","content":"hi"}]}`)
		if status != http.StatusGatewayTimeout || !strings.Contains(body, "upstream-timeout") {
			t.Errorf("stream=%s: %d %s", stream, status, body)
		}
	}
}

// TestClientDisconnectCancelsUpstream: a client that hangs up mid-stream cancels the
// upstream call.
func TestClientDisconnectCancelsUpstream(t *testing.T) {
	r := newRig(t, nil, scripted.Reply{Text: strings.Repeat("word ", 2000), Chunk: 5, Pace: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan struct{})
	_, _ = r.llm("X-Streamrules-Chat: gone").GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "talk")},
		llms.WithStreamingFunc(func(context.Context, []byte) error {
			select {
			case <-got:
			default:
				close(got)
				cancel()
			}
			return nil
		}))
	// LangChainGo's client returns what it had when its context ends. Close waits for the
	// gateway's handler: it returns only once its upstream call has, so an upstream still
	// streaming would be seen complete here.
	r.srv.Close()
	for _, q := range r.up.Requests() {
		if q.Complete {
			t.Fatalf("upstream request %d ran to its end after the client left", q.N)
		}
	}
}

// TestModelsPassThrough: GET /v1/models reaches the upstream and its answer the client.
func TestModelsPassThrough(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer test" || r.Header.Get("X-Streamrules-Chat") != "" {
			http.Error(w, "bad request: "+r.URL.Path, 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"gpt-test","object":"model"}]}`)
	}))
	defer up.Close()
	set, _ := seeds.Default()
	r := newRigWith(t, nil, set.Rules, func(c *gateway.Config) { c.Upstream = up.URL + "/v1" })
	req, _ := http.NewRequest(http.MethodGet, r.srv.URL+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer test")
	req.Header.Set("X-Streamrules-Chat", "c")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != 200 || len(list.Data) != 1 || list.Data[0].ID != "gpt-test" {
		t.Fatalf("%d %+v %v", resp.StatusCode, list, err)
	}
}

// TestChatWithoutHeader: without X-Streamrules-Chat, the tours of a move are still one
// move (found by their tool call ids): the reminder rides the second tour.
func TestChatWithoutHeader(t *testing.T) {
	r := newRig(t, nil,
		scripted.Reply{ToolCalls: []llms.ToolCall{call("write_file", `{"path":"x.go"}`)}},
		scripted.Reply{Text: "Wrote x.go."},
	)
	got := runLangChainGo(t, r, seedCase{rule: "nohdr", prompt: "write x.go"}, false)
	if got.Error != "" || got.Final != "Wrote x.go." {
		t.Fatalf("client got %+v", got)
	}
	m := r.upstreamMessages(1)
	if !strings.Contains(m[len(m)-1].Content.String(), `rule="write_diff_over_write_file"`) {
		t.Fatalf("second tour's tool result %q", m[len(m)-1].Content.String())
	}
}

// TestIdleMoveEnds: a move whose next tour never comes is ended after the idle timeout,
// and written (its firing counted).
func TestIdleMoveEnds(t *testing.T) {
	saved := make(chan error, 4)
	set, _ := seeds.Default()
	r := newRigWith(t, &streamrules.Config{OnSave: func(s streamrules.SaveInfo) { saved <- s.Err }}, set.Rules,
		func(c *gateway.Config) { c.IdleTimeout = 20 * time.Millisecond },
		scripted.Reply{ToolCalls: []llms.ToolCall{call("write_file", `{"path":"y.go"}`)}},
		scripted.Reply{ToolCalls: []llms.ToolCall{call("write_file", `{"path":"z.go"}`)}},
	)
	llm := r.llm("X-Streamrules-Chat: idle")
	ctx := context.Background()
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "write")}
	resp, err := llm.GenerateContent(ctx, msgs, llms.WithTools(toolDefs))
	if err != nil {
		t.Fatal(err)
	}
	tc := resp.Choices[0].ToolCalls[0]
	msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{tc}},
		llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: tc.ID, Name: "write_file", Content: "ok"}}})
	if _, err := llm.GenerateContent(ctx, msgs, llms.WithTools(toolDefs)); err != nil {
		t.Fatal(err)
	}
	// The client never answers the second call: the idle timer ends the move.
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
	if st := ruleStat(t, r.eng, "write_diff_over_write_file"); st.Fired != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestToolFailureFromResult: a tool result that says it failed counts as a failed call for
// the context atoms: the audio claim after a failed generate_speech is repaired, after a
// successful one it stands.
func TestToolFailureFromResult(t *testing.T) {
	for _, c := range []struct {
		result, want string
	}{
		{`{"error":"quota exceeded"}`, "I could not make the audio: the speech tool did not run."},
		{"Error: quota exceeded", "I could not make the audio: the speech tool did not run."},
		{`{"file":"a.mp3"}`, "Audio saved: a.mp3"},
	} {
		r := newRig(t, nil,
			scripted.Reply{ToolCalls: []llms.ToolCall{call("generate_speech", `{"text":"hello"}`)}},
			scripted.Reply{Text: "Audio saved: a.mp3"},
		)
		llm := r.llm("X-Streamrules-Chat: speech")
		ctx := context.Background()
		msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "read it aloud")}
		resp, err := llm.GenerateContent(ctx, msgs, llms.WithTools(toolDefs))
		if err != nil {
			t.Fatal(err)
		}
		tc := resp.Choices[0].ToolCalls[0]
		msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{tc}},
			llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: tc.ID, Name: tc.FunctionCall.Name, Content: c.result}}})
		resp, err = llm.GenerateContent(ctx, msgs, llms.WithTools(toolDefs))
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Choices[0].Content; got != c.want {
			t.Errorf("result %s: client got %q, want %q", c.result, got, c.want)
		}
	}
}

// TestStreamReasoningHeldWithTheAnswer: reasoning deltas reach the client before the
// answer's text, and a discarded answer's reasoning never does.
func TestStreamReasoningHeldWithTheAnswer(t *testing.T) {
	r := newRig(t, nil,
		scripted.Reply{Reasoning: "they say thanks", Text: "👍"},
		scripted.Reply{Reasoning: "answer in words", Text: "You're welcome. ↩ #1", Chunk: 5},
	)
	llm := r.llm("X-Streamrules-Chat: think", "X-Streamrules-Env: telegram")
	var reasoning, text strings.Builder
	_, err := llm.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "thanks")},
		llms.WithStreamingReasoningFunc(func(_ context.Context, rc, c []byte) error {
			reasoning.Write(rc)
			text.Write(c)
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	if reasoning.String() != "answer in words" || text.String() != "You're welcome. ↩ #1" {
		t.Fatalf("client got reasoning %q, text %q", reasoning.String(), text.String())
	}
}

// TestRetryAfterUpstreamErrorIsTheSameTour: after an upstream 503 on a tour, the client's
// retry of the same request is the same tour of the same move: its tool result is not
// judged again, and the reminder is laid the same way.
func TestRetryAfterUpstreamErrorIsTheSameTour(t *testing.T) {
	saved := make(chan error, 4)
	set, _ := seeds.Default()
	r := newRigWith(t, &streamrules.Config{OnSave: func(s streamrules.SaveInfo) { saved <- s.Err }}, set.Rules, nil,
		scripted.Reply{ToolCalls: []llms.ToolCall{call("write_file", `{"path":"r.go"}`)}},
		scripted.Reply{Err: &openaitest.StatusError{Code: 503, Type: "server_error", Message: "busy"}},
		scripted.Reply{Text: "Wrote r.go."},
	)
	llm := r.llm("X-Streamrules-Chat: retry")
	ctx := context.Background()
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "write r.go")}
	resp, err := llm.GenerateContent(ctx, msgs, llms.WithTools(toolDefs))
	if err != nil {
		t.Fatal(err)
	}
	tc := resp.Choices[0].ToolCalls[0]
	msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{tc}},
		llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: tc.ID, Name: "write_file", Content: "ok"}}})
	if _, err := llm.GenerateContent(ctx, msgs, llms.WithTools(toolDefs)); err == nil || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("want the upstream's 503, got %v", err)
	}
	resp, err = llm.GenerateContent(ctx, msgs, llms.WithTools(toolDefs))
	if err != nil || resp.Choices[0].Content != "Wrote r.go." {
		t.Fatalf("%v %+v", err, resp)
	}
	reqs := r.up.Requests()
	if a, b := reqs[1].Body.Messages[2].Content.String(), reqs[2].Body.Messages[2].Content.String(); a != b || !strings.Contains(a, "write_diff_over_write_file") {
		t.Fatalf("tool result upstream: %q then %q", a, b)
	}
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
	if st := ruleStat(t, r.eng, "write_diff_over_write_file"); st.Fired != 1 {
		t.Fatalf("fired %d times, want once: %+v", st.Fired, st)
	}
}

// TestGateRefusesOneOfTwoCalls: after the ceiling, of a response's two calls the client
// gets the one no gate matches; the next tour's upstream copy has the whole response, the
// refusal as the refused call's result, and the client's result of the other.
func TestGateRefusesOneOfTwoCalls(t *testing.T) {
	r := newRig(t, nil,
		scripted.Reply{ToolCalls: []llms.ToolCall{call("shell", `{"cmd":"rm -rf /"}`)}},
		scripted.Reply{ToolCalls: []llms.ToolCall{call("shell", `{"cmd":"rm -rf /"}`), call("shell", `{"cmd":"df -h"}`)}},
		scripted.Reply{Text: "Disk usage checked; I did not delete anything."},
	)
	got := runLangChainGo(t, r, seedCase{rule: "mixed", hdr: []string{"X-Streamrules-Env: client_ops"}, prompt: "free space"}, false)
	if got.Error != "" || strings.Join(got.Calls, "|") != `shell {"cmd":"df -h"}` || got.Final != "Disk usage checked; I did not delete anything." {
		t.Fatalf("client got %+v", got)
	}
	m := r.upstreamMessages(2)
	var roles []string
	for _, x := range m {
		roles = append(roles, x.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,tool,tool" || len(m[1].ToolCalls) != 2 ||
		!strings.Contains(m[2].Content.String(), `rule="destructive_shell"`) || m[2].ToolCallID != m[1].ToolCalls[0].ID ||
		!strings.HasSuffix(m[3].Content.String(), "ok shell") {
		t.Fatalf("upstream copy: %+v", m)
	}
}
