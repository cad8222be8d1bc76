package ruletools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules"
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

// RuleView is a rule as the tools show it.
type RuleView struct {
	Name      string    `json:"name"`
	Scope     string    `json:"scope"`
	Condition string    `json:"condition"`
	Negate    bool      `json:"negate"`
	When      []string  `json:"when"`
	Text      string    `json:"text"`
	Mode      string    `json:"mode"`
	Repeat    string    `json:"repeat"`
	Enabled   bool      `json:"enabled"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// Loaded: the engine runs this rule now. An enabled rule that is not loaded is broken
	// (see Problem).
	Loaded bool `json:"loaded"`
	// Problem says why an enabled rule is not loaded (a row broken by hand).
	Problem string `json:"problem,omitempty"`
	// Fired is how many times the rule fired, when the store counts firings.
	Fired *int64 `json:"fired,omitempty"`
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
}

func (r Result) String() string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(r)
	return strings.TrimSpace(buf.String())
}

func fail(field, format string, args ...any) (string, error) {
	return Result{Field: field, Error: fmt.Sprintf(format, args...)}.String(), nil
}

// refusal is the output of a call outside a master's move.
const refusal = "refused: stream rules can be listed and changed only by the master, and this conversation is not with the master (the move's environment lacks \"master\"). Tell the user that rules cannot be changed from here."

func (b *base) allowed(ctx context.Context) bool {
	m := streamrules.MoveFrom(ctx)
	return m != nil && m.Has(streamrules.EnvMaster)
}

// storeError turns an editor error into tool output naming the field.
func storeError(name string, err error) (string, error) {
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
	v := RuleView{
		Name: r.Name, Scope: r.Scope, Condition: r.Condition, Negate: r.Negate, When: r.When,
		Text: r.Text, Mode: string(r.Mode), Repeat: r.Repeat, Enabled: !r.Disabled, UpdatedAt: r.UpdatedAt,
	}
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
				v.Problem = sk.Reason
			}
		}
		probe := r // Validate normalizes a copy: Normalize builds a new When
		if err := b.eng.Validate(&probe); v.Problem == "" && err != nil {
			v.Problem = err.Error()
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

// decode reads a JSON object from a model's input: surrounding whitespace and a markdown
// code fence are tolerated, unknown fields are not.
func decode(input string, v any) (string, bool) {
	s := strings.TrimSpace(input)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```json")
		s = strings.TrimPrefix(s, "```")
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
		s = strings.TrimSpace(s)
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te) && te.Field != "":
			return te.Field, false
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`), false
		}
		return "", false
	}
	if dec.More() {
		return "", false
	}
	return "", true
}

func badJSON(field, tool, want string) (string, error) {
	if field != "" {
		return fail(field, "field %q is unknown or has the wrong type; %s takes %s", field, tool, want)
	}
	return fail("", "the input is not a JSON object; %s takes %s", tool, want)
}

const ruleFields = `{"name": "snake_case_name", "scope": "text" or "tool:<tool name>", "condition": "RE2 regex, empty matches every target", "negate": false, "when": ["environment", ...], "text": "what the model is told, at most 400 characters", "repeat": "" or "once" or "after:N", "enabled": true}`

func (b *base) scheme() string {
	return fmt.Sprintf(`Fields: name ([a-z][a-z0-9_]*, unique); scope ("text": checks the finished answer, which is discarded and rewritten on a hit; "tool:<name>": checks that tool's JSON arguments, and a reminder goes in front of its result); condition (Go RE2 regex over the answer text or the compact JSON arguments; no lookaround; empty matches everything); negate (fire when the condition does NOT match); when (environments that must all hold: %s; empty: any); text (at most 400 characters); repeat ("" every time, "once" once per chat, "after:N" at most once per N moves); enabled (default true). mode follows from scope: leave it out.`,
		strings.Join(b.eng.Environments(), ", "))
}

// ---- stream_rule_list ----

type listTool struct{ *base }

func (t *listTool) Name() string { return ListName }
func (t *listTool) Description() string {
	return `List every stream rule (disabled ones too) with its fields, whether the engine runs it now, and how often it fired. Input: nothing, or {}. Master only.`
}

func (t *listTool) Call(ctx context.Context, _ string) (string, error) {
	if !t.allowed(ctx) {
		return fail("", refusal)
	}
	rules, err := t.editor.ListRules(ctx)
	if err != nil {
		return storeError("", err)
	}
	var counts map[string]int64
	if fc, ok := t.editor.(streamrules.FiringCounter); ok {
		counts, _ = fc.CountFirings(ctx)
	}
	out := Result{OK: true, Rules: make([]RuleView, 0, len(rules)), Environments: t.eng.Environments()}
	loaded := t.loaded()
	for _, r := range rules {
		out.Rules = append(out.Rules, t.view(r, loaded, counts))
	}
	out.Message = fmt.Sprintf("%d rules.", len(rules))
	return out.String(), nil
}

// ---- stream_rule_create ----

type createTool struct{ *base }

func (t *createTool) Name() string { return CreateName }
func (t *createTool) Description() string {
	return "Create a stream rule: a rule that watches the agent and speaks exactly where a miss happens. Input: a JSON object " +
		ruleFields + ". " + t.scheme() + " Master only."
}

type ruleInput struct {
	Name      *string   `json:"name"`
	Scope     *string   `json:"scope"`
	Condition *string   `json:"condition"`
	Negate    *bool     `json:"negate"`
	When      *[]string `json:"when"`
	Text      *string   `json:"text"`
	Mode      *string   `json:"mode"`
	Repeat    *string   `json:"repeat"`
	Enabled   *bool     `json:"enabled"`
	NewName   *string   `json:"new_name"` // edit only
}

func (in ruleInput) apply(r *streamrules.Rule) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&r.Name, in.Name)
	if in.Scope != nil {
		r.Scope = *in.Scope
		if in.Mode == nil {
			r.Mode = "" // derived from the new scope
		}
	}
	set(&r.Condition, in.Condition)
	if in.Negate != nil {
		r.Negate = *in.Negate
	}
	if in.When != nil {
		r.When = append([]string(nil), (*in.When)...)
	}
	set(&r.Text, in.Text)
	if in.Mode != nil {
		r.Mode = streamrules.Mode(*in.Mode)
	}
	set(&r.Repeat, in.Repeat)
	if in.Enabled != nil {
		r.Disabled = !*in.Enabled
	}
}

func (t *createTool) Call(ctx context.Context, input string) (string, error) {
	if !t.allowed(ctx) {
		return fail("", refusal)
	}
	var in ruleInput
	if field, ok := decode(input, &in); !ok || in.NewName != nil {
		if in.NewName != nil {
			field = "new_name"
		}
		return badJSON(field, CreateName, ruleFields)
	}
	r := streamrules.Rule{}
	in.apply(&r)
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
	return `Change a stream rule. Input: a JSON object with "name" (the rule to change) and only the fields to change, e.g. {"name": "telegram_reply_tail", "text": "…"} or {"name": "x", "enabled": false}; "new_name" renames it. Fields you leave out keep their values. ` +
		t.scheme() + " Master only."
}

func (t *editTool) Call(ctx context.Context, input string) (string, error) {
	if !t.allowed(ctx) {
		return fail("", refusal)
	}
	var in ruleInput
	if field, ok := decode(input, &in); !ok {
		return badJSON(field, EditName, `{"name": "rule_to_change", ...only the fields to change...}`)
	}
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		return fail("name", `"name" must say which rule to change; %s shows the rules`, ListName)
	}
	name := *in.Name // exactly: " good_tool" is not good_tool
	cur, err := t.editor.GetRule(ctx, name)
	if err != nil {
		return storeError(name, err)
	}
	r := cur
	in.Name = in.NewName
	in.apply(&r)
	if err := t.eng.Validate(&r); err != nil {
		return storeError(r.Name, err)
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
	if !t.allowed(ctx) {
		return fail("", refusal)
	}
	var in struct {
		Name string `json:"name"`
	}
	if s := strings.TrimSpace(input); s != "" && !strings.HasPrefix(s, "{") && !strings.HasPrefix(s, "```") {
		in.Name = strings.Trim(s, `"`) // a model may pass the bare name; the store judges it
	} else if field, ok := decode(input, &in); !ok {
		return badJSON(field, DeleteName, `{"name": "rule_name"}`)
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
