package middleware

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"unsafe"

	"github.com/tmc/langchaingo/llms"
)

// The redactedThinking shim (see providerShims). Where Claude's safety systems encrypt
// part of its reasoning, the response carries a redacted_thinking content block, and the
// anthropic client of LangChainGo v0.1.14 knows only text, tool_use and thinking: it fails
// the whole call with "unknown content type: redacted_thinking" (or "unknown content block
// type" while streaming), so a guarded move with thinking on would fail at random. The gap
// is in the client's decoder, below any llms.Model, so the shim sits at its HTTP client:
// each redacted_thinking block of a response is read as an empty thinking block. The
// encrypted data is lost, and nothing is lost with it: LangChainGo cannot send thinking
// blocks back, and a thinking rule cannot read encrypted reasoning.

// doer is the anthropic client's HTTP client (anthropicclient.Doer).
type doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// withRedactedThinking returns a copy of m, an *anthropic.LLM, whose client reads
// redacted_thinking blocks as empty thinking blocks; m itself is not changed. The client's
// fields are unexported: they are reached by reflection, and where the layout is not the
// one this was written for (another LangChainGo version), m is returned as it is.
func withRedactedThinking(m llms.Model) llms.Model {
	v := reflect.ValueOf(m)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return m
	}
	cf := v.Elem().FieldByName("client")
	if !cf.IsValid() || cf.Kind() != reflect.Pointer || cf.IsNil() || cf.Elem().Kind() != reflect.Struct {
		return m
	}
	hf := cf.Elem().FieldByName("httpClient")
	if !hf.IsValid() || hf.Kind() != reflect.Interface {
		return m
	}
	cur, ok := exported(hf).Interface().(doer)
	wrapped := &redactedDoer{next: cur}
	if !ok || !reflect.TypeOf(wrapped).Implements(hf.Type()) {
		return m
	}
	client := reflect.New(cf.Elem().Type())
	client.Elem().Set(exported(cf).Elem())
	exported(client.Elem().FieldByName("httpClient")).Set(reflect.ValueOf(wrapped))
	llm := reflect.New(v.Elem().Type())
	llm.Elem().Set(v.Elem())
	exported(llm.Elem().FieldByName("client")).Set(client)
	if out, ok := llm.Interface().(llms.Model); ok {
		return out
	}
	return m
}

// exported is f, an addressable field, with the read-only mark of an unexported field
// lifted.
func exported(f reflect.Value) reflect.Value {
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// redactedDoer rewrites the redacted_thinking blocks of the responses of next.
type redactedDoer struct{ next doer }

func (d *redactedDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.next.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	resp.Body = &redactedBody{r: bufio.NewReader(resp.Body), c: resp.Body}
	return resp, nil
}

// redactedBody rewrites, line by line, what mentions a redacted_thinking block: an SSE
// data line (content_block_start) or the whole JSON body of a non-streamed response. A
// line that does not mention it passes as it is.
type redactedBody struct {
	r    *bufio.Reader
	c    io.Closer
	line []byte // the rest of the current line, rewritten
	err  error
}

var redactedType = []byte(`"redacted_thinking"`)

func (b *redactedBody) Read(p []byte) (int, error) {
	for len(b.line) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		line, err := b.r.ReadBytes('\n')
		b.err = err
		if bytes.Contains(line, redactedType) {
			line = rewriteRedacted(line)
		}
		b.line = line
	}
	n := copy(p, b.line)
	b.line = b.line[n:]
	return n, nil
}

func (b *redactedBody) Close() error { return b.c.Close() }

// rewriteRedacted rewrites one line: an SSE "data: {…}" line or a JSON document. A line
// it cannot read is returned as it is (the client then reports what it reports).
func rewriteRedacted(line []byte) []byte {
	prefix, body := []byte(nil), line
	if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		prefix, body = []byte("data: "), bytes.TrimSpace(rest)
	}
	trimmed := bytes.TrimRight(body, "\r\n")
	var doc any
	if json.Unmarshal(trimmed, &doc) != nil {
		return line
	}
	out, err := json.Marshal(unredact(doc))
	if err != nil {
		return line
	}
	return append(append(prefix, out...), line[len(bytes.TrimRight(line, "\r\n")):]...)
}

// unredact replaces, anywhere in v, a block {"type":"redacted_thinking",…} by an empty
// thinking block.
func unredact(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x["type"] == "redacted_thinking" {
			return map[string]any{"type": "thinking", "thinking": "", "signature": ""}
		}
		for k, e := range x {
			x[k] = unredact(e)
		}
	case []any:
		for i, e := range x {
			x[i] = unredact(e)
		}
	}
	return v
}
