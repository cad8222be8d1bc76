package streamrules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Scope values. A tool scope is ScopeToolPrefix followed by the tool's name.
const (
	ScopeText       = "text"
	ScopeToolPrefix = "tool:"
	// ScopeThinking reads the model's reasoning (thinking.go): mode interrupt, like text.
	ScopeThinking = "thinking"
)

// Mode is what a rule does when it fires. It follows from the scope.
type Mode string

// The two modes: a soft reminder on a tool result, a hard interrupt of an answer. A tool
// rule may also interrupt: a call it matches never runs (see Move.CheckResponse).
const (
	ModeRemind    Mode = "remind"
	ModeInterrupt Mode = "interrupt"
)

// The environments every engine knows. Hosts register more in Config.Environments.
const (
	EnvTelegram  = "telegram"
	EnvClientOps = "client_ops"
	EnvMaster    = "master"
	EnvPicture   = "picture"
)

// BuiltinEnvironments lists the environment names known without registration.
var BuiltinEnvironments = []string{EnvTelegram, EnvClientOps, EnvMaster, EnvPicture}

// KnownEnvironments returns the environment names a rule's `when` may use when the host
// registers host: BuiltinEnvironments, then host, in a new slice. The engine, the stores,
// Judge and the rule files all take their list from it.
func KnownEnvironments(host ...string) []string {
	return append(slices.Clone(BuiltinEnvironments), host...)
}

// Limits enforced by Validate.
const (
	MaxTextChars        = 400
	MaxConditionBytes   = 4096
	MaxNameBytes        = 64
	MaxExplanationChars = 1000
)

// severities are the values Rule.Severity may take; empty means none was given.
var severities = []string{"low", "medium", "high"}

// Severities returns the values Rule.Severity may take, lowest first (a form's choices).
func Severities() []string { return slices.Clone(severities) }

// Rule is one stream rule: a condition on a tool call or an answer, and what the model is told when it holds.
type Rule struct {
	// ID is the store's key for the row; 0 for a rule not stored yet. The engine finds
	// rules by Name; ID tells rows apart in its warnings.
	ID int64 `json:"id,omitempty" db:"id"`
	// Name identifies the rule: [a-z][a-z0-9_]*, at most MaxNameBytes, unique in the store.
	// Firings, stats and verdicts name the rule by it.
	Name string `json:"name" db:"name"`
	// Scope is what the rule judges: "text" (ScopeText) for the model's answer, or
	// "tool:NAME" (ScopeToolPrefix and the tool's name) for each call of that tool.
	Scope string `json:"scope" db:"scope"`
	// Condition is an RE2 regular expression (at most MaxConditionBytes) run on the
	// target: the answer's text for a text rule, a tool call's compact-JSON arguments for
	// a tool rule (or each value of its Field). The rule fires when it matches. Empty when
	// Predicate is given instead.
	Condition string `json:"condition" db:"condition"`
	// Negate inverts the condition: the rule fires when the condition (or Predicate) does
	// not hold, as for a rule that says what an answer must contain.
	Negate bool `json:"negate" db:"negate"`
	// When lists environments that must all hold in the move for the rule to be armed
	// (see Move.Has); each a name the engine knows. Empty: the rule applies everywhere.
	When []string `json:"when" db:"-"`
	// Text is what the model is told when the rule fires: the reminder on a tool result,
	// or the interrupt a replayed answer gets. At most MaxTextChars characters.
	Text string `json:"text" db:"text"`
	// Mode is what firing does: "remind" (ModeRemind) puts Text on the tool's result,
	// "interrupt" (ModeInterrupt) discards an answer and replays the turn, or, for a tool
	// rule, stops the call before it runs. Empty: the scope's default (ModeForScope):
	// interrupt for text, remind for a tool.
	Mode Mode `json:"mode" db:"mode"`
	// Repeat limits how often the rule fires in one chat, across its moves: "" (the
	// default) every move it holds in, "once" the first time only, "after:N" (N a decimal
	// integer >= 1 without sign or leading zeros) again only N moves or more after it last
	// fired. See ParseRepeat and Repeat.Allows. Within one move a rule fires once whatever
	// its policy (a gate excepted: it stops every matching call).
	Repeat string `json:"repeat" db:"repeat"`
	// Disabled keeps the rule but does not load it. The zero value is an enabled rule, so a
	// Rule literal that says nothing about it works; on the wire it is "enabled" (see MarshalJSON).
	Disabled bool `json:"-" db:"-"`
	// Shadow: the rule is evaluated as if live, but never reminds, discards or holds
	// speech; a would-fire is logged and counted with outcome "shadow".
	Shadow bool `json:"shadow,omitempty" db:"shadow"`
	// Early: a text rule whose verdict a prefix of the answer can decide may cut the
	// streamed answer at the first certain miss instead of waiting for its end.
	Early bool `json:"early,omitempty" db:"early"`
	// Predicate is a condition tree, in place of the regex Condition (one or the other);
	// Negate fires when the tree does not hold. See Predicate.
	Predicate *Predicate `json:"predicate,omitempty" db:"-"`
	// AppliesWhen, if set, scopes the rule: where it does not hold on the target the rule
	// is not applicable and does not fire, whatever its condition says.
	AppliesWhen *Predicate `json:"applies_when,omitempty" db:"-"`
	// Field is a tool rule's path into the call's arguments, keys joined by dots
	// (edits.new_string): an array met on the way fans out to each element, and a string
	// met before the path ends is decoded as JSON and walked into. The condition runs on
	// each value the path names (a string as it is, anything else as compact JSON; at most
	// 1024 values), and the rule fires if one does; a missing key names none. Empty: the
	// condition sees the compact-JSON arguments.
	Field string `json:"field,omitempty" db:"field"`
	// Shell: a tool rule reads each value (its field's, or the whole input without one) as
	// a shell script, and the condition runs on each simple command the script would run,
	// rendered as its words (see ShellReader and the shellcmd package); the rule fires if
	// one command does. Input the reader cannot read completely is refused by a gate (mode
	// interrupt: fail closed, outcome refused_unreadable) and matched raw by a reminder.
	// A gate finds its field's keys as encoding/json does, ignoring case, and reads
	// arguments that are not a JSON object whole.
	Shell bool `json:"shell,omitempty" db:"shell"`
	// Fix repairs an answer that missed this text rule in place, instead of a replay.
	Fix *Fix `json:"fix,omitempty" db:"-"`
	// Severity (low, medium, high) and Explanation are metadata: shown in log lines and
	// stats, never sent to the model (Text is what the model is told).
	Severity    string    `json:"severity,omitempty" db:"severity"`
	Explanation string    `json:"explanation,omitempty" db:"explanation"`
	CreatedAt   time.Time `json:"created_at,omitzero" db:"created_at"`
	UpdatedAt   time.Time `json:"updated_at,omitzero" db:"updated_at"`
	// Delivery "full" keeps a tool rule's reminder inline whatever Config.ReminderBudget
	// says (a rule with teeth); it counts against the budget first. Empty: full while the
	// tour's budget lasts, then in manifest form.
	Delivery Delivery `json:"delivery,omitempty" db:"delivery"`
	// Hint is what a manifest block says of the rule, at most MaxHintChars characters.
	// Empty: the first sentence of Text.
	Hint string `json:"hint,omitempty" db:"hint"`
	// Tests are the rule's examples, which must fire it and must not: checked by Validate
	// (MaxTestExamples, MaxExampleBytes), run by the ruletest package and `streamrules
	// test`, never seen by a move. nil: none.
	Tests *RuleTests `json:"tests,omitempty" db:"-"`
}

// ruleFields is Rule without its methods, for the JSON wrappers below.
type ruleFields Rule

// MarshalJSON writes the rule with its wire names; Disabled goes out as "enabled".
// It leaves <, > and & unescaped: the caller's encoder escapes them or not
// (json.Marshal does, an Encoder with SetEscapeHTML(false) does not).
func (r Rule) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		ruleFields
		Enabled bool `json:"enabled"`
	}{ruleFields(r), !r.Disabled}); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads the wire form; an absent "enabled" means enabled.
func (r *Rule) UnmarshalJSON(data []byte) error {
	var w struct {
		*ruleFields
		Enabled *bool `json:"enabled"`
	}
	w.ruleFields = (*ruleFields)(r)
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	r.Disabled = w.Enabled != nil && !*w.Enabled
	return nil
}

// Tool returns the tool name of a tool-scoped rule, or "" for a text rule.
func (r *Rule) Tool() string {
	if name, ok := strings.CutPrefix(r.Scope, ScopeToolPrefix); ok {
		return name
	}
	return ""
}

// ModeForScope returns the mode a scope gets when none is given, or "" for an unknown
// scope: interrupt for text, remind for a tool (which may also be interrupt).
func ModeForScope(scope string) Mode {
	switch {
	case scope == ScopeText || scope == ScopeThinking:
		return ModeInterrupt
	case strings.HasPrefix(scope, ScopeToolPrefix) && len(scope) > len(ScopeToolPrefix):
		return ModeRemind
	}
	return ""
}

// ValidationError says which field of a rule is wrong and why.
type ValidationError struct {
	Field  string
	Reason string
	err    error // a sentinel the error wraps (ErrBadRepeat), or nil
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("streamrules: invalid %s: %s", e.Field, e.Reason)
}

// Unwrap returns the sentinel the error wraps, if any: errors.Is(err, ErrBadRepeat) holds
// for a bad repeat.
func (e *ValidationError) Unwrap() error { return e.err }

func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)

// ValidName reports whether s is a valid rule or environment name: [a-z][a-z0-9_]*.
func ValidName(s string) bool {
	// Not a regexp: every reload checks every stored name.
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Normalize trims the fields a person types, derives an empty mode from the scope and sorts When.
// It does not validate.
func (r *Rule) Normalize() {
	r.Name = strings.TrimSpace(r.Name)
	r.Scope = strings.TrimSpace(r.Scope)
	r.Repeat = strings.TrimSpace(r.Repeat)
	r.Text = strings.TrimSpace(r.Text)
	r.Field = strings.TrimSpace(r.Field)
	r.Severity = strings.TrimSpace(r.Severity)
	r.Explanation = strings.TrimSpace(r.Explanation)
	normalizeDelivery(r) // delivery.go
	if r.Mode == "" {
		r.Mode = ModeForScope(r.Scope)
	}
	when := make([]string, 0, len(r.When))
	for _, w := range r.When {
		if w = strings.TrimSpace(w); w != "" && !slices.Contains(when, w) {
			when = append(when, w)
		}
	}
	slices.Sort(when)
	r.When = when
}

// Validate checks a normalized rule. known lists the environment names that `when` may use
// (BuiltinEnvironments plus the host's); nil means BuiltinEnvironments.
// The error is a *ValidationError naming the first bad field.
func Validate(r *Rule, known []string) error {
	c := analysisCache{} // each regex analysed once, for its check and the rule's cost
	return validate(r, known, c.check(c), c.cost(c))
}

// validate is Validate with the check of each regular expression, and its cost per
// byte, given: the engine passes ones that reuse the analysis it keeps per pattern (see
// analysisCache).
func validate(r *Rule, known []string, checkRegex func(field, pattern string) error, cost func(pattern string, refined bool) regexCost) error {
	if known == nil {
		known = BuiltinEnvironments
	}
	if err := checkEncoding(r); err != nil {
		return err
	}
	switch {
	case r.Name == "":
		return invalid("name", "empty")
	case len(r.Name) > MaxNameBytes:
		return invalid("name", "longer than %d bytes", MaxNameBytes)
	case !ValidName(r.Name):
		return invalid("name", "%q must match [a-z][a-z0-9_]*", r.Name)
	}
	want := ModeForScope(r.Scope)
	if want == "" {
		return invalid("scope", "%q is not %q, %q nor %q", r.Scope, ScopeText, ScopeThinking, ScopeToolPrefix+"<name>")
	}
	if tool := r.Tool(); tool != "" && !toolNameRE.MatchString(tool) {
		return invalid("scope", "tool name %q has characters a tool name cannot have", tool)
	}
	if r.Mode != want && !(r.Tool() != "" && r.Mode == ModeInterrupt) {
		if r.Tool() != "" {
			return invalid("mode", "scope %q takes mode %q or %q, not %q (leave mode empty for %q)", r.Scope, ModeRemind, ModeInterrupt, r.Mode, want)
		}
		return invalid("mode", "scope %q needs mode %q, not %q (leave mode empty to derive it)", r.Scope, want, r.Mode)
	}
	if r.Shell && r.Tool() == "" {
		return invalid("shell", "only a tool rule reads shell commands; a text rule sees the answer")
	}
	if err := validateThinking(r); err != nil { // thinking.go
		return err
	}
	if err := checkRegex("condition", r.Condition); err != nil {
		return err
	}
	if err := validateTree(r, checkRegex); err != nil {
		return err
	}
	if err := checkRuleCost(r, cost); err != nil {
		return err
	}
	if r.Negate && r.Condition == "" && r.Predicate == nil {
		return invalid("negate", "needs a condition: an empty condition matches every target, so its negation never fires")
	}
	for _, w := range r.When {
		if !slices.Contains(known, w) {
			return invalid("when", "unknown environment %q (known: %s)", w, strings.Join(known, ", "))
		}
	}
	switch n := utf8.RuneCountInString(r.Text); {
	case n == 0:
		return invalid("text", "empty: the model must be told something")
	case !utf8.ValidString(r.Text):
		return invalid("text", "not valid UTF-8")
	case n > MaxTextChars:
		return invalid("text", "%d characters, at most %d", n, MaxTextChars)
	}
	if _, err := ParseRepeat(r.Repeat); err != nil {
		return err
	}
	if err := validateDelivery(r); err != nil { // delivery.go
		return err
	}
	return checkTests(r.Tests) // ruletests.go
}

func checkCondition(cond string) error { return checkRegex("condition", cond) }

// RepeatKind is the repeat policy of a rule.
type RepeatKind int

// Repeat policies: every time, once per chat forever, at most once per N moves of the chat.
const (
	RepeatEvery RepeatKind = iota
	RepeatOnce
	RepeatAfter
)

// Repeat is a parsed repeat policy.
type Repeat struct {
	Kind  RepeatKind
	Moves int64 // for RepeatAfter: N >= 1
}

// ErrBadRepeat is wrapped by ParseRepeat's errors.
var ErrBadRepeat = errors.New("streamrules: bad repeat policy")

// repeatForms is what ParseRepeat accepts, for its error's Reason.
const repeatForms = `must be empty, "once" or "after:N" with N >= 1`

// ParseRepeat parses "", "once" or "after:N". N is written in decimal digits without a sign
// or leading zeros, so every accepted policy has exactly one spelling.
func ParseRepeat(s string) (Repeat, error) {
	switch {
	case s == "":
		return Repeat{Kind: RepeatEvery}, nil
	case s == "once":
		return Repeat{Kind: RepeatOnce}, nil
	case strings.HasPrefix(s, "after:"):
		digits := s[len("after:"):]
		if digits != "" && digits[0] >= '1' && digits[0] <= '9' &&
			strings.Trim(digits, "0123456789") == "" {
			if n, err := strconv.ParseInt(digits, 10, 64); err == nil {
				return Repeat{Kind: RepeatAfter, Moves: n}, nil
			}
		}
	}
	return Repeat{}, &ValidationError{Field: "repeat", Reason: fmt.Sprintf("%q: %s", s, repeatForms), err: ErrBadRepeat}
}

// Allows reports whether a rule with this policy may fire in move `move` of a chat,
// given the move it last fired in (0: never).
func (p Repeat) Allows(lastFired, move int64) bool {
	switch p.Kind {
	case RepeatOnce:
		return lastFired == 0
	case RepeatAfter:
		return lastFired == 0 || move-lastFired >= p.Moves
	}
	return true
}
