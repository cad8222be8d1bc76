package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	lcb "github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"

	"github.com/streamrules/streamrules"
)

// transcript prints the session move by move. It is the client's callbacks handler: the
// middleware hands it (through clientview.Clean) the tool events with the clean output, and
// the move's stream func gives it the answer as it streams. Everything it receives that
// way is also kept, raw and uncut, in a client-only log: exactly what the client got.
// What the model was told is printed apart, from the model's recorded prompts.
type transcript struct {
	lcb.SimpleHandler

	mu        sync.Mutex
	w         io.Writer
	client    strings.Builder // the client-only log: raw events and chunks
	streaming bool            // an answer line is open
	streamed  strings.Builder // this move's streamed text
	tool      string          // the tool the next HandleToolStart belongs to
	moves     []moveLog
}

var _ lcb.Handler = (*transcript)(nil)

// moveLog is one move as the transcript saw it.
type moveLog struct {
	Number   int64
	Input    string // the user's text, without the header
	Streamed string // what the client's stream carried
	Output   string // the final output of the executor
	Told     []told // what the model was told beside the clean history
}

// told is one thing the model was told that the client never saw.
type told struct {
	Kind      string   // "reminder" or "interrupt"
	Tool      string   // reminder: the tool whose result carried it
	Rules     []string // the rules, in block order
	Blocks    []string // the blocks, verbatim
	Discarded string   // interrupt: the answer thrown away
}

func newTranscript(w io.Writer) *transcript { return &transcript{w: w} }

func (p *transcript) printf(format string, args ...any) {
	fmt.Fprintf(p.w, format, args...)
}

// saw keeps an event the client received, raw, in the client-only log.
func (p *transcript) saw(kind, raw string) {
	p.client.WriteString("\n[" + kind + "] ")
	p.client.WriteString(raw)
}

// ClientLog returns everything the client saw, over all moves.
func (p *transcript) ClientLog() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.client.String()
}

// Moves returns the moves played so far.
func (p *transcript) Moves() []moveLog {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]moveLog(nil), p.moves...)
}

func (p *transcript) beginMove(number, id int64, from string, env []string, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.streamed.Reset()
	p.moves = append(p.moves, moveLog{Number: number, Input: text})
	title := fmt.Sprintf("── move %d · message #%d · environment: %s ", number, id, strings.Join(env, ", "))
	p.printf("\n%s%s\n", title, strings.Repeat("─", max(0, headerWidth-utf8.RuneCountInString(title))))
	p.printf("%s: %s\n", from, text)
	p.saw("user", text)
	p.printf("  client saw:\n")
}

func (p *transcript) closeStream() {
	if p.streaming {
		p.printf("\n")
		p.streaming = false
	}
}

// stream is the move's chains.WithStreamingFunc: the answer as the client receives it.
// llms/openai also streams the JSON of tool-call deltas through it; the guard keeps them
// out of a move's stream (middleware.Config.StreamToolCalls), so every chunk is speech.
func (p *transcript) stream(_ context.Context, chunk []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(chunk) == 0 {
		return nil
	}
	if !p.streaming {
		p.printf("    answer   │ ")
		p.saw("stream", "")
		p.streaming = true
	}
	p.streamed.Write(chunk)
	p.client.Write(chunk)
	p.printf("%s", strings.ReplaceAll(string(chunk), "\n", "\n             │ "))
	return nil
}

// HandleAgentAction remembers which tool the executor is about to call.
func (p *transcript) HandleAgentAction(_ context.Context, a schema.AgentAction) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tool = a.Tool
}

func (p *transcript) HandleToolStart(_ context.Context, input string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeStream()
	p.printf("    tool     │ %s %s\n", p.tool, oneLine(input, 110))
	p.saw("tool start", p.tool+" "+input)
}

func (p *transcript) HandleToolEnd(_ context.Context, output string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.printf("    result   │ %s\n", oneLine(output, 110))
	p.saw("tool end", output)
}

func (p *transcript) HandleToolError(_ context.Context, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.printf("    tool err │ %v\n", err)
	p.saw("tool error", err.Error())
}

// The executor's own events are not printed, but kept in the client-only log: the
// client receives them too, so they must be clean as well.

func (p *transcript) HandleChainStart(_ context.Context, inputs map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.saw("chain start", fmt.Sprint(inputs))
}

func (p *transcript) HandleChainEnd(_ context.Context, outputs map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.saw("chain end", fmt.Sprint(outputs))
}

func (p *transcript) HandleAgentFinish(_ context.Context, f schema.AgentFinish) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.saw("agent finish", fmt.Sprint(f.ReturnValues, f.Log))
}

// endMove prints the final output and what the model was told in this move. Its
// notes explain rules that did not speak: held back by their repeat policy, or missed
// after the retry ceiling.
func (p *transcript) endMove(output string, err error, told []told, notes []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeStream()
	m := &p.moves[len(p.moves)-1]
	m.Streamed, m.Output, m.Told = p.streamed.String(), output, told
	switch {
	case err != nil:
		p.printf("    failed   │ %v\n", err)
		p.saw("error", err.Error())
	case output == m.Streamed:
		p.saw("output", output) // the answer line above is the output: nothing to add
	default:
		p.printf("    output   │ %s\n", indent(output, "             │ "))
		p.saw("output", output)
	}
	if len(told) == 0 {
		p.printf("  model was told: nothing beyond the chat\n")
	} else {
		p.printf("  model was told — the client never saw this:\n")
	}
	for _, t := range told {
		switch t.Kind {
		case "reminder":
			p.printf("    ⤷ on the result of %s, in the prompt only:\n", t.Tool)
		case "interrupt":
			if t.Discarded == "" {
				p.printf("    ✗ discarded response, never shown: its tool calls never ran\n") // a gate stopped them
			} else {
				p.printf("    ✗ discarded answer, never shown: %q\n", t.Discarded)
			}
			p.printf("    ⤷ and the tour played again with:\n")
		}
		for _, b := range t.Blocks {
			p.printf("        %s\n", indent(b, "        "))
		}
	}
	for _, n := range notes {
		p.printf("  %s\n", n)
	}
}

var (
	reminderRE  = regexp.MustCompile(`(?s)<` + streamrules.ReminderTag + ` rule="([^"]*)">.*?</` + streamrules.ReminderTag + `>`)
	interruptRE = regexp.MustCompile(`(?s)<` + streamrules.InterruptTag + ` reason="[^"]*" rule="([^"]*)">.*?</` + streamrules.InterruptTag + `>`)
)

// toldInMove reads, from the prompts the model received in one move, what it was told
// beside the clean history: the reminders laid on tool results (each once, though every
// later tour repeats the same splice) and each retry's discarded answer and interrupt.
func toldInMove(prompts [][]llms.MessageContent) []told {
	var out []told
	seen := map[string]bool{} // tool call IDs already reported
	for _, msgs := range prompts {
		names := map[string]string{}
		for _, m := range msgs {
			for _, part := range m.Parts {
				switch part := part.(type) {
				case llms.ToolCall:
					if part.FunctionCall != nil {
						names[part.ID] = part.FunctionCall.Name
					}
				case llms.ToolCallResponse:
					if seen[part.ToolCallID] {
						continue
					}
					if t := blocks(reminderRE, part.Content); len(t.Blocks) > 0 {
						seen[part.ToolCallID] = true
						t.Kind, t.Tool = "reminder", names[part.ToolCallID]
						if t.Tool == "" {
							t.Tool = part.Name
						}
						out = append(out, t)
					}
				}
			}
		}
		n := len(msgs)
		if n == 0 || msgs[n-1].Role != llms.ChatMessageTypeHuman || !streamrules.IsInterruptMessage(textOf(msgs[n-1])) {
			continue
		}
		t := blocks(interruptRE, textOf(msgs[n-1]))
		t.Kind = "interrupt"
		if n >= 2 && msgs[n-2].Role == llms.ChatMessageTypeAI {
			t.Discarded = textOf(msgs[n-2])
		}
		out = append(out, t)
	}
	return out
}

func blocks(re *regexp.Regexp, s string) told {
	var t told
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		t.Blocks = append(t.Blocks, m[0])
		t.Rules = append(t.Rules, m[1])
	}
	return t
}

func textOf(m llms.MessageContent) string {
	var parts []string
	for _, p := range m.Parts {
		if t, ok := p.(llms.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// headerWidth is the width of a move's header line, in characters, whatever the
// move's number: the rule is padded to it.
const headerWidth = 78

// escapes shows a tool's input or output on one line: newlines as ⏎, and tabs and
// carriage returns as \t and \r, which a terminal would otherwise turn into a jump
// or a line overwritten.
var escapes = strings.NewReplacer("\n", "⏎", "\t", `\t`, "\r", `\r`)

// oneLine shows a tool's input or output on one line, cut at max runes.
func oneLine(s string, limit int) string {
	s = escapes.Replace(strings.TrimRight(s, "\n"))
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	return string(r[:limit]) + "…"
}

func indent(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// tap records every prompt the model receives. The rig puts it below the guard's model
// wrapper, so it sees what the model was told (reminders, discarded answers, interrupts),
// which the client never does. It works the same on the scripted and the real model.
type tap struct {
	llms.Model
	mu    sync.Mutex
	calls [][]llms.MessageContent
}

func (t *tap) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	t.mu.Lock()
	t.calls = append(t.calls, slices.Clone(msgs))
	t.mu.Unlock()
	return t.Model.GenerateContent(ctx, msgs, options...)
}

func (t *tap) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, t, prompt, options...)
}

// count returns how many prompts were recorded so far.
func (t *tap) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.calls)
}

// since returns the prompts recorded after the first n.
func (t *tap) since(n int) [][]llms.MessageContent {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.calls[n:])
}
