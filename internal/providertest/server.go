package providertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/mistral"
	"github.com/tmc/langchaingo/llms/ollama"

	"github.com/streamrules/streamrules/internal/scripted"
)

// Kind names a provider protocol.
type Kind string

// The protocols served.
const (
	Anthropic Kind = "anthropic"
	Ollama    Kind = "ollama"
	Mistral   Kind = "mistral"
)

// Kinds lists every protocol, for test matrices.
var Kinds = []Kind{Anthropic, Ollama, Mistral}

// Request is one recorded request, decoded into a provider-neutral shape.
type Request struct {
	N      int // 0-based arrival index
	Path   string
	Header http.Header
	Raw    []byte // the body exactly as the client sent it
	Stream bool
	// System is the system prompt where the provider keeps it apart (Anthropic's
	// top-level "system"); system-role messages stay in Messages.
	System     string
	Tools      []string // names of the declared tools
	Messages   []Message
	StopWords  []string
	Violations []string // provider rules the request breaks; non-empty means it got a 400
}

// Message is one message of a request.
type Message struct {
	Role        string // as sent: "user", "assistant", "system", "tool"
	Text        string // the text blocks, joined with "\n"
	TextBlocks  []string
	ToolUses    []ToolUse
	ToolResults []ToolResult
	ToolCallID  string // a tool-role message's reference (Mistral)
}

// ToolUse is a tool call the history says the model made.
type ToolUse struct {
	ID, Name string
	Input    string // the arguments as JSON, as sent
}

// ToolResult is a tool's answer in the history.
type ToolResult struct {
	ToolUseID, Content string
}

// StatusError, used as Reply.Err, makes the server answer with Code and the
// provider's error body carrying Message.
type StatusError struct {
	Code    int
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("providertest: HTTP %d: %s", e.Code, e.Message)
}

// Server is a local server speaking one provider's protocol. It is closed by
// the test's cleanup.
type Server struct {
	URL  string
	Kind Kind
	// OnChunk, if set before the first request, runs after each streamed piece
	// of an answer is flushed: req is Request.N, piece counts from 0.
	OnChunk func(req, piece int)

	srv   *httptest.Server
	reply func(Request) scripted.Reply

	mu   sync.Mutex
	reqs []Request
	ids  int
}

// New starts a server of kind k that answers accepted requests with replies,
// in order; rejected requests do not consume one. Past the script it answers 500.
func New(t testing.TB, k Kind, replies ...scripted.Reply) *Server {
	t.Helper()
	next := scripted.Sequence(replies...)
	return NewFunc(t, k, func(req Request) scripted.Reply {
		if reply, ok := next(); ok {
			return reply
		}
		return scripted.Reply{Err: fmt.Errorf("providertest: no reply left for request %d", req.N)}
	})
}

// NewFunc starts a server of kind k answering each accepted request with f(req).
func NewFunc(t testing.TB, k Kind, f func(Request) scripted.Reply) *Server {
	t.Helper()
	s := &Server{Kind: k, reply: f}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// LLM returns LangChainGo's real client for the server's provider, pointed at it.
func (s *Server) LLM(t testing.TB) llms.Model {
	t.Helper()
	var (
		llm llms.Model
		err error
	)
	switch s.Kind {
	case Anthropic:
		llm, err = anthropic.New(anthropic.WithToken("test"), anthropic.WithBaseURL(s.URL+"/v1"),
			anthropic.WithModel("claude-test"), anthropic.WithHTTPClient(s.srv.Client()))
	case Ollama:
		llm, err = ollama.New(ollama.WithServerURL(s.URL), ollama.WithModel("llama-test"),
			ollama.WithHTTPClient(s.srv.Client()))
	case Mistral:
		// One try: the SDK sleeps between retries of a 5xx.
		llm, err = mistral.New(mistral.WithEndpoint(s.URL), mistral.WithAPIKey("test"),
			mistral.WithModel("mistral-test"), mistral.WithMaxRetries(1))
	default:
		err = fmt.Errorf("unknown kind %q", s.Kind)
	}
	if err != nil {
		t.Fatalf("providertest: %s client: %v", s.Kind, err)
	}
	return llm
}

// Requests returns every request received, rejected ones included, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = r
		out[i].Raw = bytes.Clone(r.Raw)
		out[i].Messages = slices.Clone(r.Messages)
		out[i].Violations = slices.Clone(r.Violations)
	}
	return out
}

// path is the one path each protocol answers.
func (k Kind) path() string {
	switch k {
	case Anthropic:
		return "/v1/messages"
	case Ollama:
		return "/api/chat"
	}
	return "/v1/chat/completions"
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != s.Kind.path() {
		s.writeError(w, http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path)
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req, err := s.decode(raw)
	if err != nil {
		req.Violations = append(req.Violations, "body: "+err.Error())
	}
	req.Path, req.Header, req.Raw = r.URL.Path, r.Header.Clone(), raw
	if err == nil {
		req.Violations = append(req.Violations, s.validate(&req)...)
	}
	s.mu.Lock()
	req.N = len(s.reqs)
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	if len(req.Violations) > 0 {
		s.writeError(w, http.StatusBadRequest, strings.Join(req.Violations, "; "))
		return
	}
	reply := s.reply(req)
	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if reply.Err != nil {
		code, msg := http.StatusInternalServerError, reply.Err.Error()
		if se := (*StatusError)(nil); errors.As(reply.Err, &se) {
			code, msg = se.Code, se.Message
		}
		s.writeError(w, code, msg)
		return
	}
	a := s.answer(req, reply)
	if req.Stream {
		s.stream(w, r, req.N, a)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(a.whole())
}

func (s *Server) decode(raw []byte) (Request, error) {
	switch s.Kind {
	case Anthropic:
		return decodeAnthropic(raw)
	case Ollama:
		return decodeOllama(raw)
	}
	return decodeMistral(raw)
}

func (s *Server) validate(req *Request) []string {
	switch s.Kind {
	case Anthropic:
		return validateAnthropic(req)
	case Ollama:
		return validateOllama(req)
	}
	return validateMistral(req)
}

func (s *Server) writeError(w http.ResponseWriter, code int, msg string) {
	var body any
	switch s.Kind {
	case Anthropic:
		body = map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}}
	case Ollama:
		body = map[string]any{"error": msg}
	default:
		body = map[string]any{"object": "error", "type": "invalid_request_error", "message": msg, "code": nil}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

// answer is one reply ready to be written in the provider's shape.
type answer struct {
	kind  Kind
	model string
	id    string
	text  string
	stop  string // why the answer ended, in the provider's words
	calls []ToolUse
	chunk int
	// blocks: the text as several content blocks (Anthropic; nil: one block, text).
	blocks []string
	// reasoning and redacted: a thinking block and a redacted_thinking block before the
	// text (Anthropic; empty: none).
	reasoning, redacted string
}

func (s *Server) answer(req Request, reply scripted.Reply) *answer {
	a := &answer{kind: s.Kind, chunk: reply.Chunk, text: reply.Text, blocks: reply.Blocks,
		reasoning: reply.Reasoning, redacted: reply.Redacted}
	if a.blocks != nil {
		a.text = strings.Join(a.blocks, "")
	}
	var m struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(req.Raw, &m)
	a.model = m.Model
	cut := false
	for _, sw := range req.StopWords {
		if i := strings.Index(a.text, sw); sw != "" && i >= 0 {
			a.text, cut = a.text[:i], true
		}
	}
	s.mu.Lock()
	s.ids++
	a.id = fmt.Sprintf("msg_%d", s.ids)
	for _, tc := range reply.ToolCalls {
		id := tc.ID
		if id == "" {
			s.ids++
			id = fmt.Sprintf("call_%d", s.ids)
		}
		var name, args string
		if tc.FunctionCall != nil {
			name, args = tc.FunctionCall.Name, tc.FunctionCall.Arguments
		}
		a.calls = append(a.calls, ToolUse{ID: id, Name: name, Input: args})
	}
	s.mu.Unlock()
	a.stop = a.stopReason(cut)
	return a
}

func (a *answer) stopReason(cut bool) string {
	switch {
	case a.kind == Anthropic && len(a.calls) > 0:
		return "tool_use"
	case a.kind == Anthropic && cut:
		return "stop_sequence"
	case a.kind == Anthropic:
		return "end_turn"
	case len(a.calls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func (a *answer) pieces() []string { return scripted.SplitChunks(a.text, a.chunk) }

func (a *answer) whole() []byte {
	switch a.kind {
	case Anthropic:
		return anthropicWhole(a)
	case Ollama:
		return ollamaWhole(a)
	}
	return mistralWhole(a)
}

// stream writes the answer as the provider streams it, calling OnChunk after each
// piece, and stops as soon as the client goes away.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, n int, a *answer) {
	var events [][]byte
	switch a.kind {
	case Anthropic:
		events = anthropicEvents(a)
		w.Header().Set("Content-Type", "text/event-stream")
	case Ollama:
		events = ollamaLines(a)
		w.Header().Set("Content-Type", "application/x-ndjson")
	default:
		events = mistralEvents(a)
		w.Header().Set("Content-Type", "text/event-stream")
	}
	flusher, _ := w.(http.Flusher)
	w.WriteHeader(http.StatusOK)
	for i, ev := range events {
		if r.Context().Err() != nil {
			return
		}
		if _, err := w.Write(ev); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		if s.OnChunk != nil {
			s.OnChunk(n, i)
		}
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own values are marshalled
	}
	return b
}

// jsonObject decodes s as a JSON object, or returns nil.
func jsonObject(s string) map[string]any {
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) != nil {
		return nil
	}
	return m
}
