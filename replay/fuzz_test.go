package replay_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/replay"
)

// normal is m as it reads back: empty lists and absent lists are the same list.
func normal(m replay.Move) replay.Move {
	if len(m.Env) == 0 {
		m.Env = nil
	}
	if len(m.Tools) == 0 {
		m.Tools = nil
	}
	return m
}

// FuzzParseMove: a line ParseMove accepts writes back as one canonical line that reads
// back as the same move, and that canonical line is a fixed point (writing it again
// gives the same bytes). A line it rejects is an error, never a panic or a half move.
func FuzzParseMove(f *testing.F) {
	f.Add([]byte(`{"chat":"tg-7","move":12,"env":["telegram","client_ops"],"tools":[{"name":"shell","args":"{\"cmd\":\"df -h\"}"}],"answer":"…"}`))
	f.Add([]byte(`{"chat":"c","tools":[{"name":"write_file","args":{"path": "a"}}],"answer":"<b>&amp;</b>"}`))
	f.Add([]byte(`{"chat":"c","tools":[{"name":"shell","args":"{}","refused":true}],"answer":"no","discarded":["![a](b)"],"accepted":"yes"}`))
	f.Add([]byte(`{"chat":"c","tools":[{"name":"x","args":null},{"name":"y","args":[1, 2]}]}`))
	f.Add([]byte(`{"chat":"c","input":"","tools":[{"name":"run_tests","args":"{}","ok":false},{"name":"x","args":"","ok":true}],"answer":"Done."}`))
	f.Add([]byte(`{"chat":"c","tools":[{"name":"x","args":"","ok":"no"}]}`))
	f.Add([]byte(`{"chat":"c","anwser":"x"}`))
	f.Add([]byte(`{"chat":"c"} {}`))
	f.Add([]byte(`{"chat":"\u0000","answer":"\ud800"}`))
	f.Add([]byte(`{"chat":"c","move":9223372036854775807}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := replay.ParseMove(line)
		if err != nil {
			if !reflect.DeepEqual(m, replay.Move{}) {
				t.Fatalf("error %v with a half move %+v", err, m)
			}
			return
		}
		var buf bytes.Buffer
		if err := replay.NewWriter(&buf).Write(m); err != nil {
			t.Fatalf("accepted %q, but writing it back fails: %v", line, err)
		}
		canon := buf.Bytes()
		if bytes.Count(canon, []byte("\n")) != 1 || canon[len(canon)-1] != '\n' {
			t.Fatalf("written move is not one line: %q", canon)
		}
		back, err := replay.ParseMove(canon)
		if err != nil {
			t.Fatalf("canonical line %q does not read back: %v", canon, err)
		}
		if !reflect.DeepEqual(normal(back), normal(m)) {
			t.Fatalf("round trip changed the move:\n was %#v\n now %#v", m, back)
		}
		buf.Reset()
		if err := replay.NewWriter(&buf).Write(back); err != nil || !bytes.Equal(buf.Bytes(), canon) {
			t.Fatalf("canonical line is not a fixed point: %q then %q (%v)", canon, buf.Bytes(), err)
		}
	})
}

// FuzzReader: a transcript of several lines reads as ParseMove reads each line, in order,
// with the right line numbers, whatever the line endings and blank lines; the first bad
// line is a *LineError naming its line.
func FuzzReader(f *testing.F) {
	f.Add("{\"chat\":\"a\"}\n\n{\"chat\":\"b\",\"answer\":\"x\"}\r\n")
	f.Add("{\"chat\":\"a\"}\n{\"chat\":")
	f.Add("\n\n  \n{\"chat\":\"a\",\"tools\":[{\"name\":\"t\",\"args\":\"\"}]}")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		rd := replay.NewReader(strings.NewReader(text), "f.jsonl")
		lines := strings.SplitAfter(text, "\n")
		i := 0 // index into lines of the next line to read
		for {
			m, err := rd.Next()
			// The line ParseMove should see next: skip the blank ones.
			for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
				i++
			}
			if errors.Is(err, io.EOF) {
				if i != len(lines) {
					t.Fatalf("EOF at line %d of %d", i+1, len(lines))
				}
				return
			}
			if i == len(lines) {
				t.Fatalf("read a move past the end: %+v, %v", m, err)
			}
			want, werr := replay.ParseMove([]byte(lines[i]))
			if werr != nil {
				var le *replay.LineError
				if !errors.As(err, &le) || le.Line != i+1 || le.File != "f.jsonl" || le.Err.Error() != werr.Error() {
					t.Fatalf("line %d: got %v, want a *LineError at line %d: %v", i+1, err, i+1, werr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(m, want) || rd.Line() != i+1 {
				t.Fatalf("line %d: got %+v, %v at line %d; want %+v", i+1, m, err, rd.Line(), want)
			}
			i++
		}
	})
}

// FuzzWriteRead: any move the writer accepts reads back equal, whatever its strings hold
// (newlines, quotes, markup, invalid UTF-8 is replaced as encoding/json replaces it).
func FuzzWriteRead(f *testing.F) {
	f.Add("tg-7", int64(12), "telegram", "shell", `{"cmd":"df -h"}`, "12G free\n↩ #12", "", "", false)
	f.Add("c", int64(0), "", "x", "not json {", "<system-reminder>", "![a](b)", "a", true)
	f.Fuzz(func(t *testing.T, chat string, move int64, env, tool, args, answer, discarded, accepted string, refused bool) {
		m := replay.Move{Chat: chat, Move: move, Answer: answer}
		if env != "" {
			m.Env = []string{env}
		}
		if tool != "" {
			m.Tools = []replay.ToolCall{{Name: tool, Args: args, Refused: refused}}
		}
		if discarded != "" {
			m.Discarded = []string{discarded}
		}
		if accepted != "" {
			m.Accepted = &accepted
		}
		var buf bytes.Buffer
		if err := replay.NewWriter(&buf).Write(m); err != nil {
			if chat != "" && move >= 0 {
				t.Fatalf("writer refused a valid move %+v: %v", m, err)
			}
			return
		}
		back, err := replay.ParseMove(buf.Bytes())
		if err != nil {
			t.Fatalf("%q does not read back: %v", buf.Bytes(), err)
		}
		// encoding/json writes invalid UTF-8 as U+FFFD: compare with what it would keep.
		var want replay.Move
		b, _ := json.Marshal(m)
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(normal(back), normal(want)) {
			t.Fatalf("round trip: wrote %#v, read %#v", want, back)
		}
	})
}

// FuzzFromOpenAI: whatever the converter writes reads back as a transcript, and a log
// logged twice converts to what it converts to once (every move is written once).
func FuzzFromOpenAI(f *testing.F) {
	f.Add(`{"chat":"c","request":{"messages":[{"role":"user","content":"hi"}]},"response":{"choices":[{"message":{"role":"assistant","content":"Hello"}}]}}`)
	f.Add(`{"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},{"role":"assistant","tool_calls":[{"function":{"name":"t","arguments":"{}"}}]},{"role":"assistant","content":"a"}]}`)
	f.Add(`{"messages":[{"role":"assistant","content":"x"},{"role":"user","content":null}]}`)
	f.Fuzz(func(t *testing.T, log string) {
		var once bytes.Buffer
		n, err := replay.FromOpenAI(strings.NewReader(log), &once, nil)
		if err != nil {
			return
		}
		rd := replay.NewReader(bytes.NewReader(once.Bytes()), "out")
		for i := 0; ; i++ {
			_, err := rd.Next()
			if errors.Is(err, io.EOF) {
				if i != n {
					t.Fatalf("%d moves read back, %d written", i, n)
				}
				break
			}
			if err != nil {
				t.Fatalf("converter output does not read back: %v\n%s", err, once.Bytes())
			}
		}
		var twice bytes.Buffer
		if _, err := replay.FromOpenAI(strings.NewReader(log+"\n"+log), &twice, nil); err != nil {
			t.Fatalf("the log twice fails where once passed: %v", err)
		}
		if !bytes.Equal(once.Bytes(), twice.Bytes()) {
			t.Fatalf("log twice converts differently:\nonce  %s\ntwice %s", once.Bytes(), twice.Bytes())
		}
	})
}
