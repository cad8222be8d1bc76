package replay_test

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/replay"
)

// TestTranscriptStrictAsRuleFiles: a transcript line is refused, its line named, for
// what a rule file is refused for and encoding/json lets through: a key twice (it kept
// the last), a key in another case (it matched it), invalid UTF-8 and lone surrogates
// (it put U+FFFD in their place).
func TestTranscriptStrictAsRuleFiles(t *testing.T) {
	t.Parallel()
	const ok = `{"chat":"c","answer":"fine"}` + "\n"
	tests := []struct{ name, line, want string }{
		{"duplicate key", `{"chat":"c","answer":"a","answer":"b"}`, `duplicate field "answer"`},
		{"duplicate key in a tool", `{"chat":"c","tools":[{"name":"x","name":"y"}]}`, `duplicate field "name"`},
		{"key in another case", `{"Chat":"c"}`, `unknown field "Chat": field names are case-sensitive, did you mean "chat"?`},
		{"invalid UTF-8 in a string", "{\"chat\":\"c\",\"answer\":\"a\xffb\"}", `"answer": not valid UTF-8`},
		{"invalid UTF-8 in args", "{\"chat\":\"c\",\"tools\":[{\"name\":\"x\",\"args\":{\"p\":\"\xc3\"}}]}", `"p": not valid UTF-8`},
		{"lone surrogate", `{"chat":"c","answer":"\ud800"}`, `"answer": not valid UTF-8`},
		{"invalid UTF-8 in a key", "{\"chat\":\"c\",\"vars\":{\"\xff\":\"v\"}}", "a field name is not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rd := replay.NewReader(strings.NewReader(ok+tt.line+"\n"+ok), "week.jsonl")
			if _, err := rd.Next(); err != nil {
				t.Fatal(err)
			}
			_, err := rd.Next()
			var le *replay.LineError
			if !errors.As(err, &le) || le.Line != 2 || !strings.Contains(err.Error(), "week.jsonl:2: "+tt.want) {
				t.Errorf("got %v; want week.jsonl:2: %s", err, tt.want)
			}
		})
	}
	// null stays "absent" where encoding/json reads it so: a host's logger writes nil
	// lists as null.
	m, err := replay.ParseMove([]byte(`{"chat":"c","move":null,"env":null,"answer":null,"vars":null,"tools":[{"name":"x","args":null}]}`))
	if err != nil || m.Chat != "c" || len(m.Tools) != 1 || m.Tools[0].Args != "" {
		t.Errorf("nulls: %+v, %v", m, err)
	}
}

// repeated is n bytes of b, produced as read: a long line without holding it.
type repeated struct {
	b byte
	n int
}

func (r *repeated) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = r.b
	}
	r.n -= k
	return k, nil
}

// TestLongLine: a 100 MB line is a *LineError naming its line, read in bounded memory
// (it peaked at 0.9 GB), and the reader goes on after it; a 1 MB line reads whole. Not
// parallel: the allocation count is this test's alone.
func TestLongLine(t *testing.T) {
	src := io.MultiReader(
		strings.NewReader(`{"chat":"c","answer":"`+strings.Repeat("a", 1<<20)+`"}`+"\n"),
		strings.NewReader(`{"chat":"c","answer":"`), &repeated{'a', 100 << 20}, strings.NewReader(`"}`+"\n"),
		strings.NewReader(`{"chat":"d","answer":"after"}`+"\n"),
	)
	rd := replay.NewReader(src, "big.jsonl")
	if m, err := rd.Next(); err != nil || len(m.Answer) != 1<<20 {
		t.Fatalf("the 1 MB line: %d bytes, %v", len(m.Answer), err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := rd.Next()
	runtime.ReadMemStats(&after)
	n := after.TotalAlloc - before.TotalAlloc
	t.Logf("a 100 MB line: %.1f MB allocated: %v", float64(n)/(1<<20), err)
	var le *replay.LineError
	if !errors.As(err, &le) || le.Line != 2 || !strings.Contains(err.Error(), "big.jsonl:2: the line is longer than 16777216 bytes") {
		t.Errorf("got %v, want a *LineError at big.jsonl:2", err)
	}
	// What is allocated bounds the peak: the line up to the cap, in buffers that double
	// (46 MB; more under -race). Less than the line itself: it was never held whole.
	if n >= 100<<20 {
		t.Errorf("reading the 100 MB line allocated %d bytes: the line was held whole", n)
	}
	if m, err := rd.Next(); err != nil || m.Chat != "d" || rd.Line() != 3 {
		t.Errorf("the line after: %+v, %v at line %d", m, err, rd.Line())
	}
	if _, err := rd.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("end: %v", err)
	}
}

// TestByteOrderMark: a transcript that starts with a UTF-8 byte order mark (as editors on
// Windows save it) reads as it would without; only the first line may carry one.
func TestByteOrderMark(t *testing.T) {
	text := "\xEF\xBB\xBF" + `{"chat":"c","answer":"one"}` + "\n" + `{"chat":"c","answer":"two"}` + "\n"
	rd := replay.NewReader(strings.NewReader(text), "win.jsonl")
	for _, want := range []string{"one", "two"} {
		if m, err := rd.Next(); err != nil || m.Chat != "c" || m.Answer != want {
			t.Fatalf("got %+v, %v; want the move %q", m, err, want)
		}
	}
	if _, err := rd.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("end: %v", err)
	}
	rd = replay.NewReader(strings.NewReader(`{"chat":"c","answer":"one"}`+"\n\xEF\xBB\xBF"+`{"chat":"c","answer":"two"}`+"\n"), "mid.jsonl")
	if _, err := rd.Next(); err != nil {
		t.Fatal(err)
	}
	var le *replay.LineError
	if _, err := rd.Next(); !errors.As(err, &le) || le.Line != 2 {
		t.Errorf("a byte order mark on line 2: %v, want a *LineError at line 2", err)
	}
}
