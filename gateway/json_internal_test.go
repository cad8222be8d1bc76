package gateway

import (
	"encoding/json"
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
