package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamrules/streamrules"
)

// The errors a move ends with when no final answer came.
var (
	errAbandoned = errors.New("gateway: move abandoned: no next tour within the idle timeout")
	errReplaced  = errors.New("gateway: move abandoned: the chat began a new move")
	errClosed    = errors.New("gateway: closed with the move open")
)

// chat is what the gateway keeps of one chat: its open move, and the prompt copies of
// its tool results, so every later request lays them out byte-identically.
type chat struct {
	id  string
	own bool // no X-Streamrules-Chat: its tours are found by their tool call ids

	mu      sync.Mutex
	gone    bool // dropped from the gateway's map: look it up again
	open    *openMove
	splices map[string]json.RawMessage // tool_call_id → the content upstream gets
	expand  map[string]expansion       // first tool_call id of an assistant message → what upstream gets around it
	timer   *time.Timer
}

// expansion is what the upstream copy has around an assistant message of the client's
// history that the client's copy lacks: the responses whose calls a gate refused before
// it (and their refusals), or, when the assistant message kept some calls and lost
// others, the whole message and the refused calls' refusals after it.
type expansion struct {
	before  []json.RawMessage
	replace json.RawMessage // nil: the client's message as it is
	after   []json.RawMessage
}

// openMove is a move between its tours.
type openMove struct {
	move   *streamrules.Move
	expect []string        // ids of the tool calls the client got in the move's last response
	judged map[string]bool // tool_call ids whose results were judged (a repeated request reuses them)
}

// wireMsg is the part of a message the gateway reads.
type wireMsg struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []wireCall      `json:"tool_calls"`
}

type wireCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// request is a chat-completions request as the gateway reads it.
type request struct {
	obj    object
	raws   []json.RawMessage
	msgs   []wireMsg
	stream bool
	usage  bool // stream_options.include_usage
	tail   int  // index of the first of the trailing role=tool messages; len(msgs): none
}

// assistant is the message the trailing tool results answer (tail-1).
func (q *request) assistant() *wireMsg {
	if q.tail == len(q.msgs) || q.tail == 0 {
		return nil
	}
	return &q.msgs[q.tail-1]
}

// badRequest is a client error: status and message.
type badRequest struct {
	status int
	msg    string
}

func (e *badRequest) Error() string { return e.msg }

func bad(format string, args ...any) *badRequest {
	return &badRequest{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// readRequest reads and checks the body.
func (g *Gateway) readRequest(w http.ResponseWriter, r *http.Request) (*request, *badRequest) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.cfg.MaxBody))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, &badRequest{http.StatusRequestEntityTooLarge, fmt.Sprintf("gateway: request body over %d bytes (the gateway's --max-body)", mb.Limit)}
		}
		return nil, bad("gateway: could not read the request body: %v", err)
	}
	obj, err := parseObject(body)
	if err != nil {
		return nil, bad("gateway: the request body is not a JSON object: %v", err)
	}
	q := &request{obj: obj}
	if raw, ok := obj.get("n"); ok && !isNull(raw) {
		var n int
		if json.Unmarshal(raw, &n) != nil {
			return nil, bad("gateway: n must be an integer")
		}
		if n > 1 {
			return nil, bad("gateway: n=%d is not supported: the stream rules judge one answer per request and replay it on a miss; ask for n=1 (or leave n out) and send several requests", n)
		}
	}
	if raw, ok := obj.get("stream"); ok && !isNull(raw) {
		if json.Unmarshal(raw, &q.stream) != nil {
			return nil, bad("gateway: stream must be true or false")
		}
	}
	if raw, ok := obj.get("stream_options"); ok && !isNull(raw) {
		var so struct {
			IncludeUsage bool `json:"include_usage"`
		}
		if json.Unmarshal(raw, &so) != nil {
			return nil, bad("gateway: stream_options must be an object")
		}
		q.usage = so.IncludeUsage
	}
	raw, ok := obj.get("messages")
	if ok {
		q.raws, err = splitArray(raw)
	}
	if !ok || err != nil || len(q.raws) == 0 {
		return nil, bad("gateway: messages must be a non-empty array")
	}
	q.msgs = make([]wireMsg, len(q.raws))
	for i, m := range q.raws {
		if err := json.Unmarshal(m, &q.msgs[i]); err != nil {
			return nil, bad("gateway: messages[%d]: %v", i, err)
		}
	}
	q.tail = len(q.msgs)
	for q.tail > 0 && q.msgs[q.tail-1].Role == "tool" {
		q.tail--
	}
	if q.tail < len(q.msgs) {
		a := q.assistant()
		if a == nil || a.Role != "assistant" || len(a.ToolCalls) == 0 {
			return nil, bad("gateway: messages[%d]: a role=tool message must follow an assistant message with tool_calls", q.tail)
		}
		for i := q.tail; i < len(q.msgs); i++ {
			id := q.msgs[i].ToolCallID
			if !slices.ContainsFunc(a.ToolCalls, func(c wireCall) bool { return c.ID == id }) {
				return nil, bad("gateway: messages[%d]: role=tool answers tool_call_id %q, which messages[%d] did not call", i, id, q.tail-1)
			}
		}
	}
	return q, nil
}

// completions serves POST /v1/chat/completions.
func (g *Gateway) completions(w http.ResponseWriter, r *http.Request) {
	id, err := g.readIdentity(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "gateway: "+err.Error())
		return
	}
	if _, ok := g.authorize(w, r, id.envs); !ok {
		return
	}
	q, berr := g.readRequest(w, r)
	if berr != nil {
		writeError(w, berr.status, "invalid_request_error", berr.msg)
		return
	}
	c := g.lockChat(id, q)
	defer g.unlockChat(c)
	ctx := r.Context()
	om := c.open
	if om != nil && !om.answers(q) {
		g.endOpen(ctx, c, errReplaced) // the client's history left the move: a new one begins
		om = nil
	}
	if om == nil {
		_, m := g.eng.BeginMove(context.WithoutCancel(ctx), c.id, id.envs...)
		om = &openMove{move: m, judged: map[string]bool{}}
		c.open = om
		if in, ok := lastUser(q); ok {
			m.SetInput(in)
		}
	} else if id.envsSent {
		om.move.SetEnvironment(id.envs...) // from the next model call on (Move.BeginTour)
	}
	for _, kv := range id.vars {
		om.move.SetVar(kv[0], kv[1])
	}
	g.judgeResults(ctx, c, om, q)
	t := &tour{g: g, c: c, om: om, in: r, q: q, msgs: c.upstreamMessages(q)}
	calls, err := t.run(ctx, w)
	var ue *upstreamError
	if errors.As(err, &ue) {
		// The upstream refused the call (429, 5xx, …) and the client got its answer: the
		// move stays open, so the client's retry of this request is the same tour (its tool
		// results are not judged twice), or, if it never comes, the idle timeout ends it.
		return
	}
	if err != nil || len(calls) == 0 {
		g.endOpen(ctx, c, err) // the final answer ends the move, with one write
		if t.abort {
			panic(http.ErrAbortHandler) // after the move's end; the deferred unlock runs
		}
		return
	}
	om.expect = calls
	if c.own {
		g.mu.Lock()
		for _, id := range calls {
			g.calls[id] = c.id
		}
		g.mu.Unlock()
	}
}

// answers reports whether q is the next tour of the open move: its trailing tool results
// answer the calls of the move's last response.
func (om *openMove) answers(q *request) bool {
	a := q.assistant()
	if a == nil || len(om.expect) == 0 {
		return false
	}
	for _, c := range a.ToolCalls {
		if !slices.Contains(om.expect, c.ID) {
			return false
		}
	}
	return true
}

// lastUser is the text of the last user message: the move's input.
func lastUser(q *request) (string, bool) {
	for i := len(q.msgs) - 1; i >= 0; i-- {
		if q.msgs[i].Role == "user" {
			return contentText(q.msgs[i].Content), true
		}
	}
	return "", false
}

// judgeResults judges the calls the trailing tool results answer, once each, and keeps
// the prompt copy of each result: the call's reminders on top of the neutralised output.
func (g *Gateway) judgeResults(ctx context.Context, c *chat, om *openMove, q *request) {
	a := q.assistant()
	if a == nil {
		return
	}
	for i := q.tail; i < len(q.msgs); i++ {
		m := q.msgs[i]
		if om.judged[m.ToolCallID] {
			continue
		}
		om.judged[m.ToolCallID] = true
		k := slices.IndexFunc(a.ToolCalls, func(c wireCall) bool { return c.ID == m.ToolCallID })
		call := a.ToolCalls[k]
		out := contentText(m.Content)
		tctx := ctx
		if failedResult(out) {
			tctx = streamrules.WithToolCall(ctx)
			streamrules.MarkToolFailed(tctx) // for tool_failed, tool_succeeded, edited_unchecked
		}
		reminders := om.move.ToolReminders(tctx, call.Function.Name, call.Function.Arguments)
		if spliced := g.splice(out, reminders); spliced != out || len(reminders) > 0 {
			c.splices[m.ToolCallID] = jsonString(spliced)
		}
	}
}

// failedResult reports whether a tool result says its call failed: the protocol has no
// status, so a result that is a JSON object with a top-level "error" member, or whose text
// starts with "error" (any case, then ':' or space), counts as failed; any other result,
// as succeeded.
func failedResult(out string) bool {
	t := strings.TrimSpace(out)
	if strings.HasPrefix(t, "{") {
		var o map[string]json.RawMessage
		if json.Unmarshal([]byte(t), &o) == nil {
			e, ok := o["error"]
			return ok && !isNull(e) && string(e) != "false" && string(e) != `""`
		}
	}
	if len(t) > 5 && strings.EqualFold(t[:5], "error") {
		return t[5] == ':' || t[5] == ' '
	}
	return false
}

// upstreamMessages is the upstream copy of the client's messages: each tool result as
// judged (its reminders on top), user text neutralised, the calls a gate refused put back
// around the assistant messages they belonged with.
func (c *chat) upstreamMessages(q *request) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(q.raws))
	for i, raw := range q.raws {
		m := &q.msgs[i]
		switch m.Role {
		case "tool":
			if s, ok := c.splices[m.ToolCallID]; ok {
				if o, err := splitObject(raw); err == nil {
					raw = o.set("content", s).bytes()
				}
			}
		case "user":
			var s string
			if json.Unmarshal(m.Content, &s) == nil {
				if n := streamrules.Neutralize(s); n != s {
					if o, err := splitObject(raw); err == nil {
						raw = o.set("content", jsonString(n)).bytes()
					}
				}
			}
		case "assistant":
			if len(m.ToolCalls) > 0 {
				if x, ok := c.expand[m.ToolCalls[0].ID]; ok {
					out = append(out, x.before...)
					if x.replace != nil {
						raw = x.replace
					}
					out = append(out, raw)
					out = append(out, x.after...)
					continue
				}
			}
		}
		out = append(out, raw)
	}
	return out
}

// lockChat finds (or makes) the request's chat and locks it.
func (g *Gateway) lockChat(id identity, q *request) *chat {
	for {
		chatID, own := id.chat, id.chat == ""
		g.mu.Lock()
		if own {
			chatID = ""
			if a := q.assistant(); a != nil {
				chatID = g.calls[a.ToolCalls[0].ID]
			}
			if chatID == "" {
				chatID = newChatID()
			}
		}
		c := g.chats[chatID]
		if c == nil {
			c = &chat{id: chatID, own: own, splices: map[string]json.RawMessage{}, expand: map[string]expansion{}}
			g.chats[chatID] = c
		}
		g.mu.Unlock()
		c.mu.Lock()
		if !c.gone {
			if c.timer != nil {
				c.timer.Stop()
			}
			return c
		}
		c.mu.Unlock()
	}
}

// unlockChat arms the chat's idle timer and unlocks it.
func (g *Gateway) unlockChat(c *chat) {
	if c.timer == nil {
		c.timer = time.AfterFunc(g.cfg.IdleTimeout, func() { g.idle(c) })
	} else {
		c.timer.Reset(g.cfg.IdleTimeout)
	}
	c.mu.Unlock()
}

// idle ends an abandoned move and forgets the chat.
func (g *Gateway) idle(c *chat) {
	if !c.mu.TryLock() {
		return // a request has it: its end re-arms the timer
	}
	g.endOpen(context.Background(), c, errAbandoned)
	c.gone = true
	c.mu.Unlock()
	g.mu.Lock()
	if g.chats[c.id] == c {
		delete(g.chats, c.id)
	}
	g.mu.Unlock()
}

// endOpen ends the chat's open move, if any: answered when err is nil. Caller holds c.mu.
func (g *Gateway) endOpen(ctx context.Context, c *chat, err error) {
	om := c.open
	if om == nil {
		return
	}
	c.open = nil
	if c.own && len(om.expect) > 0 {
		g.mu.Lock()
		for _, id := range om.expect {
			delete(g.calls, id)
		}
		g.mu.Unlock()
	}
	if e := om.move.End(context.WithoutCancel(ctx), err); e != nil && !errors.Is(e, err) {
		g.log.Warn("gateway: move end", "chat", c.id, "err", e)
	}
}

// usage is the token count of a response.
type usage struct {
	Prompt     int64 `json:"prompt_tokens"`
	Completion int64 `json:"completion_tokens"`
	Total      int64 `json:"total_tokens"`
}

func (u *usage) add(o usage) {
	u.Prompt += o.Prompt
	u.Completion += o.Completion
	u.Total += o.Total
}

// withUsage returns the usage object raw with its three counts set to u, its other
// fields (details) as they came.
func withUsage(raw json.RawMessage, u usage) json.RawMessage {
	o, err := splitObject(raw)
	if err != nil {
		o = nil
	}
	o = o.set("prompt_tokens", json.RawMessage(strconv.FormatInt(u.Prompt, 10)))
	o = o.set("completion_tokens", json.RawMessage(strconv.FormatInt(u.Completion, 10)))
	o = o.set("total_tokens", json.RawMessage(strconv.FormatInt(u.Total, 10)))
	return o.bytes()
}
