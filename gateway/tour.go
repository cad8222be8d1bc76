package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/streamrules/streamrules"
)

// tour runs one request of a move: the upstream calls it takes until an answer is
// accepted (a discard is replayed with the interrupt; a call a gate refuses in place
// gets its refusal as the result, upstream only).
type tour struct {
	g    *Gateway
	c    *chat
	om   *openMove
	in   *http.Request
	q    *request
	msgs []json.RawMessage // the upstream copy of the conversation, growing with replays

	hidden []json.RawMessage // refused responses and their refusals, upstream only, this request
	total  usage             // every upstream call's usage
	calls  int               // upstream calls made
	abort  bool              // the client's stream failed half-way: cut the connection
}

// response is one upstream answer as the rules read it.
type response struct {
	obj      object     // the whole response (non-streaming)
	message  object     // choices[0].message
	content  string     // its text
	calls    []wireCall // its tool calls
	callsRaw []json.RawMessage
	usage    usage
	usageRaw json.RawMessage
}

// upstreamError is an upstream answer other than 2xx: passed to the client as it came.
type upstreamError struct {
	status int
	header http.Header
	body   []byte
}

func (e *upstreamError) Error() string {
	return fmt.Sprintf("gateway: upstream answered %d: %s", e.status, bytes.TrimSpace(e.body))
}

// run makes the tour's upstream calls and writes the accepted answer to w. It returns the
// ids of the tool calls the client got (none: the answer is final), or the error the move
// ends with; the client has been answered either way.
func (t *tour) run(ctx context.Context, w http.ResponseWriter) ([]string, error) {
	if t.q.stream {
		return t.runStream(ctx, w)
	}
	move := t.om.move
	for {
		move.BeginTour() // an environment set since the last model call holds from here on
		resp, err := t.call(ctx)
		if err != nil {
			t.fail(w, err)
			return nil, err
		}
		if move.HasThinkingRules() {
			// The reasoning first, as the model wrote it: a miss discards the whole response
			// (reasoning, text and calls) unseen; the replay gets its text, never its reasoning.
			if v := move.CheckThinking(ctx, resp.reasoning()); v.Discard {
				t.msgs = withInterrupt(t.msgs, resp.content, v.Interrupt)
				continue
			}
		}
		v := move.CheckResponse(ctx, resp.content, declared(resp.calls))
		if v.Discard {
			t.msgs = withInterrupt(t.msgs, resp.content, v.Interrupt)
			continue
		}
		if v.Fixed != "" {
			resp.message = resp.message.set("content", jsonString(v.Fixed))
		}
		kept, again := t.gate(ctx, resp)
		if again {
			continue
		}
		t.writeJSON(w, resp)
		return kept, nil
	}
}

// gate asks the move, for each call of an accepted response, whether a gate refuses it
// (Move.GateCall; a gate in shadow records a would-fire and lets it through). A refused
// call never reaches the client. When every call is refused, the upstream gets the
// refusals as the calls' results at once (again: call it again); otherwise the client
// gets the other calls, and the next tour's upstream copy the refusals beside their
// results. It returns the ids of the calls the client gets.
func (t *tour) gate(ctx context.Context, resp *response) (kept []string, again bool) {
	if len(resp.calls) == 0 {
		if len(t.hidden) > 0 {
			t.g.log.Debug("gateway: a refused call's tour is not kept past the move's final answer", "chat", t.c.id)
		}
		return nil, false
	}
	var refusals []json.RawMessage
	var keptRaw []json.RawMessage
	for i, c := range resp.calls {
		if r := t.om.move.GateCall(ctx, c.Function.Name, c.Function.Arguments); r != nil {
			refusals = append(refusals, object{
				{"role", jsonString("tool")},
				{"tool_call_id", jsonString(c.ID)},
				{"content", jsonString(t.g.splice("", r))},
			}.bytes())
			continue
		}
		kept = append(kept, c.ID)
		keptRaw = append(keptRaw, resp.callsRaw[i])
	}
	if len(refusals) == 0 {
		if len(t.hidden) > 0 {
			t.c.expand[kept[0]] = expansion{before: t.hidden}
		}
		return kept, false
	}
	whole := resp.message.bytes()
	if len(kept) == 0 {
		t.hidden = append(t.hidden, whole)
		t.hidden = append(t.hidden, refusals...)
		t.msgs = append(t.msgs, whole)
		t.msgs = append(t.msgs, refusals...)
		return nil, true
	}
	t.c.expand[kept[0]] = expansion{before: t.hidden, replace: whole, after: refusals}
	resp.message = resp.message.set("tool_calls", array(keptRaw))
	return kept, false
}

// declared is the calls as the engine reads them.
func declared(calls []wireCall) []streamrules.DeclaredCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]streamrules.DeclaredCall, len(calls))
	for i, c := range calls {
		out[i] = streamrules.DeclaredCall{Tool: c.Function.Name, Input: c.Function.Arguments}
	}
	return out
}

// withInterrupt returns the upstream copy for the replay: the discarded answer's text as
// an assistant message (neutralised; its calls dropped: they never ran) and the interrupt
// as a user message.
func withInterrupt(msgs []json.RawMessage, discarded, interrupt string) []json.RawMessage {
	out := slices.Clip(msgs)
	if discarded != "" {
		out = append(out, object{{"role", jsonString("assistant")}, {"content", jsonString(streamrules.Neutralize(discarded))}}.bytes())
	}
	return append(out, object{{"role", jsonString("user")}, {"content", jsonString(interrupt)}}.bytes())
}

// body is the upstream request body: the client's, with the upstream copy of the messages.
func (t *tour) body() []byte {
	return t.q.obj.set("messages", array(t.msgs)).bytes()
}

// post sends the body upstream; the caller closes the response body.
func (t *tour) post(ctx context.Context) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.g.base+"/chat/completions", bytes.NewReader(t.body()))
	if err != nil {
		return nil, err
	}
	t.g.upstreamHeaders(req, t.in)
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.g.cfg.Client.Do(req)
	if err != nil {
		return nil, err
	}
	t.calls++
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, &upstreamError{status: resp.StatusCode, header: resp.Header, body: body}
	}
	return resp, nil
}

// call makes one non-streaming upstream call and reads its answer.
func (t *tour) call(ctx context.Context) (*response, error) {
	cctx, cancel := t.g.headerTimeout(ctx)
	defer cancel()
	hr, err := t.post(cctx)
	if err != nil {
		return nil, err
	}
	defer hr.Body.Close()
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		return nil, fmt.Errorf("gateway: reading the upstream answer: %w", err)
	}
	obj, err := parseObject(body)
	if err != nil {
		return nil, fmt.Errorf("gateway: the upstream answer is not a JSON object: %w", err)
	}
	resp := &response{obj: obj}
	if raw, ok := obj.get("usage"); ok && !isNull(raw) {
		resp.usageRaw = raw
		_ = json.Unmarshal(raw, &resp.usage)
		t.total.add(resp.usage)
	}
	raw, _ := obj.get("choices")
	choices, err := splitArray(raw)
	if err != nil || len(choices) == 0 {
		return nil, errors.New("gateway: the upstream answer has no choices")
	}
	choice, err := splitObject(choices[0])
	if err != nil {
		return nil, fmt.Errorf("gateway: upstream choice: %w", err)
	}
	mraw, _ := choice.get("message")
	if resp.message, err = splitObject(mraw); err != nil {
		return nil, fmt.Errorf("gateway: upstream message: %w", err)
	}
	if err := resp.readMessage(); err != nil {
		return nil, err
	}
	return resp, nil
}

// readMessage reads the content and calls of resp.message.
func (resp *response) readMessage() error {
	craw, _ := resp.message.get("content")
	resp.content = contentText(craw)
	if traw, ok := resp.message.get("tool_calls"); ok && !isNull(traw) {
		if err := json.Unmarshal(traw, &resp.callsRaw); err != nil {
			return fmt.Errorf("gateway: upstream tool_calls: %w", err)
		}
		resp.calls = make([]wireCall, len(resp.callsRaw))
		for i, c := range resp.callsRaw {
			if err := json.Unmarshal(c, &resp.calls[i]); err != nil {
				return fmt.Errorf("gateway: upstream tool_calls[%d]: %w", i, err)
			}
		}
	}
	return nil
}

// reasoning is the message's reasoning text: reasoning_content (DeepSeek, vLLM), or where
// that is absent reasoning (OpenRouter, some vLLM builds); "" when it has none.
func (resp *response) reasoning() string {
	for _, name := range []string{"reasoning_content", "reasoning"} {
		if raw, ok := resp.message.get(name); ok && !isNull(raw) {
			var s string
			if json.Unmarshal(raw, &s) == nil && s != "" {
				return s
			}
		}
	}
	return ""
}

// writeJSON answers a non-streaming request: the upstream's object with the accepted
// message in choices[0] and, when the tour took several calls, their usage summed.
func (t *tour) writeJSON(w http.ResponseWriter, resp *response) {
	obj := resp.obj
	raw, _ := obj.get("choices")
	choices, _ := splitArray(raw)
	choice, _ := splitObject(choices[0])
	choice = choice.set("message", resp.message.bytes())
	if len(resp.calls) > 0 {
		if tr, ok := resp.message.get("tool_calls"); ok && string(tr) == "[]" {
			choice = choice.set("finish_reason", jsonString("stop"))
		}
	}
	choices[0] = choice.bytes()
	obj = obj.set("choices", array(choices))
	if t.calls > 1 && resp.usageRaw != nil {
		obj = obj.set("usage", withUsage(resp.usageRaw, t.total))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(obj.bytes())
}

// fail answers the client with what went wrong: an upstream error as it came, else 502
// (504 for a timeout). Nothing was written before.
func (t *tour) fail(w http.ResponseWriter, err error) {
	var ue *upstreamError
	switch {
	case errors.As(err, &ue):
		if ct := ue.header.Get("Content-Type"); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		if ra := ue.header.Get("Retry-After"); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		w.WriteHeader(ue.status)
		_, _ = w.Write(ue.body)
	case errors.Is(err, context.DeadlineExceeded):
		writeError(w, http.StatusGatewayTimeout, "upstream_error", "gateway: the upstream did not answer within --upstream-timeout")
	case t.in.Context().Err() != nil:
		// The client is gone: nobody to answer.
	default:
		writeError(w, http.StatusBadGateway, "upstream_error", err.Error())
	}
}
