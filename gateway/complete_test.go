package gateway_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules/internal/scripted"
)

// TestFixRepairsInPlace: telegram_markdown_image and telegram_reply_tail repair the
// answer in place with one upstream call; the client gets the repair.
func TestFixRepairsInPlace(t *testing.T) {
	r := newRig(t, nil, scripted.Reply{Text: "Look: ![cat](https://x/cat.png)"})
	llm := r.llm("X-Streamrules-Chat: c1", "X-Streamrules-Env: telegram", "X-Streamrules-Vars: message_id=4711")
	resp, err := llm.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "show me the cat")})
	if err != nil {
		t.Fatal(err)
	}
	got := resp.Choices[0].Content
	if strings.Contains(got, "![") || !strings.HasSuffix(got, "↩ #4711") || !strings.Contains(got, "https://x/cat.png") {
		t.Fatalf("client got %q", got)
	}
	reqs := r.up.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream got %d requests, want 1 (a fix makes no call)", len(reqs))
	}
	for k := range reqs[0].Header {
		if strings.HasPrefix(strings.ToLower(k), "x-streamrules-") {
			t.Errorf("upstream got identity header %s", k)
		}
	}
}

// TestReplayOnMiss: telegram_react_not_emoji discards a bare emoji unseen and replays
// once with the interrupt; the client gets only the replay's answer.
func TestReplayOnMiss(t *testing.T) {
	r := newRig(t, nil, scripted.Reply{Text: "👍"}, scripted.Reply{Text: "Done. ↩ #7"})
	llm := r.llm("X-Streamrules-Chat: c2", "X-Streamrules-Env: telegram", "X-Streamrules-Vars: message_id=7")
	resp, err := llm.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "thanks!")})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Content; got != "Done. ↩ #7" {
		t.Fatalf("client got %q", got)
	}
	msgs := r.upstreamMessages(1)
	n := len(msgs)
	if msgs[n-2].Role != "assistant" || msgs[n-2].Content.String() != "👍" ||
		msgs[n-1].Role != "user" || !strings.Contains(msgs[n-1].Content.String(), `rule="telegram_react_not_emoji"`) {
		t.Fatalf("replay's last messages: %+v", msgs[n-2:])
	}
	if u := resp.Choices[0].GenerationInfo["TotalTokens"]; u == nil {
		t.Logf("no usage in generation info")
	}
}

// TestSoftReminderUpstreamOnly: write_file_over_write_diff's reminder is prepended to the
// tool result upstream, byte-identical in every later tour; the client's copy never has it.
func TestSoftReminderUpstreamOnly(t *testing.T) {
	r := newRig(t, nil,
		scripted.Reply{ToolCalls: []llms.ToolCall{call("write_file", `{"path":"a.go","content":"x"}`)}},
		scripted.Reply{ToolCalls: []llms.ToolCall{call("shell", `{"cmd":"ls"}`)}},
		scripted.Reply{Text: "done"},
		scripted.Reply{Text: "Wrote a.go; I have not run the tests."},
	)
	llm := r.llm("X-Streamrules-Chat: c3")
	ctx := context.Background()
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "write a.go")}
	for i := 0; i < 2; i++ {
		resp, err := llm.GenerateContent(ctx, msgs, llms.WithTools(toolDefs))
		if err != nil {
			t.Fatal(err)
		}
		tc := resp.Choices[0].ToolCalls
		if len(tc) != 1 {
			t.Fatalf("tour %d: client got %d calls", i, len(tc))
		}
		msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{tc[0]}},
			llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: tc[0].ID, Name: tc[0].FunctionCall.Name, Content: "ok " + tc[0].FunctionCall.Name}}})
	}
	resp, err := llm.GenerateContent(ctx, msgs, llms.WithTools(toolDefs))
	if err != nil {
		for _, q := range r.up.Requests() {
			t.Logf("upstream %d: %s", q.N, q.Raw)
		}
		t.Fatal(err)
	}
	// verify_before_done: files changed, no run_tests since: "done" is discarded unseen.
	if resp.Choices[0].Content != "Wrote a.go; I have not run the tests." {
		t.Fatalf("client got %q", resp.Choices[0].Content)
	}
	reqs := r.up.Requests()
	if last := reqs[3].Body.Messages[len(reqs[3].Body.Messages)-1]; !strings.Contains(last.Content.String(), `rule="verify_before_done"`) {
		t.Fatalf("replay ends with %+v", last)
	}
	if len(reqs) != 4 {
		t.Fatalf("upstream got %d requests", len(reqs))
	}
	m1, m2 := reqs[1].Body.Messages, reqs[2].Body.Messages
	got := m1[2].Content.String()
	if !strings.HasPrefix(got, `<system-reminder rule="write_diff_over_write_file">`) || !strings.HasSuffix(got, "\nok write_file") {
		t.Fatalf("upstream tool result: %q", got)
	}
	if m2[2].Content.String() != got {
		t.Fatalf("later tour's splice differs:\n%q\n%q", m2[2].Content.String(), got)
	}
	if strings.Contains(m2[4].Content.String(), "system-reminder") {
		t.Fatalf("shell result got a reminder without client_ops: %q", m2[4].Content.String())
	}
}

// TestGateDiscardsAndReplays: destructive_shell discards a response calling rm -rf / with
// a retry left; the client gets the replay's call only.
func TestGateDiscardsAndReplays(t *testing.T) {
	r := newRig(t, nil,
		scripted.Reply{ToolCalls: []llms.ToolCall{call("shell", `{"cmd":"rm -rf /"}`)}},
		scripted.Reply{ToolCalls: []llms.ToolCall{call("shell", `{"cmd":"ls"}`)}},
	)
	llm := r.llm("X-Streamrules-Chat: c4", "X-Streamrules-Env: client_ops")
	resp, err := llm.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "clean up")}, llms.WithTools(toolDefs))
	if err != nil {
		t.Fatal(err)
	}
	tc := resp.Choices[0].ToolCalls
	if len(tc) != 1 || tc[0].FunctionCall.Arguments != `{"cmd":"ls"}` {
		t.Fatalf("client got %+v", tc)
	}
	msgs := r.upstreamMessages(1)
	if last := msgs[len(msgs)-1]; last.Role != "user" || !strings.Contains(last.Content.String(), `rule="destructive_shell"`) {
		t.Fatalf("replay ends with %+v", last)
	}
}

// TestGateRefusesAfterCeiling: after the retry was spent, destructive_shell refuses in
// place: the upstream gets the refusal as the call's result, the client never sees it.
func TestGateRefusesAfterCeiling(t *testing.T) {
	r := newRig(t, nil,
		scripted.Reply{ToolCalls: []llms.ToolCall{call("shell", `{"cmd":"rm -rf /"}`)}},
		scripted.Reply{ToolCalls: []llms.ToolCall{call("shell", `{"cmd":"rm -rf ~"}`)}},
		scripted.Reply{Text: "I will not delete that."},
	)
	llm := r.llm("X-Streamrules-Chat: c5", "X-Streamrules-Env: client_ops")
	resp, err := llm.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "clean up")}, llms.WithTools(toolDefs))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Choices[0].ToolCalls) != 0 || resp.Choices[0].Content != "I will not delete that." {
		t.Fatalf("client got %+v", resp.Choices[0])
	}
	msgs := r.upstreamMessages(2)
	n := len(msgs)
	if msgs[n-2].Role != "assistant" || len(msgs[n-2].ToolCalls) != 1 || msgs[n-1].Role != "tool" ||
		!strings.Contains(msgs[n-1].Content.String(), `rule="destructive_shell"`) {
		t.Fatalf("refusal tour: %+v", msgs[n-2:])
	}
}

// TestBadInput: each bad request gets a clear 4xx and reaches no upstream.
func TestBadInput(t *testing.T) {
	r := newRig(t, nil)
	for _, c := range []struct {
		name, body string
		hdr        []string
		status     int
		says       string
	}{
		{"malformed", `{"model":`, nil, 400, "not a JSON object"},
		{"n", `{"model":"m","n":2,"messages":[{"role":"user","content":"hi"}]}`, nil, 400, "n=2 is not supported"},
		{"env", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, []string{"X-Streamrules-Env: telegram,nope"}, 400, `unknown environment \"nope\"`},
		{"orphan tool", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"shell","arguments":"{}"}}]},{"role":"tool","tool_call_id":"b","content":"x"}]}`, nil, 400, `answers tool_call_id \"b\"`},
		{"tool first", `{"model":"m","messages":[{"role":"tool","tool_call_id":"b","content":"x"}]}`, nil, 400, "must follow an assistant message"},
		{"big", `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 9<<20) + `"}]}`, nil, 413, "over 8388608 bytes"},
	} {
		status, body := r.post(c.body, c.hdr...)
		if status != c.status || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d %s", c.name, status, body)
		}
	}
	if n := len(r.up.Requests()); n != 0 {
		t.Fatalf("upstream got %d requests", n)
	}
}

// TestUnknownFieldsPassThrough: fields the gateway does not act on reach upstream as the
// client wrote them.
func TestUnknownFieldsPassThrough(t *testing.T) {
	r := newRig(t, nil, scripted.Reply{Text: "hi"})
	status, body := r.post(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}],"response_format":{"type":"json_object"},"x_custom":{"a": [1, 2.50]}}`)
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	raw := string(r.up.Requests()[0].Raw)
	for _, want := range []string{`"response_format":{"type":"json_object"}`, `"x_custom":{"a": [1, 2.50]}`, `{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}`} {
		if !strings.Contains(raw, want) {
			t.Errorf("upstream body lacks %s:\n%s", want, raw)
		}
	}
}
