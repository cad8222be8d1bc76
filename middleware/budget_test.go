package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/ruletools"
)

// budgetRules are three 250-character rules on shell.
func budgetRules() []streamrules.Rule {
	var out []streamrules.Rule
	for _, name := range []string{"alpha", "bravo", "charlie"} {
		head := "Rule " + name + " applies to shell. "
		out = append(out, softRule(name, "shell", ``, head+strings.Repeat("z", 250-len(head))))
	}
	return out
}

// toolMessages returns the tool results of a chat-completions request, in order.
func toolMessages(req openaitest.Request) []string {
	var out []string
	for _, m := range req.Body.Messages {
		if m.Role == "tool" {
			out = append(out, m.Content.String())
		}
	}
	return out
}

// TestReminderBudgetThroughExecutor: a stock executor, LangChainGo's openai client over
// HTTP. Three 250-character rules on shell under a budget of 400: one block whole, two in
// manifest form, all three named; stream_rule_read returns a manifest rule's text and
// refuses one delivered whole; the firings record their modes and the read.
func TestReminderBudgetThroughExecutor(t *testing.T) {
	t.Parallel()
	rules := budgetRules()
	r := newRig(t, &streamrules.Config{ReminderBudget: 400}, rules...)
	srv := openaitest.New(t,
		scripted.Reply{ToolCalls: []llms.ToolCall{toolCall("shell", `{"__arg1":"ls"}`)}},
		scripted.Reply{ToolCalls: []llms.ToolCall{
			toolCall(ruletools.ReadName, `{"rule":"bravo"}`),
			toolCall(ruletools.ReadName, `{"rule":"alpha"}`),
		}},
		scripted.Reply{Text: "Listed, and I read the rule."},
	)
	shell := &echoTool{name: "shell"}
	exec, _ := r.executor(kindFunctions, srv.LLM(t, openai.WithCallback(r.clean)), shell, ruletools.Reader(r.eng))
	out, steps, err := r.run(context.Background(), exec, "chat-budget", "list files")
	if err != nil {
		t.Fatal(err)
	}
	if out != "Listed, and I read the rule." || len(steps) != 3 {
		t.Fatalf("output %q, steps %+v", out, steps)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	got := toolMessages(reqs[1])
	want := `<system-reminder rule="alpha">` + rules[0].Text + "</system-reminder>\n" +
		`<system-reminder rule="bravo" delivery="manifest">Rule bravo applies to shell. (read it with stream_rule_read)</system-reminder>` + "\n" +
		`<system-reminder rule="charlie" delivery="manifest">Rule charlie applies to shell. (read it with stream_rule_read)</system-reminder>` + "\n" +
		"output of ls"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("second request's tool result:\n%q\nwant\n%q", got, want)
	}
	// The splice is byte-identical in the next tour, which only appends.
	m1, m2 := rawMessages(t, reqs[1]), rawMessages(t, reqs[2])
	for i := range m1 {
		if string(m1[i]) != string(m2[i]) {
			t.Fatalf("message %d changed between requests:\n%s\n%s", i, m1[i], m2[i])
		}
	}
	reads := toolMessages(reqs[2])[1:]
	if len(reads) != 2 {
		t.Fatalf("third request's tool results %q", toolMessages(reqs[2]))
	}
	var ok ruletools.ReadResult
	if err := json.Unmarshal([]byte(reads[0]), &ok); err != nil || !ok.OK || ok.Rule != "bravo" || ok.Text != rules[1].Text {
		t.Fatalf("stream_rule_read of bravo: %s", reads[0])
	}
	var refused ruletools.Result
	if err := json.Unmarshal([]byte(reads[1]), &refused); err != nil || refused.OK || refused.Field != "rule" ||
		!strings.Contains(refused.Error, `rule "alpha" was not delivered in manifest form`) {
		t.Fatalf("stream_rule_read of alpha: %s", reads[1])
	}
	assertClean(t, r.rec.all())
	var firings []string
	for _, f := range r.store.AllFirings() {
		firings = append(firings, fmt.Sprintf("%s:%s:%s:%v", f.Rule, f.Tool, f.Delivery, f.Read))
	}
	if want := []string{"alpha:shell:full:false", "bravo:shell:manifest:true", "charlie:shell:manifest:false"}; !slices.Equal(firings, want) {
		t.Fatalf("stored firings %v, want %v", firings, want)
	}
	for _, line := range []string{
		`msg="stream rule fired" rule=alpha chat=chat-budget move=1 mode=remind tool=shell delivery=full`,
		`msg="stream rule fired" rule=bravo chat=chat-budget move=1 mode=remind tool=shell delivery=manifest`,
		`msg="stream rule read" rule=bravo chat=chat-budget move=1 delivery=manifest`,
	} {
		if !strings.Contains(r.logs.String(), line) {
			t.Errorf("log lacks %s:\n%s", line, r.logs.String())
		}
	}
	stats, err := r.eng.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, st := range stats.Rules {
		lines = append(lines, fmt.Sprintf("%s full=%d manifest=%d read=%d", st.Rule,
			st.Delivery[streamrules.DeliveryFull], st.Delivery[streamrules.DeliveryManifest], st.ManifestRead))
	}
	if want := []string{"alpha full=1 manifest=0 read=0", "bravo full=0 manifest=1 read=1", "charlie full=0 manifest=1 read=0"}; !slices.Equal(lines, want) {
		t.Fatalf("stats %v, want %v", lines, want)
	}
}

// TestReminderBudgetMRKL: the same splice in a text scratchpad, byte-identical in the next tour.
func TestReminderBudgetMRKL(t *testing.T) {
	t.Parallel()
	r := newRig(t, &streamrules.Config{ReminderBudget: 400}, budgetRules()...)
	model := scripted.New(
		scripted.Reply{Text: "Thought: look\nAction: shell\nAction Input: ls"},
		scripted.Reply{Text: "Thought: read\nAction: stream_rule_read\nAction Input: charlie"},
		scripted.Reply{Text: "Thought: done\nFinal Answer: Done."},
	)
	exec, _ := r.executor(kindMRKL, model, &echoTool{name: "shell"}, ruletools.Reader(r.eng))
	if out, _, err := r.run(context.Background(), exec, "chat-mrkl", "list"); err != nil || out != "Done." {
		t.Fatalf("run: %q, %v", out, err)
	}
	calls := model.Calls()
	manifest := `<system-reminder rule="charlie" delivery="manifest">Rule charlie applies to shell. (read it with stream_rule_read)</system-reminder>`
	for _, i := range []int{1, 2} {
		if strings.Count(calls[i].Text(), `rule="bravo" delivery="manifest"`) != 1 || strings.Count(calls[i].Text(), manifest) != 1 {
			t.Fatalf("request %d:\n%s", i, calls[i].Text())
		}
	}
	if !strings.HasPrefix(calls[2].Text(), strings.TrimRight(calls[1].Text(), "\n")) {
		t.Errorf("request 2 does not extend request 1")
	}
	if !strings.Contains(calls[2].Text(), `"text":"Rule charlie applies to shell. z`) {
		t.Errorf("the read's output is not in the scratchpad:\n%s", calls[2].Text())
	}
}
