package ruletools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/ruleinput"
	"github.com/streamrules/streamrules/rulefile"

	// Shell rules (Rule.Shell) are read as a shell reads them wherever this package runs.
	_ "github.com/streamrules/streamrules/shellcmd"
)

// Tool names.
const (
	ListName   = "stream_rule_list"
	CreateName = "stream_rule_create"
	EditName   = "stream_rule_edit"
	DeleteName = "stream_rule_delete"
)

// New returns the master's four CRUD tools over editor: stream_rule_list,
// stream_rule_create, stream_rule_edit and stream_rule_delete. eng is the engine the
// agent runs under: `when` is checked against its environments, and the edit is in force
// in it when the tool returns (for moves begun after it): a store that notifies its
// subscribers at once (rulesdb, streamrules.MemoryStore) has reloaded it already;
// otherwise the tool reloads it.
//
// Every call refuses unless the context carries a streamrules.Move whose environment
// holds "master". Refusals, bad input and store errors are the tool's output, never a Go
// error: a Go error would abort the agent run, while the model can act on the output.
func New(editor streamrules.RuleEditor, eng *streamrules.Engine) []tools.Tool {
	b := &base{editor: editor, eng: eng}
	return []tools.Tool{&listTool{b}, &createTool{b}, &editTool{b}, &deleteTool{b}}
}

type base struct {
	editor streamrules.RuleEditor
	eng    *streamrules.Engine
}

// RuleView is a rule as the tools show it: the rule in its own JSON (streamrules.Rule's
// names, "enabled" for Disabled; no id) and what the engine makes of it.
type RuleView struct {
	streamrules.Rule
	// Loaded: the engine runs this rule now. An enabled rule that is not loaded is broken
	// (see Problem).
	Loaded bool
	// Problem says why an enabled rule is not loaded (a row broken by hand).
	Problem string
	// Fired is how many times the rule fired, when the store counts firings.
	Fired *int64
	// Truncated: the rule was too long to list whole: its tests are left out, and if that
	// was not enough (a row edited by hand past the limits) its condition and text are cut
	// to excerpts.
	Truncated bool
}

// viewExtra is what a view adds to the rule's own JSON.
type viewExtra struct {
	Loaded    bool   `json:"loaded"`
	Problem   string `json:"problem,omitempty"`
	Fired     *int64 `json:"fired,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

// MarshalJSON writes the rule's own fields, then loaded, problem, fired and truncated.
func (v RuleView) MarshalJSON() ([]byte, error) {
	rule, err := v.Rule.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(viewExtra{v.Loaded, v.Problem, v.Fired, v.Truncated}); err != nil {
		return nil, err
	}
	extra := bytes.TrimSpace(buf.Bytes())
	out := append(rule[:len(rule)-1:len(rule)-1], ',')
	return append(out, extra[1:]...), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (v *RuleView) UnmarshalJSON(data []byte) error {
	if err := json.Unmarshal(data, &v.Rule); err != nil {
		return err
	}
	var x viewExtra
	if err := json.Unmarshal(data, &x); err != nil {
		return err
	}
	v.Loaded, v.Problem, v.Fired, v.Truncated = x.Loaded, x.Problem, x.Fired, x.Truncated
	return nil
}

// Result is every tool's output, as JSON.
type Result struct {
	OK           bool       `json:"ok"`
	Message      string     `json:"message,omitempty"`
	Error        string     `json:"error,omitempty"`
	Field        string     `json:"field,omitempty"` // the input field the error is about
	Rule         *RuleView  `json:"rule,omitempty"`
	Rules        []RuleView `json:"rules,omitempty"`
	Environments []string   `json:"environments,omitempty"`
	// NextCursor, on a list page that is not the last, is the cursor for the next page.
	NextCursor string `json:"next_cursor,omitempty"`
}

func (r Result) String() string { return jsonText(r) }

// jsonText is v as one line of JSON, with <, > and & as they are (a tool output is read
// by a model, not embedded in HTML).
func jsonText(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(buf.String())
}

// maxErrorChars bounds an error's text: whatever part of the input it quotes, the
// output stays short.
const maxErrorChars = 600

// maxProblemChars bounds a listed rule's problem: it quotes a row edited by hand, which
// no validation bounded.
const maxProblemChars = 300

// clip cuts s to n characters, marking the cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

func fail(field, format string, args ...any) (string, error) {
	msg := clip(fmt.Sprintf(format, args...), maxErrorChars)
	return Result{Field: ruleinput.Excerpt(field), Error: msg}.String(), nil
}

// refusal is the output of a call outside a master's move.
const refusal = "refused: stream rules can be listed and changed only by the master, and this conversation is not with the master (the move's environment lacks \"master\"). Tell the user that rules cannot be changed from here."

// otherEngine is the output of a call in a move another engine began: its "master" was
// decided by rules and environments these tools do not serve, and the edit would go to a
// store that move never reads.
const otherEngine = "refused: this move was begun by another stream rules engine than the one these tools edit; call the tools of the agent's own engine."

// refused returns why a call may not run, or "": the context must carry a move of this
// engine whose environment holds "master".
func (b *base) refused(ctx context.Context) string {
	m := streamrules.MoveFrom(ctx)
	switch {
	case m == nil || !m.Has(streamrules.EnvMaster):
		return refusal
	case m.Engine() != b.eng:
		return otherEngine
	}
	return ""
}

// storeError turns an editor error into tool output naming the field.
func storeError(name string, err error) (string, error) {
	name = ruleinput.Excerpt(name) // the name may be the model's input: quote a little of it
	var ve *streamrules.ValidationError
	switch {
	case errors.As(err, &ve):
		return fail(ve.Field, "invalid %s: %s", ve.Field, ve.Reason)
	case errors.Is(err, streamrules.ErrExists):
		return fail("name", "a rule named %q already exists: pick another name, or change that rule with %s", name, EditName)
	case errors.Is(err, streamrules.ErrNotFound):
		return fail("name", "there is no rule named %q: %s shows the rules", name, ListName)
	}
	return fail("", "the rule store failed, nothing was changed: %v", err)
}

// loaded returns the names and ids of the rules the engine runs now.
func (b *base) loaded() map[string]int64 {
	out := map[string]int64{}
	for _, r := range b.eng.Rules() {
		out[r.Name] = r.ID
	}
	return out
}

func (b *base) view(r streamrules.Rule, loaded map[string]int64, counts map[string]int64) RuleView {
	v := RuleView{Rule: r}
	v.ID, v.CreatedAt = 0, time.Time{} // the store's; the model acts by name
	if v.When == nil {
		v.When = []string{}
	}
	if id, ok := loaded[r.Name]; ok && id == r.ID {
		v.Loaded = true
	}
	if !r.Disabled && !v.Loaded {
		// Why the engine skipped this row, as it judged it (a name is judged as stored);
		// a row newer than the engine's rule set is judged here.
		for _, sk := range b.eng.Skipped() {
			if sk.ID == r.ID && sk.Name == r.Name {
				v.Problem = clip(sk.Reason, maxProblemChars)
				break
			}
		}
		if v.Problem == "" { // only then compile the rule again
			probe := r // Validate normalizes a copy: Normalize builds a new When
			if err := b.eng.Validate(&probe); err != nil {
				v.Problem = clip(err.Error(), maxProblemChars)
			}
		}
	}
	if counts != nil {
		n := counts[r.Name]
		v.Fired = &n
	}
	return v
}

// afterWrite makes the engine run the change now: stored is the rule as written (nil
// after a delete) and gone the name that must no longer run (a delete's or a rename's old
// name, or ""). A store that notifies synchronously has reloaded the engine already, so
// it reloads only when the engine does not show the change yet: one reload per edit.
func (b *base) afterWrite(ctx context.Context, stored *streamrules.Rule, gone string) string {
	if b.inForce(stored, gone) {
		return ""
	}
	if err := b.eng.Reload(ctx); err != nil {
		return " The change is saved, but the engine could not reload yet: it takes effect on its next reload."
	}
	return ""
}

// inForce reports whether the engine's loaded rules already reflect the write.
func (b *base) inForce(stored *streamrules.Rule, gone string) bool {
	var cur *streamrules.Rule
	for _, r := range b.eng.Rules() {
		if r.Name == gone && (stored == nil || gone != stored.Name) {
			return false
		}
		if stored != nil && r.Name == stored.Name {
			cur = &r
		}
	}
	if stored == nil || stored.Disabled {
		return cur == nil
	}
	return cur != nil && cur.ID == stored.ID && cur.UpdatedAt.Equal(stored.UpdatedAt)
}

// maxInputBytes caps a tool's input: the largest valid rule is a few KB (MaxConditionBytes
// plus MaxTextChars), so a bigger input is a mistake, refused before any decoding.
const maxInputBytes = 64 << 10

func tooLarge(input string) bool { return len(input) > maxInputBytes }

func failTooLarge(input, tool string) (string, error) {
	return fail("", "the input is %d bytes, more than %s takes (%d): a rule fits in a few KB", len(input), tool, maxInputBytes)
}

// unfence returns a model's input without surrounding whitespace and markdown code fence.
func unfence(input string) []byte {
	s := strings.TrimSpace(input)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```json")
		s = strings.TrimPrefix(s, "```")
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
		s = strings.TrimSpace(s)
	}
	return []byte(s)
}

// badInput turns a strict-decoding error (rulefile's, naming the field) into output. It
// quotes at most an excerpt of the input.
func badInput(err error, tool, want string) (string, error) {
	var fe *rulefile.Error
	if errors.As(err, &fe) {
		if fe.Field != "" {
			return fail(fe.Field, "%v; %s takes %s", fe.Err, tool, want)
		}
		return fail("", "the input is not a JSON object (%v); %s takes %s", fe.Err, tool, want)
	}
	return fail("", "the input is not a JSON object; %s takes %s", tool, want)
}

var ruleFields = `{"name": "snake_case_name", "scope": "text" or "thinking" (the model's reasoning) or "tool:<tool name>", "condition": "RE2 regex, empty matches every target", "negate": false, "when": ["environment", ...], "text": "what the model is told, at most ` + strconv.Itoa(streamrules.MaxTextChars) + ` characters", "repeat": "" or "once" or "after:N", "enabled": true, "shadow": false}`

func (b *base) scheme() string {
	return fmt.Sprintf(`Fields: name ([a-z][a-z0-9_]*, unique); scope ("text": checks the finished answer, which is discarded and rewritten on a hit; "tool:<name>": checks that tool's JSON arguments, and a reminder goes in front of its result); condition (Go RE2 regex over the answer text or the compact JSON arguments; no lookaround; empty matches everything); negate (fire when the condition does NOT match); when (environments that must all hold: %s; empty: any); text (at most %d characters); repeat ("" every time, "once" once per chat, "after:N" at most once per N moves); enabled (default true); shadow (default false: the rule acts; true: it is only watched, its would-fires counted in the stats, nothing reminded or discarded: the safe way to try a new rule before it acts). mode: leave it out (text: interrupt; tool: remind), or "interrupt" on a tool rule: a matching call never runs (the response that declares it is discarded and replayed, after the retry ceiling the call is refused). Optional: predicate (a tree instead of condition: {"all_of"|"any_of": [...]}, {"not_": {...}}, {"contains_regex"|"not_contains_regex"|"starts_with_regex"|"ends_with_regex": "re"}, {"max_words"|"min_words"|"max_chars": N}, and atoms on the move, not the target: {"input_contains_regex"|"input_not_contains_regex": "re"} (the user's message), {"tool_called"|"tool_succeeded"|"tool_failed": "tool"} (earlier in this move), {"edited_unchecked": {"edits": ["write_file"], "checks": ["run_tests"]}}); applies_when (a tree: outside it the rule does not fire); field (tool rules: a dotted path into the arguments, e.g. edits.new_string); shell (tool rules: true reads each value as a shell script, and the condition judges each simple command as "rm -r -f x": quotes removed, program base name, flags split, sudo/env/bash -c unwrapped); fix (text rules: {"append_if_missing": "…"}, {"prepend_if_missing": "…"} or {"replace_regex": {"pattern": "re", "with": "$1"}}, {{message_id}} for move variables: repairs the answer with no replay); severity (low, medium, high); explanation.`,
		strings.Join(b.eng.Environments(), ", "), streamrules.MaxTextChars) + deliveryScheme // reader.go
}

// ---- stream_rule_list ----

type listTool struct{ *base }

func (t *listTool) Name() string { return ListName }
func (t *listTool) Description() string {
	return `List stream rules (disabled ones too) by name, with their fields, whether the engine runs each now, and how often it fired. ` +
		`Input: nothing or {} for the first page, or filters: {"name": "part of the name", "scope": "text" or "thinking" or "tool" or "tool:<name>", "enabled": true/false, "loaded": true/false, "limit": 1-100 (default 20), "cursor": "next_cursor of the previous page", "tests": true to show each rule's tests (left out otherwise)}. ` +
		`A page holds at most about 8 KB; when more rules match, the output has "next_cursor". Master only.`
}

func (t *listTool) Call(ctx context.Context, input string) (string, error) {
	if msg := t.refused(ctx); msg != "" {
		return fail("", "%s", msg)
	}
	if tooLarge(input) {
		return failTooLarge(input, ListName)
	}
	var in listInput
	if s := unfence(input); len(s) > 0 && string(s) != "null" {
		if err := ruleinput.DecodeJSON(s, &in); err != nil {
			return badInput(err, ListName, listWant)
		}
	}
	if field, msg := in.check(); field != "" {
		return fail(field, "%s; %s takes %s", msg, ListName, listWant)
	}
	rules, err := t.editor.ListRules(ctx)
	if err != nil {
		return storeError("", err)
	}
	var counts map[string]int64
	if fc, ok := t.editor.(streamrules.FiringCounter); ok {
		counts, _ = fc.CountFirings(ctx)
	}
	return t.page(rules, in, counts).String(), nil
}

// ---- stream_rule_create ----

type createTool struct{ *base }

func (t *createTool) Name() string { return CreateName }
func (t *createTool) Description() string {
	return "Create a stream rule: a rule that watches the agent and speaks exactly where a miss happens. Input: a JSON object " +
		ruleFields + ". " + t.scheme() + " Master only."
}

func (t *createTool) Call(ctx context.Context, input string) (string, error) {
	if msg := t.refused(ctx); msg != "" {
		return fail("", "%s", msg)
	}
	if tooLarge(input) {
		return failTooLarge(input, CreateName)
	}
	r, err := rulefile.DecodeRule(unfence(input))
	if err != nil {
		return badInput(err, CreateName, ruleFields)
	}
	if err := t.eng.Validate(&r); err != nil {
		return storeError(r.Name, err)
	}
	created, err := t.editor.CreateRule(ctx, r)
	if err != nil {
		return storeError(r.Name, err)
	}
	note := t.afterWrite(ctx, &created, "")
	v := t.view(created, t.loaded(), nil)
	return Result{OK: true, Rule: &v, Message: fmt.Sprintf("Rule %q created.%s", created.Name, note)}.String(), nil
}

// ---- stream_rule_edit ----

type editTool struct{ *base }

func (t *editTool) Name() string { return EditName }
func (t *editTool) Description() string {
	return `Change a stream rule. Input: a JSON object with "name" (the rule to change) and only the fields to change, e.g. {"name": "telegram_reply_tail", "text": "…"} or {"name": "x", "enabled": false}; "new_name" renames it. Fields you leave out keep their values: leave a field out to keep it, never write null for it (null is refused, except in predicate, applies_when and fix, where it removes them). ` +
		t.scheme() + " Master only."
}

func (t *editTool) Call(ctx context.Context, input string) (string, error) {
	if msg := t.refused(ctx); msg != "" {
		return fail("", "%s", msg)
	}
	if tooLarge(input) {
		return failTooLarge(input, EditName)
	}
	const want = `{"name": "rule_to_change", ...only the fields to change...}`
	fields, err := ruleinput.DecodeFields(unfence(input), "new_name")
	if err != nil {
		return badInput(err, EditName, want)
	}
	var name string
	if err := json.Unmarshal(fields["name"], &name); err != nil || strings.TrimSpace(name) == "" {
		return fail("name", `"name" must say which rule to change; %s shows the rules`, ListName)
	}
	// name is used exactly as given: " good_tool" is not good_tool.
	delete(fields, "name")
	_, rename := fields["new_name"]
	if nn, ok := fields["new_name"]; ok {
		fields["name"] = nn // Apply knows the rule's own fields only
		delete(fields, "new_name")
	}
	cur, err := t.editor.GetRule(ctx, name)
	if err != nil {
		return storeError(name, err)
	}
	if p, ok := fields["predicate"]; ok && string(bytes.TrimSpace(p)) == "null" && cur.Predicate != nil && fields["condition"] == nil {
		// null removes the tree; alone it leaves the empty condition, which fires on
		// every target. A model that writes null to mean "unchanged" must not get that.
		return fail("predicate", `"predicate": null removes the rule's condition tree and leaves no condition, so the rule would fire on every target; give the new "condition" (or "predicate") in the same edit; %s takes %s`, EditName, want)
	}
	r, err := rulefile.Apply(cur, fields)
	if err != nil {
		return badInput(err, EditName, want)
	}
	if err := t.eng.Validate(&r); err != nil {
		return storeError(r.Name, err)
	}
	if !rename {
		// Without new_name the rule keeps its name as stored: a row typed in by hand
		// (" good_tool") is edited in place, not renamed onto the real good_tool by the
		// trim Validate does (which the store would refuse as taken).
		r.Name = cur.Name
	}
	updated, err := t.editor.UpdateRule(ctx, name, r)
	if err != nil {
		return storeError(r.Name, err)
	}
	note := t.afterWrite(ctx, &updated, name)
	v := t.view(updated, t.loaded(), nil)
	msg := fmt.Sprintf("Rule %q changed.", name)
	if updated.Name != name {
		msg = fmt.Sprintf("Rule %q changed and renamed to %q.", name, updated.Name)
	}
	return Result{OK: true, Rule: &v, Message: msg + note}.String(), nil
}

// ---- stream_rule_delete ----

type deleteTool struct{ *base }

func (t *deleteTool) Name() string { return DeleteName }
func (t *deleteTool) Description() string {
	return `Delete a stream rule for good (to pause it, set "enabled": false with ` + EditName + ` instead). Its firing statistics stay; a deleted seeded rule is not brought back by later seed versions. Input: {"name": "rule_name"}. Master only.`
}

func (t *deleteTool) Call(ctx context.Context, input string) (string, error) {
	if msg := t.refused(ctx); msg != "" {
		return fail("", "%s", msg)
	}
	if tooLarge(input) {
		return failTooLarge(input, DeleteName)
	}
	var in struct {
		Name string `json:"name"`
	}
	if s := strings.TrimSpace(input); s != "" && !strings.HasPrefix(s, "{") && !strings.HasPrefix(s, "```") {
		in.Name = strings.Trim(s, `"`) // a model may pass the bare name; the store judges it
	} else if err := ruleinput.DecodeJSON(unfence(input), &in); err != nil {
		return badInput(err, DeleteName, `{"name": "rule_name"}`)
	}
	name := in.Name // exactly: "good_text " is not good_text
	if strings.TrimSpace(name) == "" {
		return fail("name", `"name" must say which rule to delete`)
	}
	if err := t.editor.DeleteRule(ctx, name); err != nil {
		return storeError(name, err)
	}
	note := t.afterWrite(ctx, nil, name)
	return Result{OK: true, Message: fmt.Sprintf("Rule %q deleted. Its firing statistics are kept.%s", name, note)}.String(), nil
}
