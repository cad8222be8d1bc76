package streamrules

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/streamrules/streamrules/internal/splice"
	"github.com/streamrules/streamrules/internal/tagskel"
)

// The tag names the model sees. Nothing else may produce them: tool output that
// contains them is neutralised before it reaches the prompt.
const (
	ReminderTag  = "system-reminder"
	InterruptTag = "system-interrupt"
)

// interruptFooter follows every rule text in an interrupt block.
const interruptFooter = "That reply was discarded and NOBODY saw it. Write the reply again, following the rule."

// Reminder is one soft rule's block on a tool result.
type Reminder struct {
	Rule string
	Text string // the rule's text; for a manifest delivery, its hint
	// Delivery is DeliveryManifest for a reminder over the tour's budget (Config.ReminderBudget);
	// empty (or DeliveryFull) for a whole one.
	Delivery Delivery
}

// Block renders the reminder as it goes into the prompt copy.
func (r Reminder) Block() string {
	if r.Delivery == DeliveryManifest {
		return r.manifestBlock()
	}
	return "<" + ReminderTag + ` rule="` + escapeAttr(r.Rule) + `">` + escapeText(r.Text) + "</" + ReminderTag + ">"
}

// InterruptBlock renders one violated rule's block for the retry message.
func InterruptBlock(rule, text string) string {
	return "<" + InterruptTag + ` reason="rule_violation" rule="` + escapeAttr(rule) + `">` +
		escapeText(text) + "\n" + interruptFooter + "</" + InterruptTag + ">"
}

var (
	attrEscaper = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;", `"`, "&quot;")
	textEscaper = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;")
)

func escapeAttr(s string) string { return attrEscaper.Replace(s) }

// escapeText keeps a rule's text from closing its own tag or opening another: a tag in
// any form (see Neutralize) is defused first, then the markup characters are escaped.
func escapeText(s string) string {
	s = Neutralize(s)
	if !strings.ContainsAny(s, "&<>") {
		return s
	}
	return textEscaper.Replace(s)
}

// Neutralize defuses every engine tag in untrusted text such as a tool's output, the user's
// input or the chat history, so it cannot pose as the system in the prompt. A tag is read
// the way a reader, human or model, would take it: through look-alike letters, invisible
// characters, hyphen-likes and escapes of '<'. The '<' of each one, however it is written,
// becomes '[': the rest of the text is left as it was.
// Text without such a tag is returned unchanged, without allocating. It reads the text in
// one pass: its cost grows linearly with the text's length, however many tags it holds.
func Neutralize(s string) string { return tagskel.Neutralize(s) }

// StripBlocks removes every reminder and interrupt block (and the newline after it) from text
// shaped like the engine's own blocks. It reads a prompt as the model got it (a debugging
// tap, a transcript of prompts): there every other tag is neutralised, so every real tag is
// one the engine wrote. It is a pattern, so the clean view of callbacks does not use it
// (internal/cleanview.Inserted records what the engine put where).
func StripBlocks(s string) string {
	if !strings.Contains(s, "<system-") {
		return s
	}
	for _, tag := range []string{ReminderTag, InterruptTag} {
		open, closing := "<"+tag+" ", "</"+tag+">"
		for {
			i := strings.Index(s, open)
			if i < 0 {
				break
			}
			j := strings.Index(s[i:], closing)
			if j < 0 {
				break
			}
			end := i + j + len(closing)
			if end < len(s) && s[end] == '\n' {
				end++
			}
			s = s[:i] + s[end:]
		}
	}
	return s
}

// IsInterruptMessage reports whether text is (only) interrupt blocks: the retry's human-role message.
func IsInterruptMessage(text string) bool {
	return strings.HasPrefix(text, "<"+InterruptTag+" ") && strings.TrimSpace(StripBlocks(text)) == ""
}

// CompactArgs returns a tool input as rules see it: compacted with encoding/json when it is JSON,
// the raw string otherwise.
func CompactArgs(input string) string {
	if !needsCompact(input) {
		return input
	}
	var buf bytes.Buffer
	buf.Grow(len(input))
	if err := json.Compact(&buf, []byte(input)); err != nil {
		return input
	}
	return buf.String()
}

// needsCompact is a cheap pre-check: only input that starts like a JSON value and holds
// JSON whitespace can change. Any JSON value counts (an object, an array, but also a bare
// string, number, true, false or null): json.Compact leaves JSON without whitespace as is.
func needsCompact(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	if t == "" || !strings.ContainsRune(`{["-0123456789tfn`, rune(t[0])) {
		return false
	}
	return strings.ContainsAny(s, " \t\r\n")
}

// spliceOptions control how a tool result is laid into the prompt copy.
type spliceOptions struct {
	MaxChars          int    // cap on the tool's output in characters; 0: no cap
	EmptyOutputMarker string // removed when reminders go on top; "": none
}

// Splice builds the prompt copy of a tool result with the engine's Config.EmptyOutputMarker
// and Config.ToolResultMaxChars: first the empty-output marker is removed (only when
// reminders go on top), then the output is cut at ToolResultMaxChars characters, then
// neutralised, then the reminder blocks are laid in front in the order given, each followed
// by a newline. It is deterministic, so the same call spliced in every later tour is
// byte-identical.
func (e *Engine) Splice(output string, reminders []Reminder) string {
	return spliceWith(output, reminders, e.splice)
}

// spliceWith is Splice with the options given.
func spliceWith(output string, reminders []Reminder, opt spliceOptions) string {
	body := splice.Body(output, len(reminders) > 0, opt.MaxChars, opt.EmptyOutputMarker)
	if len(reminders) == 0 {
		return body
	}
	return splice.Blocks(reminders) + body
}
