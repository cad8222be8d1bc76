package ruletools

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/ruleinput"
)

// ReadName is the reader tool's name, as manifest blocks spell it.
const ReadName = streamrules.ReadToolName

// Reader returns the stream_rule_read tool over eng: it gives the whole text of a rule
// whose reminder was delivered in manifest form in this move (over the tour's reminder
// budget, see streamrules.Config.ReminderBudget), and refuses any other rule. Any move may
// call it, not only the master's; the read is recorded on the rule's firing
// (streamrules.Firing.Read), so the stats show whether manifest rules get read.
//
// Input: {"rule": "name"} (or the bare name). Output: {"ok": true, "rule": …, "text": …},
// or {"ok": false, "error": …, "field": "rule"}, never a Go error.
func Reader(eng *streamrules.Engine) tools.Tool { return &readTool{eng: eng} }

type readTool struct{ eng *streamrules.Engine }

// ReadResult is stream_rule_read's output on success.
type ReadResult struct {
	OK   bool   `json:"ok"`
	Rule string `json:"rule"`
	Text string `json:"text"`
}

func (r ReadResult) String() string { return jsonText(r) }

// deliveryScheme is what the CRUD tools' descriptions say of the reminder budget's fields.
var deliveryScheme = ` Reminder budget: delivery (tool rules: "full" keeps the reminder whole even over the budget, for rules with teeth; empty: whole while the budget lasts, then a short manifest block); hint (at most ` +
	strconv.Itoa(streamrules.MaxHintChars) + ` characters: what the manifest block says; empty: the text's first sentence).` +
	` Tests: tests ({"fires": ["an answer, or a tool call's JSON arguments, that must fire the rule", ...], "passes": ["... that must not", ...]}, at most ` +
	strconv.Itoa(streamrules.MaxTestExamples) + ` of each; an example may be {"text": "…", "input": "the user's message", "tools": [{"tool": "run_tests", "ok": true}]} for a rule that reads the move); never sent to the model, run by streamrules test.`

// maxReadInputBytes caps stream_rule_read's input: a rule name is 64 bytes at most.
const maxReadInputBytes = 1 << 10

const readWant = `{"rule": "rule_name"}`

func (t *readTool) Name() string { return ReadName }
func (t *readTool) Description() string {
	return `Read the whole text of a stream rule that a <system-reminder … delivery="manifest"> block named in this conversation turn. ` +
		`Input: ` + readWant + `. Only rules delivered in that short form in this turn can be read.`
}

func (t *readTool) Call(ctx context.Context, input string) (string, error) {
	m := streamrules.MoveFrom(ctx)
	if m == nil || m.Engine() != t.eng {
		return fail("", "refused: there is no conversation turn of this agent to read rules in")
	}
	if len(input) > maxReadInputBytes {
		return fail("", "the input is %d bytes, more than %s takes (%d): it takes %s", len(input), ReadName, maxReadInputBytes, readWant)
	}
	var in struct {
		Rule string `json:"rule"`
	}
	// A leading byte order mark says nothing, as for the CRUD tools (rulefile drops it):
	// "\ufeff{"rule":"bravo"}" is JSON, not a bare name.
	input = strings.TrimPrefix(strings.TrimSpace(input), "\ufeff")
	if s := strings.TrimSpace(input); s != "" && !strings.HasPrefix(s, "{") && !strings.HasPrefix(s, "```") {
		in.Rule = strings.Trim(s, `"`) // a model may pass the bare name
	} else if err := ruleinput.DecodeJSON(unfence(input), &in); err != nil {
		return badInput(err, ReadName, readWant)
	}
	if strings.TrimSpace(in.Rule) == "" {
		return fail("rule", `"rule" must name the rule to read, as its manifest block's rule="…" says`)
	}
	text, err := m.ReadRule(ctx, in.Rule)
	switch {
	case errors.Is(err, streamrules.ErrNotManifest):
		return fail("rule", "refused: rule %q was not delivered in manifest form in this turn; %s reads only the rules a manifest block named, and the others are in front of you whole",
			ruleinput.Excerpt(in.Rule), ReadName)
	case err != nil:
		return fail("", "refused: %v", err)
	}
	// A loaded rule's text is at most streamrules.MaxTextChars characters (the engine
	// validates every row): the output is bounded by the rule's own limit.
	return ReadResult{OK: true, Rule: in.Rule, Text: clip(text, streamrules.MaxTextChars)}.String(), nil
}
