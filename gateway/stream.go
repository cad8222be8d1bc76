package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/streamrules/streamrules"
)

// Streaming: the upstream streams too. Content deltas go to the client as the engine's
// release lets them (Scanner.Release: what no continuation can discard, repair or cut),
// or one by one when no rule could discard the answer (no text rule or gate armed).
// Tool-call deltas are always assembled and held until the response ends: the gates
// judge whole calls, and a refused call never reaches the client. The client's stream is
// written by the gateway (sseWriter): one id, one role, the accepted text, the calls the
// client gets, a finish chunk, usage summed over every upstream call when asked, [DONE].

var (
	errUpstreamTimeout = errors.New("gateway: the upstream sent nothing within --upstream-timeout")
	errCut             = errors.New("gateway: answer cut at an early miss")
)

// sseWriter writes the client's stream.
type sseWriter struct {
	w        http.ResponseWriter
	rc       *http.ResponseController
	started  bool
	roleSent bool
	usage    bool // the client asked for stream_options.include_usage
	head     chunkHead
	buf      bytes.Buffer
	prefix   []byte // a content chunk up to its text (content)
	suffix   []byte // and after it
	// hold: the events written go out together at the next flush, not one flush each.
	// Set only while the events to come were released with them (the upstream lines
	// already read, the end of a stream): the caller flushes before anything can block.
	hold  bool
	dirty bool // written since the last flush
}

// send writes an event's bytes and flushes them, unless held for the next flush.
func (s *sseWriter) send(b []byte) error {
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	if s.hold {
		s.dirty = true
		return nil
	}
	s.dirty = false
	return s.rc.Flush()
}

// flush sends what was held.
func (s *sseWriter) flush() error {
	if !s.dirty {
		return nil
	}
	s.dirty = false
	return s.rc.Flush()
}

// chunkHead is what every chunk of the client's stream repeats: the first upstream chunk's.
type chunkHead struct {
	set     bool
	id      string
	created int64
	model   string
	fp      string
}

func (s *sseWriter) start() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
}

// data writes one event.
func (s *sseWriter) data(b []byte) error {
	s.start()
	s.buf.Reset()
	s.buf.WriteString("data: ")
	s.buf.Write(b)
	s.buf.WriteString("\n\n")
	return s.send(s.buf.Bytes())
}

// chunk writes a chunk with one choice: delta (an object's fields, without braces) and a
// finish reason ("": null).
func (s *sseWriter) chunk(delta object, finish string) error {
	if !s.roleSent {
		delta = append(object{{"role", json.RawMessage(`"assistant"`)}}, delta...)
		s.roleSent = true
	}
	fin := json.RawMessage("null")
	if finish != "" {
		fin = jsonString(finish)
	}
	choice := object{{"index", json.RawMessage("0")}, {"delta", delta.bytes()}, {"logprobs", json.RawMessage("null")}, {"finish_reason", fin}}
	o := s.headObject()
	o = append(o, field{"choices", array([]json.RawMessage{choice.bytes()})})
	if s.usage {
		o = append(o, field{"usage", json.RawMessage("null")})
	}
	return s.data(o.bytes())
}

func (s *sseWriter) headObject() object {
	o := object{{"id", jsonString(s.head.id)}, {"object", json.RawMessage(`"chat.completion.chunk"`)},
		{"created", json.RawMessage(strconv.FormatInt(s.head.created, 10))}, {"model", jsonString(s.head.model)}}
	if s.head.fp != "" {
		o = append(o, field{"system_fingerprint", jsonString(s.head.fp)})
	}
	return o
}

// content writes a content delta. The chunk's fixed parts are made once per stream; per
// chunk only the text is encoded, into the writer's buffer.
func (s *sseWriter) content(text []byte) error {
	if len(text) == 0 {
		return nil
	}
	if !s.roleSent {
		return s.chunk(object{{"content", jsonString(string(text))}}, "")
	}
	if s.prefix == nil {
		s.prefix = s.headObject().bytes()
		s.prefix = append(s.prefix[:len(s.prefix)-1], `,"choices":[{"index":0,"delta":{"content":`...)
		s.suffix = []byte(`},"logprobs":null,"finish_reason":null}]`)
		if s.usage {
			s.suffix = append(s.suffix, `,"usage":null`...)
		}
		s.suffix = append(s.suffix, '}')
	}
	s.start()
	s.buf.Reset()
	s.buf.WriteString("data: ")
	s.buf.Write(s.prefix)
	s.buf.Write(appendJSONString(s.buf.AvailableBuffer(), text))
	s.buf.Write(s.suffix)
	s.buf.WriteString("\n\n")
	return s.send(s.buf.Bytes())
}

// appendJSONString appends s as a JSON string, as encoding/json writes it without HTML
// escaping: quotes, backslashes and control characters escaped, invalid UTF-8 as U+FFFD,
// U+2028 and U+2029 escaped.
func appendJSONString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// chunkIn is the part of an upstream chunk the gateway reads.
type chunkIn struct {
	ID                string          `json:"id"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	SystemFingerprint string          `json:"system_fingerprint"`
	Choices           []chunkChoiceIn `json:"choices"`
	Usage             json.RawMessage `json:"usage"`
	Error             json.RawMessage `json:"error"`
}

type chunkChoiceIn struct {
	Index int `json:"index"`
	Delta struct {
		Role    string  `json:"role"`
		Content *string `json:"content"`
		// Reasoning deltas (DeepSeek, vLLM, OpenRouter name them either way): judged by
		// the thinking rules, held with the answer they precede.
		ReasoningContent string `json:"reasoning_content"`
		Reasoning        string `json:"reasoning"`
		ToolCalls        []struct {
			Index    int    `json:"index"`
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

// contentOnly reports whether ch is a plain content delta: one choice, index 0, text,
// nothing else the gateway reads.
func (ch *chunkIn) contentOnly() bool {
	if len(ch.Choices) != 1 || !isNull(ch.Usage) || !isNull(ch.Error) {
		return false
	}
	c := &ch.Choices[0]
	d := &c.Delta
	return c.Index == 0 && c.FinishReason == nil && d.Content != nil && d.Role == "" &&
		d.ReasoningContent == "" && d.Reasoning == "" && len(d.ToolCalls) == 0
}

// chunkShape is a plain content chunk's bytes around its text, learnt from the first
// one decoded in full. A later chunk with the same bytes around a plain JSON string
// decodes as that chunk with that text (everything else the same bytes), so its text is
// read without decoding it again: upstreams repeat every field but the text.
type chunkShape struct {
	prefix, suffix []byte
}

// learn takes the shape of data, a chunk that decoded as a plain content delta, if the
// text's value can be placed in it exactly (one choices[0].delta.content key).
func (cs *chunkShape) learn(data []byte) {
	start, end, ok := contentSpan(data)
	if !ok {
		return
	}
	cs.prefix = bytes.Clone(data[:start])
	cs.suffix = bytes.Clone(data[end:])
}

// text returns the chunk's text if data has the learnt shape around a JSON string
// without escapes (any escape, or invalid UTF-8: decoded in full instead).
func (cs *chunkShape) text(data []byte) (string, bool) {
	if cs.prefix == nil || len(data) < len(cs.prefix)+len(cs.suffix)+2 ||
		!bytes.HasPrefix(data, cs.prefix) || !bytes.HasSuffix(data, cs.suffix) {
		return "", false
	}
	v := data[len(cs.prefix) : len(data)-len(cs.suffix)]
	if v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	v = v[1 : len(v)-1]
	for _, c := range v {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(v) {
		return "", false
	}
	return string(v), true
}

// contentSpan finds the bytes of choices[0].delta.content's value in data: [start, end).
// ok is false unless there is exactly one, and it is a string.
func contentSpan(data []byte) (start, end int, ok bool) {
	type frame struct {
		obj     bool
		wantKey bool
		key     string
		idx     int
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []frame
	found := 0
	for {
		var valueAt int64 = -1
		if n := len(stack); n > 0 && stack[n-1].obj && !stack[n-1].wantKey {
			valueAt = dec.InputOffset() // after the key: the value follows its colon
		}
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, false
		}
		n := len(stack)
		if n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			if key, isKey := tok.(string); isKey {
				stack[n-1].key, stack[n-1].wantKey = key, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{obj: true, wantKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:n-1]
			n--
		default:
			if _, isStr := tok.(string); isStr && n == 4 && stack[0].key == "choices" && !stack[1].obj && stack[1].idx == 0 &&
				stack[2].key == "delta" && stack[3].key == "content" && valueAt >= 0 {
				s := int(valueAt)
				for s < len(data) && (data[s] == ' ' || data[s] == '\t' || data[s] == '\r' || data[s] == '\n' || data[s] == ':') {
					s++
				}
				start, end = s, int(dec.InputOffset())
				found++
			}
		}
		// A value ended: the enclosing object wants its next key, an array its next item.
		if n > 0 {
			if stack[n-1].obj {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].idx++
			}
		}
	}
	if found != 1 || start >= end || data[start] != '"' || data[end-1] != '"' {
		return 0, 0, false
	}
	return start, end, true
}

// streamed is one upstream stream, read.
type streamed struct {
	text      []byte      // the answer's text as the upstream streamed it
	shown     []byte      // what the client got of it (the release's bytes)
	calls     []*wireCall // assembled, by index
	finish    string
	done      bool // [DONE] came
	cut       *streamrules.Verdict
	cutAt     int
	shape     chunkShape // the upstream's plain content chunks
	plain     chunkIn    // a plain content chunk read by its shape, and its text
	plainText string
	reasoning [][]byte // reasoning chunks held until the answer's text is released
	think     *thinkWatch
	first     time.Time // the upstream's first content
	seen      time.Time // the client's first content
}

// thinkWatch is one upstream call's watch on the reasoning (thinking rules).
type thinkWatch struct {
	armed   bool                 // a thinking rule could discard the response: its reasoning is held and judged as it streams
	scan    *streamrules.Scanner // the early scanner; nil: no armed rule a prefix decides
	judged  bool                 // the whole reasoning was judged (at the answer's first text)
	thought []byte               // the reasoning streamed so far
}

// open reports whether the reasoning is still unjudged while it could discard the
// response: the answer's text and the reasoning wait.
func (w *thinkWatch) open() bool { return w != nil && w.armed && !w.judged }

// callStream makes one streaming upstream call. held: content waits for the release;
// otherwise it goes to the client chunk by chunk. What the client may have is flushed
// before every wait for the upstream: the events made of lines read together go out in
// one write and flush, and none waits for more than the lines already read.
func (t *tour) callStream(ctx context.Context, sse *sseWriter, held bool) (*streamed, error) {
	st, err := t.readStream(ctx, sse, held)
	sse.hold = false
	if ferr := sse.flush(); ferr != nil && err == nil {
		err = ferr
	}
	return st, err
}

// lineWaiting reports whether br holds a whole line already: reading it cannot block.
func lineWaiting(br *bufio.Reader) bool {
	b, _ := br.Peek(br.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

func (t *tour) readStream(ctx context.Context, sse *sseWriter, held bool) (*streamed, error) {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var timer *time.Timer
	if d := t.g.cfg.UpstreamTimeout; d > 0 {
		timer = time.AfterFunc(d, func() { cancel(errUpstreamTimeout) })
		defer timer.Stop()
	}
	hr, err := t.post(cctx)
	if err != nil {
		if c := context.Cause(cctx); c == errUpstreamTimeout {
			return nil, c
		}
		return nil, err
	}
	defer hr.Body.Close()
	var scan *streamrules.Scanner
	if held {
		scan = t.om.move.HeldScanner()
	}
	st := &streamed{}
	if move := t.om.move; move.HasThinkingRules() {
		st.think = &thinkWatch{armed: move.ThinkingArmed()}
		if st.think.armed {
			st.think.scan = move.ThinkingScanner()
		}
	}
	br := bufio.NewReaderSize(hr.Body, 32<<10)
	for {
		line, rerr := br.ReadSlice('\n')
		if rerr == bufio.ErrBufferFull {
			// A long line: read it whole.
			rest, err2 := br.ReadBytes('\n')
			line, rerr = append(bytes.Clone(line), rest...), err2
		}
		if timer != nil {
			timer.Reset(t.g.cfg.UpstreamTimeout)
		}
		// The next line is here already: this line's events wait for its (no flush each).
		sse.hold = rerr == nil && lineWaiting(br)
		if data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:")); ok {
			data = bytes.TrimSpace(data)
			if string(data) == "[DONE]" {
				st.done = true
				return st, nil
			}
			if err := t.readChunk(ctx, sse, st, data, scan, held, cancel); err != nil {
				if err == errCut {
					return st, nil
				}
				return st, err
			}
		}
		if !sse.hold {
			if err := sse.flush(); err != nil {
				return st, err
			}
		}
		if rerr != nil {
			if c := context.Cause(cctx); c != nil && c != context.Canceled {
				return st, c
			}
			if ctx.Err() != nil {
				return st, ctx.Err()
			}
			if rerr == io.EOF && st.finish != "" {
				return st, nil // an upstream that ends without [DONE] after its finish
			}
			if rerr == io.EOF {
				rerr = io.ErrUnexpectedEOF
			}
			return st, fmt.Errorf("gateway: the upstream stream broke off: %w", rerr)
		}
	}
}

// readChunk reads one upstream chunk into st and sends the client what it may have.
func (t *tour) readChunk(ctx context.Context, sse *sseWriter, st *streamed, data []byte, scan *streamrules.Scanner, held bool, cancel context.CancelCauseFunc) error {
	var ch *chunkIn
	if text, ok := st.shape.text(data); ok && sse.head.set {
		// One chunk made per stream, its text replaced each time.
		if st.plain.Choices == nil {
			st.plain.Choices = make([]chunkChoiceIn, 1)
			st.plain.Choices[0].Delta.Content = &st.plainText
		}
		st.plainText = text
		ch = &st.plain
	} else {
		ch = &chunkIn{}
		if err := json.Unmarshal(data, ch); err != nil {
			return fmt.Errorf("gateway: the upstream sent a chunk that is not JSON: %w", err)
		}
		if st.shape.prefix == nil && sse.head.set && ch.contentOnly() {
			st.shape.learn(data)
		}
	}
	if !isNull(ch.Error) {
		return fmt.Errorf("gateway: the upstream failed mid-stream: %s", ch.Error)
	}
	if !sse.head.set {
		sse.head = chunkHead{set: true, id: ch.ID, created: ch.Created, model: ch.Model, fp: ch.SystemFingerprint}
	}
	if !isNull(ch.Usage) {
		var u usage
		if json.Unmarshal(ch.Usage, &u) == nil {
			t.total.add(u)
		}
	}
	for _, c := range ch.Choices {
		if c.Index != 0 {
			continue
		}
		for _, d := range c.Delta.ToolCalls {
			for len(st.calls) <= d.Index {
				st.calls = append(st.calls, &wireCall{Type: "function"})
			}
			wc := st.calls[d.Index]
			if d.ID != "" {
				wc.ID = d.ID
			}
			if d.Type != "" {
				wc.Type = d.Type
			}
			wc.Function.Name += d.Function.Name
			wc.Function.Arguments += d.Function.Arguments
		}
		if c.FinishReason != nil {
			st.finish = *c.FinishReason
		}
		plain := !held && !st.think.open() && t.calls == 1 && len(c.Delta.ToolCalls) == 0 && c.FinishReason == nil && isNull(ch.Usage) && len(ch.Choices) == 1
		if r := c.Delta.ReasoningContent + c.Delta.Reasoning; r != "" && st.think != nil {
			if err := st.reasoningChunk(ctx, r, cancel); err != nil {
				return err
			}
		}
		if c.Delta.Content == nil || *c.Delta.Content == "" {
			if !plain && c.Delta.ReasoningContent+c.Delta.Reasoning != "" {
				// Held: sent before the answer's first released text, dropped with a discard.
				st.reasoning = append(st.reasoning, bytes.Clone(data))
				if !held && !st.think.open() {
					return st.flushReasoning(sse)
				}
			}
			if plain {
				// The role, or what the gateway does not judge (reasoning_content): as it came.
				sse.roleSent = sse.roleSent || c.Delta.Role != ""
				if err := sse.data(data); err != nil {
					return err
				}
			}
			continue
		}
		if st.think.open() {
			// The answer's first text ends the reasoning: judged whole before any text is
			// released (negate rules too).
			if err := st.textBegins(ctx, t.om.move, cancel); err != nil {
				return err
			}
		}
		if st.first.IsZero() {
			st.first = time.Now()
		}
		st.text = append(st.text, *c.Delta.Content...)
		if !held {
			// Nothing can discard the answer: the text goes on as it came.
			if err := st.flushReasoning(sse); err != nil {
				return err
			}
			if plain {
				sse.roleSent = sse.roleSent || c.Delta.Role != ""
				if err := sse.data(data); err != nil {
					return err
				}
			} else if err := sse.content([]byte(*c.Delta.Content)); err != nil {
				return err
			}
			st.shown = st.text
			st.noteSeen()
			continue
		}
		if scan == nil {
			continue // held whole
		}
		if v, ok := scan.Scan(ctx, st.text); ok {
			cut := v
			st.cut, st.cutAt = &cut, len(st.text)
			cancel(errCut)
			return errCut
		}
		if rel := scan.Release(st.text); len(rel) > len(st.shown) {
			if err := st.flushReasoning(sse); err != nil {
				return err
			}
			if err := sse.content(rel[len(st.shown):]); err != nil {
				return err
			}
			st.shown = append(st.shown, rel[len(st.shown):]...) // what the client got
			st.noteSeen()
		}
	}
	return nil
}

// reasoningChunk takes a reasoning delta: it is kept for the thinking rules and, while one
// is armed, scanned; at the first certain miss the upstream call is cut.
func (st *streamed) reasoningChunk(ctx context.Context, r string, cancel context.CancelCauseFunc) error {
	w := st.think
	w.thought = append(w.thought, r...)
	if !w.open() || w.scan == nil {
		return nil
	}
	v, ok := w.scan.Scan(ctx, w.thought)
	if !ok {
		return nil
	}
	w.scan = nil
	return st.cutThinking(v, cancel)
}

// textBegins judges the whole reasoning at the answer's first text chunk.
func (st *streamed) textBegins(ctx context.Context, move *streamrules.Move, cancel context.CancelCauseFunc) error {
	w := st.think
	w.judged, w.scan = true, nil
	if v := move.CheckThinking(ctx, string(w.thought)); v.Discard {
		return st.cutThinking(v, cancel)
	}
	return nil
}

// cutThinking stops the upstream call at a thinking miss: the response is discarded, its
// reasoning never sent, to the client or back upstream.
func (st *streamed) cutThinking(v streamrules.Verdict, cancel context.CancelCauseFunc) error {
	st.cut, st.cutAt, st.reasoning = &v, len(st.text), nil
	cancel(errCut)
	return errCut
}

// thinkingVerdict judges a finished response's reasoning where the stream has not: a
// reasoning judged whole at the first text passes; a response the client saw part of, or
// one no thinking rule could discard, is never discarded (a miss after the ceiling reminds
// later, a shadowed rule is counted).
func (st *streamed) thinkingVerdict(ctx context.Context, move *streamrules.Move) streamrules.Verdict {
	w := st.think
	if w == nil || w.judged {
		return streamrules.Verdict{}
	}
	if len(st.shown) > 0 || !w.armed {
		return move.CheckShownThinking(ctx, string(w.thought))
	}
	return move.CheckThinking(ctx, string(w.thought))
}

// flushReasoning sends the held reasoning chunks, as they came.
func (st *streamed) flushReasoning(sse *sseWriter) error {
	if len(st.reasoning) > 0 && !sse.roleSent {
		if err := sse.chunk(object{{"content", json.RawMessage(`""`)}}, ""); err != nil {
			return err
		}
	}
	for _, d := range st.reasoning {
		if err := sse.data(d); err != nil {
			return err
		}
	}
	st.reasoning = nil
	return nil
}

func (st *streamed) noteSeen() {
	if st.seen.IsZero() {
		st.seen = time.Now()
	}
}

// report tells the move how a held tour's speech went.
func (st *streamed) report(ctx context.Context, move *streamrules.Move, early int, discarded bool) {
	info := streamrules.SpeechInfo{HeldBytes: len(st.text), ReleasedEarlyBytes: early, Discarded: discarded}
	if !st.seen.IsZero() && !st.first.IsZero() {
		info.FirstVisible, info.Visible = st.seen.Sub(st.first), true
	}
	move.SpeechDone(ctx, info)
}

// response builds the assembled response as the rules and the upstream copy read it.
func (st *streamed) response(text string) *response {
	resp := &response{content: text}
	msg := object{{"role", json.RawMessage(`"assistant"`)}}
	if text != "" {
		msg = append(msg, field{"content", jsonString(text)})
	} else {
		msg = append(msg, field{"content", json.RawMessage("null")})
	}
	for _, c := range st.calls {
		resp.calls = append(resp.calls, *c)
		resp.callsRaw = append(resp.callsRaw, callObject(c))
	}
	if len(resp.callsRaw) > 0 {
		msg = append(msg, field{"tool_calls", array(resp.callsRaw)})
	}
	resp.message = msg
	return resp
}

func callObject(c *wireCall) json.RawMessage {
	fn := object{{"name", jsonString(c.Function.Name)}, {"arguments", jsonString(c.Function.Arguments)}}
	return object{{"id", jsonString(c.ID)}, {"type", jsonString(c.Type)}, {"function", fn.bytes()}}.bytes()
}

// runStream serves a stream: true request.
func (t *tour) runStream(ctx context.Context, w http.ResponseWriter) ([]string, error) {
	sse := &sseWriter{w: w, rc: http.NewResponseController(w), usage: t.q.usage}
	move := t.om.move
	for {
		move.BeginTour()
		held := mustHold(move)
		st, err := t.callStream(ctx, sse, held)
		if err != nil {
			t.failStream(w, sse, err)
			return nil, err
		}
		if st.cut != nil {
			if held {
				st.report(ctx, move, 0, true)
			}
			t.msgs = withInterrupt(t.msgs, string(st.text[:st.cutAt]), st.cut.Interrupt)
			continue
		}
		resp := st.response(string(st.text))
		if tv := st.thinkingVerdict(ctx, move); tv.Discard {
			if held {
				st.report(ctx, move, len(st.shown), true)
			}
			t.msgs = withInterrupt(t.msgs, resp.content, tv.Interrupt)
			continue
		}
		var v streamrules.Verdict
		if len(st.shown) > 0 {
			v = move.CheckShownResponse(ctx, resp.content, declared(resp.calls))
		} else {
			v = move.CheckResponse(ctx, resp.content, declared(resp.calls))
		}
		early := len(st.shown)
		if v.Discard {
			if held {
				st.report(ctx, move, early, true)
			}
			t.msgs = withInterrupt(t.msgs, resp.content, v.Interrupt)
			continue
		}
		final := []byte(resp.content)
		if v.Fixed != "" {
			final = []byte(v.Fixed)
			resp = st.response(v.Fixed)
		}
		if err := st.flushReasoning(sse); err != nil {
			return nil, err
		}
		if len(st.shown) < len(final) {
			rest := final[len(st.shown):]
			if !bytes.HasPrefix(final, st.shown) {
				// Cannot happen while the release is sound; the client keeps what it has.
				t.g.log.Error("gateway: released text is not a prefix of the accepted answer", "chat", t.c.id)
			}
			if err := sse.content(rest); err != nil {
				return nil, err
			}
			st.noteSeen()
		}
		if held {
			st.report(ctx, move, early, false)
		}
		kept, again := t.gate(ctx, resp)
		if again {
			continue // the refusal goes upstream as the call's result; the client gets what follows
		}
		// From here to [DONE] nothing waits: one write and flush for the lot.
		sse.hold = true
		for _, c := range resp.calls {
			if !containsID(kept, c.ID) {
				continue
			}
			tc := object{{"index", json.RawMessage(strconv.Itoa(indexOf(kept, c.ID)))}, {"id", jsonString(c.ID)}, {"type", jsonString(c.Type)},
				{"function", object{{"name", jsonString(c.Function.Name)}, {"arguments", jsonString(c.Function.Arguments)}}.bytes()}}
			if err := sse.chunk(object{{"tool_calls", array([]json.RawMessage{tc.bytes()})}}, ""); err != nil {
				return nil, err
			}
		}
		finish := st.finish
		if finish == "" || (finish == "tool_calls" && len(kept) == 0) {
			finish = "stop"
		}
		if err := sse.chunk(nil, finish); err != nil {
			return nil, err
		}
		if sse.usage {
			o := sse.headObject()
			o = append(o, field{"choices", json.RawMessage("[]")}, field{"usage", withUsage(nil, t.total)})
			if err := sse.data(o.bytes()); err != nil {
				return nil, err
			}
		}
		if err := sse.data([]byte("[DONE]")); err != nil {
			return nil, err
		}
		sse.hold = false
		if err := sse.flush(); err != nil {
			return nil, err
		}
		return kept, nil
	}
}

func containsID(ids []string, id string) bool { return indexOf(ids, id) >= 0 }

func indexOf(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}

// failStream answers a failed stream: before anything was sent, as a non-streaming
// failure (the upstream's status and body); after, with an error event and no [DONE].
func (t *tour) failStream(w http.ResponseWriter, sse *sseWriter, err error) {
	if !sse.started {
		if err == errUpstreamTimeout {
			writeError(w, http.StatusGatewayTimeout, "upstream_error", err.Error())
			return
		}
		t.fail(w, err)
		return
	}
	if t.in.Context().Err() != nil {
		return // the client is gone
	}
	var e apiError
	e.Error.Message, e.Error.Type = err.Error(), "upstream_error"
	b, _ := json.Marshal(e)
	_ = sse.data(b)
	// Then the connection is cut (see completions): a client that does not read error
	// events still sees a broken stream, never a short answer passing for a whole one.
	t.abort = true
}
