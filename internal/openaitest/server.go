package openaitest

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
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/streamrules/streamrules/internal/scripted"
)

// ChatPath is the only path the server answers. llms/openai appends
// "/chat/completions" to its base URL, so point it at URL+"/v1".
const ChatPath = "/v1/chat/completions"

// Server is an httptest server speaking the OpenAI chat-completions protocol.
// It is closed by the test's cleanup.
type Server struct {
	// URL is the server's root, without the "/v1" the client needs.
	URL string

	t     testing.TB
	srv   *httptest.Server
	reply func(Request) scripted.Reply

	mu   sync.Mutex
	reqs []record
	ids  int // last tool call ID handed out
}

// record is what the server keeps of a request; the decoded body is rebuilt
// from Raw on demand, which makes every copy deep.
type record struct {
	header   http.Header
	raw      []byte
	streamed int  // SSE chunks written
	complete bool // the answer was sent to its end
}

// Request is one recorded chat-completions request.
type Request struct {
	// N is the 0-based index of the request among all recorded ones.
	N      int
	Header http.Header
	// Raw is the request body exactly as the client sent it.
	Raw []byte
	// Body is Raw decoded; it is zero if Raw is not valid JSON.
	Body ChatRequest
	// Streamed is how many SSE chunks the server wrote for this request so far
	// (a client that hangs up early stops it).
	Streamed int
	// Complete reports that the answer was sent to its end ([DONE], or the whole JSON).
	Complete bool
}

// StatusError, used as Reply.Err, makes the server answer with Code and an
// OpenAI-style error of the given Type (e.g. 429 "rate_limit_exceeded")
// instead of the default 500 "server_error".
type StatusError struct {
	Code    int
	Type    string
	Message string
	// RetryAfter, if set, is sent as the Retry-After header.
	RetryAfter string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("openaitest: HTTP %d %s: %s", e.Code, e.Type, e.Message)
}

// New starts a server that answers the requests it accepts with replies, in
// order. Requests the server rejects (bad JSON, malformed tool history, ...)
// do not consume a reply. Once the script has run out, it answers 500.
func New(t testing.TB, replies ...scripted.Reply) *Server {
	t.Helper()
	next := scripted.Sequence(replies...)
	return NewFunc(t, func(req Request) scripted.Reply {
		if reply, ok := next(); ok {
			return reply
		}
		return scripted.Reply{Err: fmt.Errorf("openaitest: no reply left for request %d", req.N)}
	})
}

// NewFunc starts a server that answers each accepted request with f(req).
// f runs on the server's handler goroutines, possibly concurrently.
func NewFunc(t testing.TB, f func(req Request) scripted.Reply) *Server {
	t.Helper()
	s := &Server{t: t, reply: f}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// LLM returns LangChainGo's real OpenAI client pointed at the server, with
// token "test" and model "gpt-test". opts are applied after those defaults.
func (s *Server) LLM(t testing.TB, opts ...openai.Option) *openai.LLM {
	t.Helper()
	all := append([]openai.Option{
		openai.WithBaseURL(s.URL + "/v1"),
		openai.WithToken("test"),
		openai.WithModel("gpt-test"),
		openai.WithHTTPClient(s.srv.Client()),
	}, opts...)
	llm, err := openai.New(all...)
	if err != nil {
		t.Fatalf("openaitest: openai.New: %v", err)
	}
	return llm
}

// Requests returns a deep copy of every chat-completions request received,
// including rejected ones, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = newRequest(i, r)
	}
	return out
}

func newRequest(n int, r record) Request {
	req := Request{N: n, Header: r.header.Clone(), Raw: bytes.Clone(r.raw), Streamed: r.streamed, Complete: r.complete}
	if err := json.Unmarshal(r.raw, &req.Body); err != nil {
		req.Body = ChatRequest{}
	}
	return req
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != ChatPath {
		s.t.Logf("openaitest: %s %s: unknown path, the client's base URL must end in /v1", r.Method, r.URL.Path)
		writeError(w, http.StatusNotFound, "invalid_request_error",
			fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path))
		return
	}
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error",
			fmt.Sprintf("Invalid method for URL (%s %s)", r.Method, r.URL.Path))
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "could not read the request body")
		return
	}

	s.mu.Lock()
	rec := record{header: r.Header.Clone(), raw: raw}
	s.reqs = append(s.reqs, rec)
	req := newRequest(len(s.reqs)-1, rec)
	s.mu.Unlock()
	progress := func(chunks int, complete bool) {
		s.mu.Lock()
		s.reqs[req.N].streamed += chunks
		s.reqs[req.N].complete = s.reqs[req.N].complete || complete
		s.mu.Unlock()
	}

	if token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); !ok || token == "" {
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "You didn't provide an API key.")
		return
	}
	if !json.Valid(raw) {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "We could not parse the JSON body of your request.")
		return
	}
	if msg := validate(&req.Body); msg != "" {
		s.t.Logf("openaitest: rejecting request %d: %s", req.N, msg)
		writeError(w, http.StatusBadRequest, "invalid_request_error", msg)
		return
	}

	reply := s.reply(req)
	ctx := r.Context()
	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	if reply.Err != nil {
		code, typ, msg := http.StatusInternalServerError, "server_error", reply.Err.Error()
		if se := (*StatusError)(nil); errors.As(reply.Err, &se) {
			code, typ, msg = se.Code, se.Type, se.Message
			if se.RetryAfter != "" {
				w.Header().Set("Retry-After", se.RetryAfter)
			}
		}
		writeError(w, code, typ, msg)
		return
	}

	a := answer{
		id:        fmt.Sprintf("chatcmpl-test-%d", req.N),
		created:   time.Now().Unix(),
		model:     req.Body.Model,
		reasoning: reply.Reasoning,
		text:      scripted.CutAtStop(reply.Text, req.Body.Stop),
		calls:     s.toolCalls(reply.ToolCalls),
		chunk:     reply.Chunk,
		pace:      reply.Pace,
		dropAfter: reply.DropAfter,
		progress:  progress,
	}
	a.usage = a.estimateUsage(&req.Body)
	if req.Body.Stream {
		a.stream(w, r, req.Body.StreamOptions != nil && req.Body.StreamOptions.IncludeUsage)
	} else {
		a.complete(w)
	}
}

// toolCalls converts scripted calls to wire form, handing out IDs.
func (s *Server) toolCalls(in []llms.ToolCall) []ToolCall {
	if len(in) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ToolCall, len(in))
	for i, tc := range in {
		if tc.ID == "" {
			s.ids++
			tc.ID = fmt.Sprintf("call_%d", s.ids)
		}
		tc = scripted.NormalizeToolCall(tc)
		out[i] = ToolCall{ID: tc.ID, Type: tc.Type, Function: FunctionCall{
			Name: tc.FunctionCall.Name, Arguments: tc.FunctionCall.Arguments,
		}}
	}
	return out
}

// validate reports, with the real API's wording where known, the request
// errors that middleware rewriting a conversation could plausibly cause.
func validate(b *ChatRequest) string {
	if b.Model == "" {
		return "you must provide a model parameter"
	}
	if len(b.Messages) == 0 {
		return "[] is too short - 'messages'"
	}
	if b.StreamOptions != nil && !b.Stream {
		return "The 'stream_options' parameter is only allowed when 'stream' is enabled."
	}
	for i, t := range b.Tools {
		if t.Type != "function" {
			return fmt.Sprintf("Invalid value: '%s'. Supported values are: 'function'. ('tools[%d].type')", t.Type, i)
		}
		if t.Function.Name == "" {
			return fmt.Sprintf("Missing required parameter: 'tools[%d].function.name'.", i)
		}
	}

	// Every assistant tool call must be answered by a tool message before
	// the conversation moves on, and every tool message must answer one.
	var pending []string
	unanswered := func() string {
		return "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
			"'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(pending, ", ")
	}
	for i, m := range b.Messages {
		switch m.Role {
		case "system", "developer", "user", "assistant", "function":
			if len(pending) > 0 {
				return unanswered()
			}
			for j, tc := range m.ToolCalls {
				if m.Role != "assistant" {
					return fmt.Sprintf("Additional properties are not allowed ('tool_calls' was unexpected) - 'messages.%d'", i)
				}
				if tc.ID == "" {
					return fmt.Sprintf("Missing required parameter: 'messages[%d].tool_calls[%d].id'.", i, j)
				}
				if tc.Type != "function" || tc.Function.Name == "" {
					return fmt.Sprintf("Invalid 'messages[%d].tool_calls[%d]': a function tool call needs a name.", i, j)
				}
				pending = append(pending, tc.ID)
			}
		case "tool":
			k := slices.Index(pending, m.ToolCallID)
			if k < 0 {
				return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
			}
			pending = slices.Delete(pending, k, k+1)
		default:
			return fmt.Sprintf("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", m.Role)
		}
	}
	if len(pending) > 0 {
		return unanswered()
	}
	return ""
}

func writeError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": nil, "code": nil,
	}})
}

// answer is one successful response, ready to be written either way.
type answer struct {
	id, model       string
	created         int64
	reasoning, text string
	calls           []ToolCall
	chunk           int
	pace            time.Duration // wait between streamed chunks
	dropAfter       int           // close the connection after this many chunks; 0: never
	progress        func(chunks int, complete bool)
	usage           Usage
}

func (a *answer) finishReason() string {
	if len(a.calls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// estimateUsage counts roughly four bytes per token, the usual rule of thumb;
// tests should only rely on the numbers being positive and adding up.
func (a *answer) estimateUsage(b *ChatRequest) Usage {
	tokens := func(s string) int { return (len(s) + 3) / 4 }
	var u Usage
	for _, m := range b.Messages {
		u.PromptTokens += 4 + tokens(m.Content.String())
		for _, tc := range m.ToolCalls {
			u.PromptTokens += tokens(tc.Function.Name + tc.Function.Arguments)
		}
	}
	u.CompletionTokensDetails.ReasoningTokens = tokens(a.reasoning)
	u.CompletionTokens = tokens(a.text) + u.CompletionTokensDetails.ReasoningTokens
	for _, tc := range a.calls {
		u.CompletionTokens += tokens(tc.Function.Name + tc.Function.Arguments)
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

func (a *answer) complete(w http.ResponseWriter) {
	msg := wireMessage{Role: "assistant", ReasoningContent: a.reasoning, ToolCalls: a.calls}
	// The real API sends "content": null, not "", when it only calls tools.
	if a.text != "" || len(a.calls) == 0 {
		msg.Content = &a.text
	}
	w.Header().Set("Content-Type", "application/json")
	defer a.progress(0, true)
	_ = json.NewEncoder(w).Encode(completion{
		ID: a.id, Object: "chat.completion", Created: a.created, Model: a.model, SystemFingerprint: "fp_openaitest",
		Choices: []completionChoice{{Message: msg, FinishReason: a.finishReason()}},
		Usage:   a.usage,
	})
}

// stream writes the answer as server-sent events, in the real API's order:
// a role delta, reasoning pieces, content pieces, then each tool call
// announced (index, id, type, name, empty arguments) before its arguments
// follow in pieces; then a finish_reason chunk, the usage chunk if asked,
// and [DONE]. It stops as soon as the client goes away.
func (a *answer) stream(w http.ResponseWriter, r *http.Request, includeUsage bool) {
	var deltas []delta
	if a.text != "" || a.reasoning != "" || len(a.calls) == 0 {
		deltas = append(deltas, delta{Content: new(string)})
	}
	for _, p := range scripted.SplitChunks(a.reasoning, a.chunk) {
		deltas = append(deltas, delta{ReasoningContent: p})
	}
	for _, p := range scripted.SplitChunks(a.text, a.chunk) {
		deltas = append(deltas, delta{Content: &p})
	}
	for i, tc := range a.calls {
		deltas = append(deltas, delta{ToolCalls: []toolCallDelta{{
			Index: i, ID: tc.ID, Type: tc.Type, Function: functionDelta{Name: tc.Function.Name},
		}}})
		for _, p := range scripted.SplitChunks(tc.Function.Arguments, a.chunk) {
			deltas = append(deltas, delta{ToolCalls: []toolCallDelta{{Index: i, Function: functionDelta{Arguments: p}}}})
		}
	}
	// Like the real API, the role rides on the first delta rather than on
	// an event of its own when the answer is only tool calls.
	deltas[0].Role = "assistant"

	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)

	base := chunk{ID: a.id, Object: "chat.completion.chunk", Created: a.created, Model: a.model, SystemFingerprint: "fp_openaitest"}
	if includeUsage {
		// With include_usage, every chunk but the last carries "usage": null.
		base.Usage = json.RawMessage("null")
	}
	send := func(data any) bool {
		if r.Context().Err() != nil {
			return false
		}
		b, err := json.Marshal(data)
		if err != nil {
			panic(err) // only our own types are marshalled
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		a.progress(1, false)
		return true
	}

	var pace *time.Ticker
	if a.pace > 0 {
		// A ticker, not a sleep per chunk: the pace stays steady however long a write takes.
		pace = time.NewTicker(a.pace)
		defer pace.Stop()
	}
	for i, d := range deltas {
		if a.dropAfter > 0 && i == a.dropAfter {
			drop(w)
			return
		}
		if pace != nil && i > 0 {
			select {
			case <-r.Context().Done():
				return
			case <-pace.C:
			}
		}
		c := base
		c.Choices = []chunkChoice{{Delta: d}}
		if !send(c) {
			return
		}
	}
	finish := a.finishReason()
	c := base
	c.Choices = []chunkChoice{{FinishReason: &finish}}
	if !send(c) {
		return
	}
	if includeUsage {
		c := base
		c.Choices = []chunkChoice{}
		c.Usage, _ = json.Marshal(a.usage)
		if !send(c) {
			return
		}
	}
	if r.Context().Err() == nil {
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
		if flusher != nil {
			flusher.Flush()
		}
		a.progress(0, true)
	}
}

// drop closes the connection under a stream in progress: the client reads a chunked body
// that never ends properly (io.ErrUnexpectedEOF), as when a provider's connection is lost.
func drop(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(fmt.Sprintf("openaitest: cannot drop the connection: %v", err))
	}
	_ = conn.Close()
}

// ChatRequest is the decoded body of a chat-completions request. Fields the
// server does not need are only in Request.Raw.
type ChatRequest struct {
	Model         string         `json:"model"`
	Messages      []Message      `json:"messages"`
	Tools         []Tool         `json:"tools,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
	Stop          Stop           `json:"stop,omitempty"`
}

// StreamOptions is the request's stream_options.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Stop holds the request's stop sequences; the API accepts a string or an
// array of strings.
type Stop []string

// UnmarshalJSON accepts both forms.
func (s *Stop) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = Stop{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

// Message is one message of the request.
type Message struct {
	Role       string     `json:"role"`
	Content    Content    `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// Content is a message's content: a string, an array of parts, or null.
type Content struct {
	// Text is set when the content was a string.
	Text string
	// Parts is set when the content was an array of parts.
	Parts []ContentPart
}

// String returns the text of the content; for parts, the text parts joined.
func (c Content) String() string {
	if c.Parts == nil {
		return c.Text
	}
	var sb strings.Builder
	for _, p := range c.Parts {
		sb.WriteString(p.Text)
	}
	return sb.String()
}

// UnmarshalJSON accepts a string, an array of parts or null.
func (c *Content) UnmarshalJSON(b []byte) error {
	*c = Content{}
	switch b = bytes.TrimSpace(b); {
	case bytes.Equal(b, []byte("null")):
		return nil
	case len(b) > 0 && b[0] == '[':
		if err := json.Unmarshal(b, &c.Parts); err != nil {
			return err
		}
		if c.Parts == nil {
			c.Parts = []ContentPart{}
		}
		return nil
	default:
		return json.Unmarshal(b, &c.Text)
	}
}

// MarshalJSON writes the form the content was read in.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Parts != nil {
		return json.Marshal(c.Parts)
	}
	return json.Marshal(c.Text)
}

// ContentPart is one part of an array content. LangChainGo sends "text" and
// "image_url" parts, and its own non-OpenAI "binary" parts for BinaryContent.
type ContentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *ImageURL `json:"image_url,omitempty"`
}

// ImageURL is the payload of an "image_url" part.
type ImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// Tool is a tool offered to the model.
type Tool struct {
	Type     string             `json:"type"`
	Function FunctionDefinition `json:"function"`
}

// FunctionDefinition describes a function tool.
type FunctionDefinition struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      bool            `json:"strict,omitempty"`
}

// ToolCall is a tool call, in a request's assistant message or a response.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall is the function part of a tool call.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Usage is the token usage of a response (estimated, see answer.estimateUsage).
type Usage struct {
	PromptTokens            int `json:"prompt_tokens"`
	CompletionTokens        int `json:"completion_tokens"`
	TotalTokens             int `json:"total_tokens"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// Response-side wire types.
type (
	completion struct {
		ID                string             `json:"id"`
		Object            string             `json:"object"`
		Created           int64              `json:"created"`
		Model             string             `json:"model"`
		SystemFingerprint string             `json:"system_fingerprint"`
		Choices           []completionChoice `json:"choices"`
		Usage             Usage              `json:"usage"`
	}
	completionChoice struct {
		Index        int         `json:"index"`
		Message      wireMessage `json:"message"`
		Logprobs     *struct{}   `json:"logprobs"`
		FinishReason string      `json:"finish_reason"`
	}
	wireMessage struct {
		Role             string     `json:"role"`
		Content          *string    `json:"content"`
		ReasoningContent string     `json:"reasoning_content,omitempty"`
		ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
		Refusal          *string    `json:"refusal"`
	}
	chunk struct {
		ID                string          `json:"id"`
		Object            string          `json:"object"`
		Created           int64           `json:"created"`
		Model             string          `json:"model"`
		SystemFingerprint string          `json:"system_fingerprint"`
		Choices           []chunkChoice   `json:"choices"`
		Usage             json.RawMessage `json:"usage,omitempty"`
	}
	chunkChoice struct {
		Index        int       `json:"index"`
		Delta        delta     `json:"delta"`
		Logprobs     *struct{} `json:"logprobs"`
		FinishReason *string   `json:"finish_reason"`
	}
	delta struct {
		Role             string          `json:"role,omitempty"`
		Content          *string         `json:"content,omitempty"`
		ReasoningContent string          `json:"reasoning_content,omitempty"`
		ToolCalls        []toolCallDelta `json:"tool_calls,omitempty"`
	}
	toolCallDelta struct {
		Index    int           `json:"index"`
		ID       string        `json:"id,omitempty"`
		Type     string        `json:"type,omitempty"`
		Function functionDelta `json:"function"`
	}
	functionDelta struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	}
)
