package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/streamrules/streamrules/internal/ruleinput"
	"github.com/streamrules/streamrules/rulefile"
)

// Move is one line of a transcript: one move of one chat, as it happened.
type Move struct {
	// Chat identifies the conversation; a chat's repeat policies count its moves. Required.
	Chat string `json:"chat"`
	// Move is the move's number in its chat, 1-based; 0 (absent) means "the one after the
	// chat's previous line". Numbers must grow within a chat; gaps are kept, so an after:N
	// policy sees the moves a filtered transcript left out.
	Move int64 `json:"move,omitempty"`
	// Env lists the environments that held in the move (telegram, client_ops, …).
	Env []string `json:"env,omitempty"`
	// Input is the user's message that began the move (the chain's input value), what a
	// rule's input_contains_regex reads. Absent (nil): not known, and a verdict that needs
	// it is not applicable; "" is an empty message.
	Input *string `json:"input,omitempty"`
	// Tools are the move's tool calls, in order: also the move's tool record, what
	// tool_called, tool_succeeded, tool_failed and edited_unchecked read (every call
	// comes before the answer; for a tool rule, the calls before the one judged).
	Tools []ToolCall `json:"tools,omitempty"`
	// Answer is what the model said first in the move: the first answer the text rules
	// judged, before a rule discarded it or a fix repaired it. It is what a backtest
	// judges, since a rule under test must see what the model says unguarded; recorded
	// after the rules, it would hold only what got past them. Without rules live it is
	// simply the move's answer.
	Answer string `json:"answer"`
	// Reasoning is the model's reasoning in the tour of Answer (reasoning_content, or
	// Anthropic's thinking blocks), what the thinking rules judge, before the answer. Absent:
	// the model gave none, and no thinking rule can fire.
	Reasoning string `json:"reasoning,omitempty"`
	// Discarded are the answers the rules discarded live, in order (the first is Answer
	// when they discarded it). A backtest does not judge them: it judges Answer once, as
	// a transcript has no replays. Absent: none was.
	Discarded []string `json:"discarded,omitempty"`
	// Accepted is the answer the client got (after a replay or a fix). Absent: Answer.
	Accepted *string `json:"accepted,omitempty"`
	// Vars are the move's variables the host set for fixes ({{message_id}}, see
	// streamrules.Move.SetVar). Without them a templated fix cannot repair, and its miss
	// counts as a discard, as it would live.
	Vars map[string]string `json:"vars,omitempty"`
}

// ToolCall is one tool call of a move.
type ToolCall struct {
	// Name is the tool's name, as a rule's scope tool:<name> names it. Required.
	Name string `json:"name"`
	// Args is the call's input as the tool received it: usually a JSON object written as
	// a string. Reading a transcript also accepts the object itself (or any JSON value),
	// kept as its text; writing one always writes a string.
	Args string `json:"args"`
	// OK says whether the call returned normally: false for a Go error or an output the
	// host marked failed (streamrules.MarkToolFailed). Absent (nil) means true.
	OK *bool `json:"ok,omitempty"`
	// Refused marks a call a gate stopped live: it never ran (it was declared by a
	// discarded response, or refused in place after the retry ceiling). A backtest asks
	// the gates first for every call, refused or not, as the tool wrapper does live.
	Refused bool `json:"refused,omitempty"`
}

// Succeeded reports whether the call returned normally (OK absent or true).
func (c ToolCall) Succeeded() bool { return c.OK == nil || *c.OK }

// UnmarshalJSON reads a tool call strictly: unknown fields are an error, args may be a
// string or any other JSON value.
func (c *ToolCall) UnmarshalJSON(data []byte) error {
	var w struct {
		Name    *string         `json:"name"`
		Args    json.RawMessage `json:"args"`
		OK      *bool           `json:"ok"`
		Refused bool            `json:"refused"`
	}
	if err := strictDecode(data, &w); err != nil {
		return err
	}
	if w.Name == nil {
		return errors.New(`tool call without "name"`)
	}
	args, err := argsText(w.Args)
	if err != nil {
		return fmt.Errorf("tool %q: args: %w", *w.Name, err)
	}
	c.Name, c.Args, c.OK, c.Refused = *w.Name, args, w.OK, w.Refused
	return nil
}

// strictDecode decodes exactly one JSON value with no unknown fields and nothing after it.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON object")
	}
	return nil
}

// wireMove is Move as ParseMove decodes it: plain structs all the way down, so the
// decoder's DisallowUnknownFields reaches the tool calls too without a decoder per call.
type wireMove struct {
	Chat      string            `json:"chat"`
	Move      int64             `json:"move"`
	Env       []string          `json:"env"`
	Input     *string           `json:"input"`
	Tools     []wireTool        `json:"tools"`
	Answer    string            `json:"answer"`
	Reasoning string            `json:"reasoning"`
	Discarded []string          `json:"discarded"`
	Accepted  *string           `json:"accepted"`
	Vars      map[string]string `json:"vars"`
}

type wireTool struct {
	Name    *string         `json:"name"`
	Args    json.RawMessage `json:"args"`
	OK      *bool           `json:"ok"`
	Refused bool            `json:"refused"`
}

// wireShape is what a line may hold, for ruleinput.CheckJSON: wireMove's names, with
// null allowed wherever encoding/json reads it as absent.
type wireShape struct {
	Chat      *string            `json:"chat"`
	Move      *int64             `json:"move"`
	Env       *[]string          `json:"env"`
	Tools     *[]wireToolShape   `json:"tools"`
	Input     *string            `json:"input"`
	Answer    *string            `json:"answer"`
	Reasoning *string            `json:"reasoning"`
	Discarded *[]string          `json:"discarded"`
	Accepted  *string            `json:"accepted"`
	Vars      *map[string]string `json:"vars"`
}

type wireToolShape struct {
	Name    *string          `json:"name"`
	Args    *json.RawMessage `json:"args"`
	OK      *bool            `json:"ok"`
	Refused *bool            `json:"refused"`
}

// ParseMove reads one transcript line. It refuses what a rule file refuses: unknown
// fields, a field twice or in another case ("Chat"), invalid UTF-8 (an escaped lone
// surrogate too), a value of the wrong type, data after the object. The error names the
// field; it carries no position (Reader adds the file and line).
func ParseMove(line []byte) (Move, error) {
	var w wireMove
	if err := strictDecode(line, &w); err != nil {
		return Move{}, cleanJSONError(err)
	}
	// encoding/json keeps the last of two "answer" keys, matches "Answer" as "answer" and
	// turns invalid UTF-8 into U+FFFD: rule files refuse all three, and so does a
	// transcript, with rulefile's own checks.
	if err := checkLine(line); err != nil {
		return Move{}, err
	}
	m := Move{Chat: w.Chat, Move: w.Move, Env: w.Env, Input: w.Input, Answer: w.Answer, Reasoning: w.Reasoning,
		Discarded: w.Discarded, Accepted: w.Accepted, Vars: w.Vars}
	if len(w.Tools) > 0 {
		m.Tools = make([]ToolCall, len(w.Tools))
	}
	for i, t := range w.Tools {
		if t.Name == nil {
			return Move{}, fmt.Errorf(`tools[%d]: tool call without "name"`, i)
		}
		m.Tools[i].Name, m.Tools[i].OK, m.Tools[i].Refused = *t.Name, t.OK, t.Refused
		args, err := argsText(t.Args)
		if err != nil {
			return Move{}, fmt.Errorf("tools[%d] (%s): args: %v", i, *t.Name, cleanJSONError(err))
		}
		m.Tools[i].Args = args
	}
	if err := m.check(); err != nil {
		return Move{}, err
	}
	return m, nil
}

// checkLine runs ruleinput.CheckJSON on a line encoding/json decoded, unless plainLine
// shows it has nothing CheckJSON could refuse.
func checkLine(line []byte) error {
	if plainLine(line) {
		return nil
	}
	if err := ruleinput.CheckJSON(line, (*wireShape)(nil)); err != nil {
		var fe *rulefile.Error
		if errors.As(err, &fe) {
			return fe.Err
		}
		return err
	}
	return nil
}

// argsText is a call's args as text: a JSON string's value, any other JSON value's text.
func argsText(raw json.RawMessage) (string, error) {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", nil
	case raw[0] == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	// Kept as its text, but as valid UTF-8, as a JSON string would be decoded: a move
	// reads back the same after it is written.
	return strings.ToValidUTF8(string(raw), "\uFFFD"), nil
}

// check validates what decoding alone does not.
func (m *Move) check() error {
	switch {
	case m.Chat == "":
		return errors.New(`"chat" is missing or empty: every move belongs to a chat`)
	case m.Move < 0:
		return fmt.Errorf(`"move" is %d: a move number is 1 or more (or absent)`, m.Move)
	}
	for i, c := range m.Tools {
		if c.Name == "" {
			return fmt.Errorf(`tools[%d]: "name" is empty`, i)
		}
	}
	for i, e := range m.Env {
		if e == "" {
			return fmt.Errorf(`env[%d] is empty`, i)
		}
	}
	return nil
}

// cleanJSONError drops encoding/json's "json: " prefix and names the Go types the way the
// transcript does.
func cleanJSONError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("not JSON: %v (at byte %d)", se, se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := "a JSON object"
		switch te.Type.Kind() {
		case reflect.String, reflect.Pointer:
			want = "a string"
		case reflect.Int64:
			want = "a whole number"
		case reflect.Slice:
			want = "an array"
		}
		if te.Field == "" {
			return fmt.Errorf("a move is a JSON object, not a JSON %s", te.Value)
		}
		return fmt.Errorf("%q must be %s, not a JSON %s", te.Field, want, te.Value)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("not JSON: the object is cut short")
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return errors.New(msg)
}

// LineError is a bad transcript line. Its message is "file:line: what is wrong".
type LineError struct {
	File string // the source's name, as given
	Line int    // 1-based
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }

// Unwrap returns the cause.
func (e *LineError) Unwrap() error { return e.Err }

// MaxLineBytes is the longest transcript line Reader reads (16 MiB): a longer one is a
// *LineError, and its bytes are skipped without being kept, so reading a transcript
// costs a bounded memory whatever its lines hold.
const MaxLineBytes = 16 << 20

// errLongLine is a line longer than MaxLineBytes.
var errLongLine = fmt.Errorf("the line is longer than %d bytes (%d MiB), the most a move may take", MaxLineBytes, MaxLineBytes>>20)

// Reader reads a transcript, one move per line. Blank lines are skipped; a line may be
// MaxLineBytes long.
type Reader struct {
	name  string
	lines *lineReader
}

// NewReader reads a transcript from r; name is how errors call it (a file name).
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{name: name, lines: newLineReader(r)}
}

// Line returns the line number of the move Next returned last (1-based).
func (r *Reader) Line() int { return r.lines.line }

// Offset returns how many bytes were read so far.
func (r *Reader) Offset() int64 { return r.lines.bytes }

// Next returns the next move; io.EOF at the end. A bad line is a *LineError, and the
// reader can go on past it.
func (r *Reader) Next() (Move, error) {
	line, n, err := r.lines.next()
	if errors.Is(err, errLongLine) {
		return Move{}, &LineError{File: r.name, Line: n, Err: err}
	}
	if err != nil {
		if !errors.Is(err, io.EOF) {
			err = fmt.Errorf("replay: %s: %w", r.name, err)
		}
		return Move{}, err
	}
	m, err := ParseMove(line)
	if err != nil {
		return Move{}, &LineError{File: r.name, Line: n, Err: err}
	}
	return m, nil
}

// lineReader returns the non-blank lines of r with their numbers.
type lineReader struct {
	r     *bufio.Reader
	line  int   // the last line read, 1-based
	bytes int64 // bytes read so far
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64*1024)}
}

// next returns the next non-blank line and its number; io.EOF at the end. The line is
// valid until the next call. A line longer than MaxLineBytes is errLongLine, with its
// number; its bytes are read and dropped.
func (lr *lineReader) next() ([]byte, int, error) {
	for {
		line, err := lr.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: collect it whole. ReadSlice's buffer is reused, so copy first.
			buf := bytes.Clone(line)
			long := false
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = lr.r.ReadSlice('\n')
				if long = long || len(buf)+len(line) > MaxLineBytes; long {
					lr.bytes += int64(len(buf) + len(line))
					buf = buf[:0]
					continue
				}
				if cap(buf)-len(buf) < len(line) {
					// Double: append grows a large slice by a quarter, which would
					// allocate five times the line on the way.
					buf = slices.Grow(buf, max(len(line), len(buf)))
				}
				buf = append(buf, line...)
			}
			if long {
				lr.line++
				if err != nil && !errors.Is(err, io.EOF) {
					return nil, 0, err
				}
				return nil, lr.line, errLongLine
			}
			line = buf
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, err
		}
		if len(line) == 0 && err != nil {
			return nil, 0, io.EOF
		}
		lr.line++
		lr.bytes += int64(len(line))
		if lr.line == 1 {
			// Editors on Windows start UTF-8 files with a byte order mark; it says nothing
			// about the first move (rulefile drops it from a rule file too).
			line = bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
		}
		if len(bytes.TrimSpace(line)) == 0 {
			if err != nil {
				return nil, 0, io.EOF
			}
			continue
		}
		return line, lr.line, nil
	}
}

// Writer writes a transcript, one move per line.
type Writer struct {
	enc *json.Encoder
}

// NewWriter writes to w.
func NewWriter(w io.Writer) *Writer {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // answers carry <, > and & as they are
	return &Writer{enc: enc}
}

// Write writes m as one line. It checks m as a reader would, so what it writes reads back.
func (w *Writer) Write(m Move) error {
	if err := m.check(); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	return w.enc.Encode(m)
}
