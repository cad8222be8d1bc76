package middleware_test

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/streamrules/streamrules/middleware"
)

// The chunks the openai client streams for tool calls are recognised; text, and JSON of
// any other shape, is not.
func TestIsToolChunk(t *testing.T) {
	t.Parallel()
	tests := []struct {
		chunk string
		want  bool
	}{
		{`[{"id":"call_1","type":"function","function":{"name":"shell","arguments":""}}]`, true},
		{`[{"type":"","function":{"name":"","arguments":"{\"cmd\":"}}]`, true}, // an arguments delta
		{`[{"id":"a","type":"function","function":{"name":"x","arguments":"{}"}},{"type":"function","function":{"name":"y","arguments":""}}]`, true},
		{`{"name":"shell","arguments":"{}"}`, true}, // a legacy function call
		{"Here is the answer.", false},
		{"", false},
		{"[", false},
		{`[]`, false},
		{`["function"]`, false},
		{`[{"type":"function"}]`, false},
		{`[{"type":"function","function":{},"extra":1}]`, false},
		{`{"name":"Ada"}`, false},
		{`{"name":"x","arguments":"y","more":true}`, false},
		{`[{"type":"function","function":{"name":"x","arguments":""}}] and more`, false},
	}
	for _, tt := range tests {
		if got := middleware.IsToolChunk([]byte(tt.chunk)); got != tt.want {
			t.Errorf("IsToolChunk(%q) = %v, want %v", tt.chunk, got, tt.want)
		}
	}
}

// FuzzIsToolChunk: a chunk called a tool call is one JSON value (so a text chunk that is
// not JSON is never dropped), and the client's delta shape, whatever its strings, always is.
func FuzzIsToolChunk(f *testing.F) {
	f.Add([]byte(`[{"id":"call_1","type":"function","function":{"name":"shell","arguments":""}}]`), "shell", "{\"cmd\"")
	f.Add([]byte("plain text"), "", "")
	f.Fuzz(func(t *testing.T, chunk []byte, name, args string) {
		if middleware.IsToolChunk(chunk) && !json.Valid(chunk) {
			t.Fatalf("%q is not JSON, yet called a tool call", chunk)
		}
		if !utf8.ValidString(name) || !utf8.ValidString(args) {
			return
		}
		delta, err := json.Marshal([]map[string]any{{"type": "function", "function": map[string]string{"name": name, "arguments": args}}})
		if err != nil {
			t.Fatal(err)
		}
		if !middleware.IsToolChunk(delta) {
			t.Fatalf("the client's delta %s is not recognised", delta)
		}
	})
}
