package gateway_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/gateway"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/internal/testlog"
	"github.com/streamrules/streamrules/seeds"
)

// rig is a gateway over the ten seeds, in front of a recording OpenAI-protocol
// upstream, served over real HTTP.
type rig struct {
	t    *testing.T
	eng  *streamrules.Engine
	up   *openaitest.Server
	gw   *gateway.Gateway
	srv  *httptest.Server
	logs *testlog.Buffer
}

func newRig(t *testing.T, cfg *streamrules.Config, replies ...scripted.Reply) *rig {
	t.Helper()
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	return newRigRules(t, cfg, set.Rules, replies...)
}

func newRigRules(t *testing.T, cfg *streamrules.Config, rules []streamrules.Rule, replies ...scripted.Reply) *rig {
	t.Helper()
	return newRigWith(t, cfg, rules, nil, replies...)
}

// newRigWith is newRigRules with the gateway's config changed by gw.
func newRigWith(t *testing.T, cfg *streamrules.Config, rules []streamrules.Rule, gw func(*gateway.Config), replies ...scripted.Reply) *rig {
	t.Helper()
	if cfg == nil {
		cfg = &streamrules.Config{}
	}
	logs := &testlog.Buffer{}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	store, err := streamrules.NewMemoryStore(rules)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := streamrules.New(context.Background(), store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	up := openaitest.New(t, replies...)
	gcfg := &gateway.Config{Upstream: up.URL + "/v1"}
	if gw != nil {
		gw(gcfg)
	}
	g, err := gateway.New(eng, gcfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	t.Cleanup(g.Close) // first: before the engine closes
	return &rig{t: t, eng: eng, up: up, gw: g, srv: srv, logs: logs}
}

// headers adds the identity headers to every request of a client.
type headers struct {
	h    http.Header
	next http.RoundTripper
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range h.h {
		r.Header[k] = vs
	}
	return h.next.RoundTrip(r)
}

// llm is LangChainGo's real openai client, pointed at the gateway, sending the headers
// given as "Name: value" pairs.
func (r *rig) llm(hdr ...string) *openai.LLM {
	r.t.Helper()
	h := http.Header{}
	for _, kv := range hdr {
		k, v, _ := strings.Cut(kv, ":")
		h.Add(k, strings.TrimSpace(v))
	}
	llm, err := openai.New(openai.WithBaseURL(r.srv.URL+"/v1"), openai.WithToken("test"), openai.WithModel("gpt-test"),
		openai.WithHTTPClient(&http.Client{Transport: headers{h, http.DefaultTransport}}))
	if err != nil {
		r.t.Fatal(err)
	}
	return llm
}

// post sends a raw body to the gateway.
func (r *rig) post(body string, hdr ...string) (int, string) {
	r.t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.srv.URL+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer test")
	req.Header.Set("Content-Type", "application/json")
	for _, kv := range hdr {
		k, v, _ := strings.Cut(kv, ":")
		req.Header.Add(k, strings.TrimSpace(v))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func call(name, args string) llms.ToolCall {
	return llms.ToolCall{Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: args}}
}

// toolDefs are the tools the client offers.
var toolDefs = []llms.Tool{
	{Type: "function", Function: &llms.FunctionDefinition{Name: "write_file", Description: "write a file", Parameters: map[string]any{"type": "object"}}},
	{Type: "function", Function: &llms.FunctionDefinition{Name: "shell", Description: "run a command", Parameters: map[string]any{"type": "object"}}},
	{Type: "function", Function: &llms.FunctionDefinition{Name: "generate_speech", Description: "speak", Parameters: map[string]any{"type": "object"}}},
}

// lastMessage is the content of the last message upstream got in request i.
func (r *rig) upstreamMessages(i int) []openaitest.Message {
	r.t.Helper()
	reqs := r.up.Requests()
	if i >= len(reqs) {
		r.t.Fatalf("upstream got %d requests, want request %d", len(reqs), i)
	}
	return reqs[i].Body.Messages
}
