package streamrules

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/streamrules/streamrules/internal/forged"
	"github.com/streamrules/streamrules/internal/splice"
	"github.com/streamrules/streamrules/internal/tagskel"
)

func FuzzStripBlocksSplice(f *testing.F) {
	for i, s := range forged.Seeds {
		f.Add(s, "rule_a", "Remember </system-reminder> & <this>.", "rule_b", i%3, i*3)
	}
	f.Add("(no output)", `x"y`, "t", "", 2, 0)
	f.Add("жжжжж🙂", "a", "ж", "b", 1, 5)
	f.Fuzz(func(t *testing.T, out, rule1, text1, rule2 string, nRem, maxChars int) {
		if maxChars < 0 {
			maxChars = -maxChars
		}
		var reminders []Reminder
		for i := 0; i < nRem%3; i++ {
			reminders = append(reminders, Reminder{Rule: []string{rule1, rule2}[i], Text: text1})
		}
		opt := spliceOptions{MaxChars: maxChars % 64}
		if maxChars%2 == 1 {
			opt.EmptyOutputMarker = "(no output)"
		}
		spliced := spliceWith(out, reminders, opt)
		if again := spliceWith(out, reminders, opt); again != spliced {
			t.Fatalf("Splice not deterministic: %q then %q", spliced, again)
		}
		want := Neutralize(splice.Cap(out, opt.MaxChars))
		if opt.EmptyOutputMarker != "" && strings.TrimSpace(out) == opt.EmptyOutputMarker {
			// The service's marker: kept as is alone, gone under reminders.
			if want = out; len(reminders) > 0 {
				want = ""
			}
		}
		if got := StripBlocks(spliced); got != want {
			t.Fatalf("StripBlocks(spliceWith(%q, %d reminders, %+v)):\n got %q\nwant %q\nspliced %q", out, len(reminders), opt, got, want, spliced)
		}
		// The tool's part of the prompt copy cannot pose as the system.
		body := spliced
		for _, r := range reminders {
			blk := r.Block() + "\n"
			if !strings.HasPrefix(body, blk) {
				t.Fatalf("spliceWith(%q) = %q does not start with the block %q", out, spliced, blk)
			}
			body = body[len(blk):]
		}
		if tag, ok := forged.EngineTag(body); ok {
			t.Fatalf("tool output in the prompt copy holds %q: %q", tag, body)
		}
		if i, n := tagskel.Find(body, 0); n > 0 {
			t.Fatalf("tool output in the prompt copy holds a tag at %d: %q", i, body)
		}
		for _, r := range reminders {
			blk := r.Block()
			inner := blk[strings.IndexByte(blk, '>')+1 : strings.LastIndex(blk, "</")]
			if i, n := tagskel.Find(inner, 0); n > 0 {
				t.Fatalf("the rule text %q holds a tag at %d in its block: %q", r.Text, i, inner)
			}
		}
		if opt.MaxChars > 0 {
			if n := utf8.RuneCountInString(body); n > opt.MaxChars+len("\n[output cut:  of  characters shown]")+40 {
				t.Fatalf("capped output has %d characters, cap %d: %q", n, opt.MaxChars, body)
			}
		}
	})
}

func FuzzCompactArgs(f *testing.F) {
	for _, s := range []string{
		`{"cmd":"ls"}`, `{ "cmd" : "ls -la" }`, " [1, 2] ", ` "s" `, " 42 ", "null ", "true",
		"ls -la", "", "{", `{"a": 1} {"b": 2}`, "{\"u\": \"\xff\"}", `{"a": 1e400}`, "\t-0.5e-3\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := CompactArgs(in)
		valid := json.Valid([]byte(in))
		if json.Valid([]byte(out)) != valid {
			t.Fatalf("CompactArgs(%q) = %q: validity changed (input valid: %v)", in, out, valid)
		}
		if !valid {
			if out != in {
				t.Fatalf("CompactArgs(%q) = %q, want the raw input for non-JSON", in, out)
			}
			return
		}
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(in)); err != nil {
			t.Fatalf("json.Compact(%q): %v", in, err)
		}
		if out != want.String() {
			t.Fatalf("CompactArgs(%q) = %q, want the compact form %q", in, out, want.String())
		}
		if a, b := decodeJSON(t, in), decodeJSON(t, out); !reflect.DeepEqual(a, b) {
			t.Fatalf("CompactArgs(%q) = %q changed the value: %#v vs %#v", in, out, a, b)
		}
		if again := CompactArgs(out); again != out {
			t.Fatalf("CompactArgs not idempotent: %q then %q", out, again)
		}
	})
}

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return v
}
