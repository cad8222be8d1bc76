package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulefile"
)

type listRow struct {
	Name, Scope, Mode string
	Enabled, Shadow   bool
	Fired, WouldFire  int64
	Outcomes          []part
	Last              time.Time
}

type listData struct {
	Scope, State string
	Scopes       []string
	States       []string
	Rows         []listRow
	Matched      int
	Page, Pages  int
	PageQuery    string // the filters, for the page links
}

var listStates = []string{"", "enabled", "disabled", "shadow", "enforced", "never_fired"}

func (h *Handler) rulesList(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rules, err := h.cache.listRules(ctx)
	if err != nil {
		h.storeFailed(w, r, err)
		return
	}
	counters, err := h.cache.ruleCounters(ctx)
	if err != nil {
		h.storeFailed(w, r, err)
		return
	}
	q := r.URL.Query()
	d := listData{Scope: q.Get("scope"), State: q.Get("state"), States: listStates}
	if !slices.Contains(listStates, d.State) {
		d.State = ""
	}
	scopes := map[string]bool{"text": true}
	var rows []listRow
	for i := range rules {
		ru := &rules[i]
		scopes[ru.Scope] = true
		c := counters[ru.Name]
		row := listRow{Name: ru.Name, Scope: ru.Scope, Mode: modeOf(ru), Enabled: !ru.Disabled, Shadow: ru.Shadow, Last: c.LastFiredAt}
		for _, o := range outcomeOrder {
			n := c.ByOutcome[o]
			if o == streamrules.OutcomeShadow {
				row.WouldFire = n
				continue
			}
			row.Fired += n
			if n > 0 && o != "" {
				row.Outcomes = append(row.Outcomes, part{Label: string(o), N: n})
			}
		}
		if !scopeMatches(d.Scope, ru.Scope) || !stateMatches(d.State, &row) {
			continue
		}
		rows = append(rows, row)
	}
	for s := range scopes {
		d.Scopes = append(d.Scopes, s)
	}
	slices.Sort(d.Scopes)
	d.Matched = len(rows)
	var lo, hi int
	d.Page, d.Pages, lo, hi = paginate(r, len(rows), h.cfg.PageRows)
	d.Rows = rows[lo:hi]
	d.PageQuery = url.Values{"scope": {d.Scope}, "state": {d.State}}.Encode()
	h.render(w, r, http.StatusOK, "rules", d)
}

// scopeMatches: "" is every scope, "tool:" every tool rule, else the scope itself.
func scopeMatches(want, scope string) bool {
	switch want {
	case "":
		return true
	case streamrules.ScopeToolPrefix, "tool":
		return strings.HasPrefix(scope, streamrules.ScopeToolPrefix)
	}
	return want == scope
}

func stateMatches(state string, row *listRow) bool {
	switch state {
	case "enabled":
		return row.Enabled
	case "disabled":
		return !row.Enabled
	case "shadow":
		return row.Shadow
	case "enforced":
		return row.Enabled && !row.Shadow
	case "never_fired":
		return row.Fired == 0 && row.WouldFire == 0
	}
	return true
}

// ruleForm is the edit form's values as typed, and the error at each field.
type ruleForm struct {
	Scope, Mode, Condition, When, Text, Repeat, Field, Severity, Explanation, Hint, Delivery string
	Predicate, AppliesWhen, Fix, Tests                                                       string
	Negate, Shell, Early                                                                     bool
}

type ruleData struct {
	Rule     streamrules.Rule
	Mode     string
	Enabled  bool
	Counter  []part
	Fired    int64
	Last     time.Time
	Form     ruleForm
	Errors   map[string]string // field → message
	Error    string            // an error that is about no one field
	Saved    string            // what the last write did
	Loaded   bool              // the engine runs the rule now
	Severity []string
	Tests    ruleTests // its tests, run on the rule as stored
}

func formOf(r *streamrules.Rule) ruleForm {
	f := ruleForm{
		Scope: r.Scope, Mode: string(r.Mode), Condition: r.Condition, When: strings.Join(r.When, ", "), Text: r.Text, Repeat: r.Repeat,
		Field: r.Field, Severity: r.Severity, Explanation: r.Explanation, Hint: r.Hint, Delivery: string(r.Delivery),
		Negate: r.Negate, Shell: r.Shell, Early: r.Early,
	}
	f.Predicate, f.AppliesWhen, f.Fix, f.Tests = jsonOf(r.Predicate), jsonOf(r.AppliesWhen), jsonOf(r.Fix), jsonOf(r.Tests)
	return f
}

// jsonOf is v as indented JSON, "" for a nil pointer.
func jsonOf[T any](v *T) string {
	if v == nil {
		return ""
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return ""
	}
	return string(b)
}

func (h *Handler) ruleData(r *http.Request, ru streamrules.Rule) (ruleData, error) {
	counters, err := h.cache.ruleCounters(r.Context())
	if err != nil {
		return ruleData{}, err
	}
	c := counters[ru.Name]
	d := ruleData{Rule: ru, Mode: modeOf(&ru), Enabled: !ru.Disabled, Last: c.LastFiredAt, Form: formOf(&ru),
		Errors: map[string]string{}, Severity: streamrules.Severities(), Tests: h.runTests(ru)}
	for _, o := range outcomeOrder {
		if n := c.ByOutcome[o]; n > 0 {
			label := string(o)
			if label == "" {
				label = "unknown"
			}
			d.Counter = append(d.Counter, part{Label: label, N: n, Class: "o-" + label})
			if o != streamrules.OutcomeShadow {
				d.Fired += n
			}
		}
	}
	for _, l := range h.eng.Rules() {
		if l.Name == ru.Name {
			d.Loaded = true
			break
		}
	}
	return d, nil
}

func (h *Handler) rulePage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	ru, err := h.store.GetRule(r.Context(), name)
	if errors.Is(err, streamrules.ErrNotFound) {
		h.fail(w, r, http.StatusNotFound, "there is no rule named "+quote(name))
		return
	}
	if err != nil {
		h.storeFailed(w, r, err)
		return
	}
	d, err := h.ruleData(r, ru)
	if err != nil {
		h.storeFailed(w, r, err)
		return
	}
	d.Saved = savedMessage(r.URL.Query().Get("saved"))
	h.render(w, r, http.StatusOK, "rule", d)
}

func savedMessage(s string) string {
	switch s {
	case "edit":
		return "Saved."
	case "enable", "disable", "shadow", "enforce":
		return "Done: " + s + "."
	}
	return ""
}

func quote(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// fieldsOf turns the edit form into the partial edit the master's stream_rule_edit tool
// takes (rulefile.DecodeFields' shape), with only the fields that changed: the same
// rulefile.Apply, Engine.Validate and RuleEditor.UpdateRule follow, so an edit here is
// the master's edit (updated_at moves, and calibration leaves the rule alone).
func fieldsOf(r *http.Request, cur *streamrules.Rule) (ruleForm, map[string]json.RawMessage, map[string]string) {
	pf := r.PostFormValue
	f := ruleForm{
		Scope: pf("scope"), Mode: pf("mode"), Condition: pf("condition"), When: pf("when"), Text: pf("text"), Repeat: pf("repeat"),
		Field: pf("field"), Severity: pf("severity"), Explanation: pf("explanation"), Hint: pf("hint"), Delivery: pf("delivery"),
		Predicate: pf("predicate"), AppliesWhen: pf("applies_when"), Fix: pf("fix"), Tests: pf("tests"),
		Negate: pf("negate") == "on", Shell: pf("shell") == "on", Early: pf("early") == "on",
	}
	old := formOf(cur)
	fields := map[string]json.RawMessage{}
	errs := map[string]string{}
	str := func(key, now, was string) {
		if now != was {
			fields[key] = mustJSON(now)
		}
	}
	str("scope", f.Scope, old.Scope)
	str("mode", f.Mode, old.Mode)
	str("condition", f.Condition, old.Condition)
	str("text", f.Text, old.Text)
	str("repeat", f.Repeat, old.Repeat)
	str("field", f.Field, old.Field)
	str("severity", f.Severity, old.Severity)
	str("explanation", f.Explanation, old.Explanation)
	str("hint", f.Hint, old.Hint)
	str("delivery", f.Delivery, old.Delivery)
	if f.When != old.When {
		when := []string{}
		for _, e := range strings.Split(f.When, ",") {
			if e = strings.TrimSpace(e); e != "" {
				when = append(when, e)
			}
		}
		fields["when"] = mustJSON(when)
	}
	flag := func(key string, now, was bool) {
		if now != was {
			fields[key] = mustJSON(now)
		}
	}
	flag("negate", f.Negate, old.Negate)
	flag("shell", f.Shell, old.Shell)
	flag("early", f.Early, old.Early)
	tree := func(key, now, was string) {
		if strings.TrimSpace(now) == strings.TrimSpace(was) || sameJSON(now, was) {
			return
		}
		if strings.TrimSpace(now) == "" {
			fields[key] = json.RawMessage("null") // removes it, as the tool's null does
			return
		}
		if !json.Valid([]byte(now)) {
			errs[key] = "not JSON: write the " + key + " as a JSON object, or leave it empty"
			return
		}
		fields[key] = json.RawMessage(now)
	}
	tree("predicate", f.Predicate, old.Predicate)
	tree("applies_when", f.AppliesWhen, old.AppliesWhen)
	tree("fix", f.Fix, old.Fix)
	tree("tests", f.Tests, old.Tests)
	return f, fields, errs
}

// sameJSON: a and b are the same JSON, spaced differently.
func sameJSON(a, b string) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, []byte(a)) == nil && json.Compact(&cb, []byte(b)) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // strings, bools and string slices always marshal
	}
	return b
}

func (h *Handler) ruleEdit(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	name := r.PathValue("name")
	cur, err := h.store.GetRule(ctx, name)
	if errors.Is(err, streamrules.ErrNotFound) {
		h.fail(w, r, http.StatusNotFound, "there is no rule named "+quote(name))
		return
	}
	if err != nil {
		h.storeFailed(w, r, err)
		return
	}
	form, fields, errs := fieldsOf(r, &cur)
	var updated streamrules.Rule
	if len(errs) == 0 {
		updated, err = h.apply(r, cur, fields)
		if err != nil {
			var ve *streamrules.ValidationError
			var fe *rulefile.Error
			switch {
			case errors.As(err, &ve):
				errs[fieldKey(ve.Field)] = atField(ve.Field, ve.Reason)
			case errors.As(err, &fe) && fe.Field != "":
				key, msg := fieldKey(fe.Field), atField(fe.Field, fe.Err.Error())
				if !formKeys[key] {
					// A key deep in a tree the rule file's shape refuses is named bare
					// ("fire"): shown at the one tree the edit changed, else above the form.
					key, msg = changedTree(fields), fe.Field+": "+fe.Err.Error()
				}
				errs[key] = msg
			default:
				if !errors.As(err, &fe) {
					h.storeFailed(w, r, err)
					return
				}
				errs[""] = fe.Err.Error()
			}
		}
	}
	if len(errs) > 0 {
		d, err := h.ruleData(r, cur)
		if err != nil {
			h.storeFailed(w, r, err)
			return
		}
		d.Form, d.Errors = form, errs
		d.Error = errs[""]
		h.render(w, r, http.StatusUnprocessableEntity, "rule", d)
		return
	}
	h.cache.dropRules()
	h.cfg.Logger.Info("console: rule changed", "rule", updated.Name, "by", h.auth.by(r))
	http.Redirect(w, r, Prefix+"rules/"+url.PathEscape(updated.Name)+"?saved=edit", http.StatusSeeOther)
}

// fieldKey is the form field an error names: a path into a tree ("predicate.all_of[0]")
// is shown at the tree.
func fieldKey(field string) string {
	for _, k := range []string{"predicate", "applies_when", "fix", "when", "tests"} {
		if field == k || strings.HasPrefix(field, k+".") || strings.HasPrefix(field, k+"[") {
			return k
		}
	}
	return field
}

// formKeys are the edit form's fields.
var formKeys = map[string]bool{"scope": true, "mode": true, "condition": true, "when": true, "text": true, "repeat": true,
	"field": true, "severity": true, "explanation": true, "hint": true, "delivery": true, "predicate": true,
	"applies_when": true, "fix": true, "tests": true, "negate": true, "shell": true, "early": true}

// changedTree is the one JSON tree an edit changes, "" for none or more than one.
func changedTree(fields map[string]json.RawMessage) string {
	key := ""
	for _, k := range []string{"predicate", "applies_when", "fix", "tests"} {
		if _, ok := fields[k]; ok {
			if key != "" {
				return ""
			}
			key = k
		}
	}
	return key
}

// atField is an error's message as the form shows it at its field: an example of the
// tests is named by its path (tests.fires[2].text), since one box holds them all.
func atField(field, msg string) string {
	if strings.HasPrefix(field, "tests.") {
		return field + ": " + msg
	}
	return msg
}

// apply is the master's edit: rulefile.Apply, the engine's Validate, the store's
// UpdateRule, in the order ruletools' stream_rule_edit runs them.
func (h *Handler) apply(r *http.Request, cur streamrules.Rule, fields map[string]json.RawMessage) (streamrules.Rule, error) {
	if len(fields) == 0 {
		return cur, nil
	}
	next, err := rulefile.Apply(cur, fields)
	if err != nil {
		return cur, err
	}
	if err := h.eng.Validate(&next); err != nil {
		return cur, err
	}
	next.Name = cur.Name // the form does not rename; the name is kept as stored
	return h.store.UpdateRule(r.Context(), cur.Name, next)
}

func (h *Handler) ruleState(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	name := r.PathValue("name")
	cur, err := h.store.GetRule(ctx, name)
	if errors.Is(err, streamrules.ErrNotFound) {
		h.fail(w, r, http.StatusNotFound, "there is no rule named "+quote(name))
		return
	}
	if err != nil {
		h.storeFailed(w, r, err)
		return
	}
	action := r.PostFormValue("action")
	var fields map[string]json.RawMessage
	switch action {
	case "enable":
		fields = map[string]json.RawMessage{"enabled": mustJSON(true)}
	case "disable":
		fields = map[string]json.RawMessage{"enabled": mustJSON(false)}
	case "shadow":
		fields = map[string]json.RawMessage{"shadow": mustJSON(true)}
	case "enforce":
		fields = map[string]json.RawMessage{"shadow": mustJSON(false)}
	default:
		h.fail(w, r, http.StatusBadRequest, "action must be enable, disable, shadow or enforce")
		return
	}
	if _, err := h.apply(r, cur, fields); err != nil {
		var ve *streamrules.ValidationError
		if errors.As(err, &ve) {
			h.fail(w, r, http.StatusUnprocessableEntity, ve.Field+": "+ve.Reason)
			return
		}
		h.storeFailed(w, r, err)
		return
	}
	h.cache.dropRules()
	h.cfg.Logger.Info("console: rule "+action+"d", "rule", name, "by", h.auth.by(r))
	http.Redirect(w, r, Prefix+"rules/"+url.PathEscape(name)+"?saved="+action, http.StatusSeeOther)
}
