package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules"
)

// The files the sandbox starts with. notes.md carries the typos of the session.
var sandboxFiles = map[string]string{
	"notes.md": "# Notes\n" +
		"- Remember to recieve the parcel on Monday.\n" +
		"- Call teh plumber about the kitchen sink.\n" +
		"- Send the invoice to the new adress.\n",
	"todo.txt": "water the plants\nrenew the domain\n",
}

// sandbox is a temporary directory the demo's tools work in. Every path is resolved
// inside it through os.Root, so no tool can reach a file outside; nothing is executed.
// Close removes it.
type sandbox struct {
	dir  string
	root *os.Root

	mu     sync.Mutex
	outbox []string // what the Telegram tools would have sent
}

func newSandbox() (*sandbox, error) {
	dir, err := os.MkdirTemp("", "streamrules-demo-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	s := &sandbox{dir: dir, root: root}
	for name, content := range sandboxFiles {
		if err := root.WriteFile(name, []byte(content), 0o644); err != nil {
			s.Close()
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	return s, nil
}

// Close removes the sandbox and everything in it.
func (s *sandbox) Close() error {
	return errors.Join(s.root.Close(), os.RemoveAll(s.dir))
}

// Outbox returns what the Telegram tools sent, in order.
func (s *sandbox) Outbox() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.outbox)
}

func (s *sandbox) send(what string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outbox = append(s.outbox, what)
	return len(s.outbox)
}

// funcTool is a tools.Tool made of a function. Its failures are answers for the model
// ("error: …"), never Go errors: LangChainGo's executor aborts the run on a tool error.
// So Call marks them failed with streamrules.MarkToolFailed, the one way to tell the
// move's tool record (tool_succeeded, edited_unchecked) that an output is a failure.
type funcTool struct {
	name, description string
	call              func(input string) string
}

func (t *funcTool) Name() string        { return t.name }
func (t *funcTool) Description() string { return t.description }
func (t *funcTool) Call(ctx context.Context, input string) (string, error) {
	out := t.call(input)
	if strings.HasPrefix(out, "error: ") {
		streamrules.MarkToolFailed(ctx)
	}
	return out, nil
}

// Tools returns the sandbox's tools. Inputs are JSON objects, as a tool-calling model
// writes them; read_file and shell also take a bare path or command line.
func (s *sandbox) Tools() []tools.Tool {
	return []tools.Tool{
		&funcTool{"read_file", `Read a file. Input: JSON {"path": "notes.md"}.`, s.readFile},
		&funcTool{"write_file", `Create a NEW file, or replace a file whole. Input: JSON {"path": "...", "content": "..."}. To change an existing file use write_diff.`, s.writeFile},
		&funcTool{"write_diff", `Change an existing file: replace the text old with new (first occurrence). Input: JSON {"path": "...", "old": "...", "new": "..."}.`, s.writeDiff},
		&funcTool{"shell", `Run a shell command on this server, in the working folder. Knows ls, cat, pwd, echo and du -sh. Input: JSON {"cmd": "ls"}.`, s.shell},
		&funcTool{"telegram_send_photo", `Send a photo to the Telegram chat. Input: JSON {"photo": "https://...", "caption": "..."}.`, s.sendPhoto},
		&funcTool{"telegram_react", `React to a Telegram message with an emoji. Input: JSON {"emoji": "👍", "message_id": 123}.`, s.react},
		&funcTool{"run_tests", `Run the folder's checks (a spell check of notes.md). Input: JSON {}.`, s.runTests},
		&funcTool{"generate_speech", `Turn text into speech and save it as an audio file. Input: JSON {"text": "...", "file": "greeting.mp3"}.`, s.generateSpeech},
	}
}

// decode reads a JSON object input into v. A non-JSON input is given to bare, if set.
func decode(input string, v any, bare func(string)) error {
	in := strings.TrimSpace(input)
	if !strings.HasPrefix(in, "{") {
		if bare != nil && in != "" {
			bare(in)
			return nil
		}
		return errors.New("the input must be a JSON object")
	}
	if err := json.Unmarshal([]byte(in), v); err != nil {
		return fmt.Errorf("the input is not valid JSON: %v", err)
	}
	return nil
}

// clean maps a path the model gives to a name inside the sandbox root.
func clean(p string) string {
	p = path.Clean("/" + strings.TrimSpace(p))
	if p == "/" {
		return "."
	}
	return strings.TrimPrefix(p, "/")
}

func fail(format string, args ...any) string { return "error: " + fmt.Sprintf(format, args...) }

func (s *sandbox) readFile(input string) string {
	var a struct {
		Path string `json:"path"`
	}
	if err := decode(input, &a, func(p string) { a.Path = p }); err != nil {
		return fail("%v", err)
	}
	data, err := s.root.ReadFile(clean(a.Path))
	if err != nil {
		return fail("%v", unwrapPath(err))
	}
	return string(data)
}

func (s *sandbox) writeFile(input string) string {
	var a struct {
		Path    string  `json:"path"`
		Content *string `json:"content"`
	}
	if err := decode(input, &a, nil); err != nil {
		return fail("%v", err)
	}
	if a.Path == "" || a.Content == nil {
		return fail(`write_file needs "path" and "content"`)
	}
	if err := s.root.WriteFile(clean(a.Path), []byte(*a.Content), 0o644); err != nil {
		return fail("%v", unwrapPath(err))
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(*a.Content), clean(a.Path))
}

func (s *sandbox) writeDiff(input string) string {
	var a struct {
		Path string `json:"path"`
		Old  string `json:"old"`
		New  string `json:"new"`
	}
	if err := decode(input, &a, nil); err != nil {
		return fail("%v", err)
	}
	if a.Path == "" || a.Old == "" {
		return fail(`write_diff needs "path", "old" and "new"`)
	}
	name := clean(a.Path)
	data, err := s.root.ReadFile(name)
	if err != nil {
		return fail("%v", unwrapPath(err))
	}
	if !bytes.Contains(data, []byte(a.Old)) {
		return fail("%q not found in %s: nothing changed", a.Old, name)
	}
	data = bytes.Replace(data, []byte(a.Old), []byte(a.New), 1)
	if err := s.root.WriteFile(name, data, 0o644); err != nil {
		return fail("%v", unwrapPath(err))
	}
	return fmt.Sprintf("%s: replaced %q with %q", name, a.Old, a.New)
}

// shell is a tiny interpreter, not a shell: it understands a handful of read-only
// commands, computed in Go inside the sandbox. Nothing is ever executed.
func (s *sandbox) shell(input string) string {
	var a struct {
		Cmd string `json:"cmd"`
	}
	if err := decode(input, &a, func(c string) { a.Cmd = c }); err != nil {
		return fail("%v", err)
	}
	if strings.ContainsAny(a.Cmd, "|;&<>`$()") {
		return "sh: pipes, redirections and substitutions are not available in this sandbox"
	}
	fields := strings.Fields(a.Cmd)
	if len(fields) == 0 {
		return "sh: empty command"
	}
	var args []string // operands; flags are accepted and ignored
	for _, f := range fields[1:] {
		if !strings.HasPrefix(f, "-") {
			args = append(args, f)
		}
	}
	switch fields[0] {
	case "pwd":
		return s.dir
	case "echo":
		return strings.Join(fields[1:], " ")
	case "ls":
		if len(args) == 0 {
			args = []string{"."}
		}
		var out []string
		for _, p := range args {
			entries, err := fs.ReadDir(s.root.FS(), clean(p))
			if err != nil {
				return "ls: " + unwrapPath(err).Error()
			}
			for _, e := range entries {
				name := e.Name()
				if e.IsDir() {
					name += "/"
				}
				out = append(out, name)
			}
		}
		return strings.Join(out, "\n")
	case "cat":
		var out strings.Builder
		for _, p := range args {
			data, err := s.root.ReadFile(clean(p))
			if err != nil {
				return "cat: " + unwrapPath(err).Error()
			}
			out.Write(data)
		}
		return out.String()
	case "du":
		if len(args) == 0 {
			args = []string{"."}
		}
		var out []string
		for _, p := range args {
			var total int64
			err := fs.WalkDir(s.root.FS(), clean(p), func(_ string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if info, err := d.Info(); err == nil && !d.IsDir() {
					total += info.Size()
				}
				return nil
			})
			if err != nil {
				return "du: " + unwrapPath(err).Error()
			}
			out = append(out, human(total)+"\t"+p)
		}
		return strings.Join(out, "\n")
	}
	return fmt.Sprintf("sh: %s: command not found (this sandbox knows ls, cat, pwd, echo, du -sh)", fields[0])
}

func (s *sandbox) sendPhoto(input string) string {
	var a struct {
		Photo   string `json:"photo"`
		Caption string `json:"caption"`
	}
	if err := decode(input, &a, nil); err != nil {
		return fail("%v", err)
	}
	if a.Photo == "" {
		return fail(`telegram_send_photo needs "photo"`)
	}
	n := s.send("photo " + a.Photo + " " + a.Caption)
	return fmt.Sprintf("photo sent to the chat (outgoing message %d)", n)
}

func (s *sandbox) react(input string) string {
	var a struct {
		Emoji     string `json:"emoji"`
		MessageID int64  `json:"message_id"`
	}
	if err := decode(input, &a, nil); err != nil {
		return fail("%v", err)
	}
	if strings.TrimSpace(a.Emoji) == "" || a.MessageID <= 0 {
		return fail(`telegram_react needs "emoji" and "message_id"`)
	}
	s.send(fmt.Sprintf("reaction %s on #%d", a.Emoji, a.MessageID))
	return fmt.Sprintf("reacted %s to message #%d", a.Emoji, a.MessageID)
}

// unwrapPath drops the absolute sandbox path from file errors: the model sees the name
// it asked for.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", pe.Path, pe.Err)
	}
	return err
}

// human formats a size the way du -h does.
func human(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	f := float64(n)
	for _, suffix := range []string{"K", "M", "G", "T"} {
		f /= unit
		if f < unit || suffix == "T" {
			if f < 10 {
				return fmt.Sprintf("%.1f%s", f, suffix)
			}
			return fmt.Sprintf("%.0f%s", f, suffix)
		}
	}
	return fmt.Sprintf("%dB", n)
}

// misspelled are the words run_tests looks for: the typos notes.md starts with.
var misspelled = []string{"recieve", "teh", "adress"}

// runTests spell-checks notes.md: a check that fails until every typo is fixed.
func (s *sandbox) runTests(string) string {
	data, err := s.root.ReadFile("notes.md")
	if err != nil {
		return fail("%v", unwrapPath(err))
	}
	var found []string
	for _, w := range misspelled {
		if bytes.Contains(data, []byte(w)) {
			found = append(found, w)
		}
	}
	if found != nil {
		return fail("notes.md: misspelled: %s", strings.Join(found, ", "))
	}
	return "ok: notes.md has no misspelled words"
}

// generateSpeech stands in for a text-to-speech service: it saves the text, as the
// audio file would be, under the file's name.
func (s *sandbox) generateSpeech(input string) string {
	var a struct {
		Text string `json:"text"`
		File string `json:"file"`
	}
	if err := decode(input, &a, func(t string) { a.Text = t }); err != nil {
		return fail("%v", err)
	}
	if strings.TrimSpace(a.Text) == "" {
		return fail(`generate_speech needs "text"`)
	}
	if a.File == "" {
		a.File = "speech.mp3"
	}
	if err := s.root.WriteFile(clean(a.File), []byte(a.Text), 0o644); err != nil {
		return fail("%v", unwrapPath(err))
	}
	return fmt.Sprintf("saved %s (%d characters of speech)", clean(a.File), len([]rune(a.Text)))
}
