package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

// FuzzAppendJSONString: the hand-rolled encoder writes what encoding/json decodes back
// to the same text (with invalid UTF-8 as U+FFFD, as encoding/json writes it).
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote \" back \\ nl \n tab \t cr \r", "\x00\x1f", "é ↩ #42 👍", "\xff bad", "\u2028\u2029", "<tag>&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendJSONString(nil, []byte(s))
		want := jsonString(s)
		if string(got) != string(want) {
			t.Fatalf("appendJSONString(%q) = %s, encoding/json %s", s, got, want)
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%s: %v", got, err)
		}
	})
}

// TestChunkShape: a chunk whose text is read from the learnt shape decodes, in full, as
// the same plain content delta; anything else is decoded in full.
func TestChunkShape(t *testing.T) {
	const learnt = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}],"usage":null}`
	var cs chunkShape
	cs.learn([]byte(learnt))
	if cs.prefix == nil {
		t.Fatal("no shape learnt from a plain content chunk")
	}
	for _, c := range []struct {
		data string
		fast bool
	}{
		{learnt, true},
		{`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"All is well é ↩ #1"},"logprobs":null,"finish_reason":null}],"usage":null}`, true},
		{`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":null}],"usage":null}`, true},
		{`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a\"b"},"logprobs":null,"finish_reason":null}],"usage":null}`, false},
		{`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a\nb"},"logprobs":null,"finish_reason":null}],"usage":null}`, false},
		{`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"logprobs":null,"finish_reason":"stop"}],"usage":null}`, false},
		{`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"x":1,"y":"z"},"logprobs":null,"finish_reason":null}],"usage":null}`, false},
		{`{"id":"c2","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"logprobs":null,"finish_reason":null}],"usage":null}`, false},
		{`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"\xff"},"logprobs":null,"finish_reason":null}],"usage":null}`, false},
		{`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"b":"c"},"logprobs":null,"finish_reason":null}],"usage":null}`, false},
	} {
		text, ok := cs.text([]byte(c.data))
		if ok != c.fast {
			t.Errorf("%s: fast %v, want %v", c.data, ok, c.fast)
			continue
		}
		if !ok {
			continue
		}
		var ch chunkIn
		if err := json.Unmarshal([]byte(c.data), &ch); err != nil || !ch.contentOnly() || *ch.Choices[0].Delta.Content != text {
			t.Errorf("%s: fast text %q, decoded %+v (%v)", c.data, text, ch, err)
		}
	}
	// No shape where the text's place is not one key: a duplicate key, or text only in a second choice
	// (an "index" other than 0 is refused by contentOnly before learning).
	for _, data := range []string{
		`{"choices":[{"index":0,"delta":{"content":"a","content":"b"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"a"}}],"choices":[{"index":0,"delta":{"content":"b"}}]}`,
		`{"id":"\"content\":","choices":[{"delta":{"role":"x"}},{"delta":{"content":"a"}}]}`,
	} {
		if _, _, ok := contentSpan([]byte(data)); ok {
			t.Errorf("%s: span found", data)
		}
	}
	if s, e, ok := contentSpan([]byte(` { "choices" : [ { "delta" : { "content" : "a b" } } ] } `)); !ok || s != 43 || e != 48 {
		t.Errorf("spaced chunk: span %d..%d %v", s, e, ok)
	}
}

// parseObjectDecoder is parseObject as it was, with encoding/json's Decoder: the reference.
func parseObjectDecoder(b []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, errNotObject
	}
	var o object
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := kt.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		o = append(o, field{key, raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return o, nil
}

// FuzzParseObject: the scanning parser reads what the Decoder read, key by key and value
// by value, and refuses what it refused.
func FuzzParseObject(f *testing.F) {
	for _, s := range []string{`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}],"d":"x\"y","e\u0041":null,"f":true,"a":-1.5e3} `,
		`{"model":`, `[1]`, `"s"`, `{"a":1} x`, `{"a":1}{}`, `{"a":{"b":[[],{}]},"c":"\\"}`, "", `{"a":"\u2028"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gerr := parseObject([]byte(s))
		want, werr := parseObjectDecoder([]byte(s))
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: error %v, the Decoder's %v", s, gerr, werr)
		}
		if gerr != nil {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d fields, the Decoder's %d", s, len(got), len(want))
		}
		for i := range got {
			if got[i].key != want[i].key || string(got[i].raw) != string(want[i].raw) {
				t.Fatalf("%q: field %d %q=%s, the Decoder's %q=%s", s, i, got[i].key, got[i].raw, want[i].key, want[i].raw)
			}
		}
	})
}

// FuzzParseArray: the scanning array reader reads what json.Unmarshal into
// []json.RawMessage read, and refuses what it refused; object keys are written as
// json.Marshal writes them.
func FuzzParseArray(f *testing.F) {
	for _, s := range []string{`[]`, ` [ 1 , "a,]" , {"b":[2]} , null ] `, `null`, ` null `, `[1,]`, `{}`, `[1] [2]`, "", `["\u003c"]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gerr := parseArray([]byte(s))
		var want []json.RawMessage
		werr := json.Unmarshal([]byte(s), &want)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: error %v, Unmarshal's %v", s, gerr, werr)
		}
		if gerr != nil {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d items, Unmarshal's %d", s, len(got), len(want))
		}
		for i := range got {
			if string(got[i]) != string(want[i]) {
				t.Fatalf("%q: item %d %s, Unmarshal's %s", s, i, got[i], want[i])
			}
		}
		o := object{{s, json.RawMessage("1")}}
		k, _ := json.Marshal(s)
		if string(o.bytes()) != "{"+string(k)+":1}" {
			t.Fatalf("%q: key written %s, json.Marshal %s", s, o.bytes(), k)
		}
	})
}
