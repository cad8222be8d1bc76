package streamrules

import (
	"errors"
	"reflect"
	"slices"
)

// SkippedRule is a row the store returned enabled that the engine does not run, and why:
// a hand edit broke it (a bad regex, a padded name…) or another row has its name.
type SkippedRule struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"` // exactly as stored
	Field  string `json:"field,omitempty"`
	Reason string `json:"reason"` // the validation error, as the warning in the log says it
}

// Skipped returns the rows of the current rule set that were not loaded, and why, so a
// tool or a CLI can show it beside each row (stream_rule_list does).
func (e *Engine) Skipped() []SkippedRule {
	return slices.Clone(e.rules.Load().skipped)
}

func (s *ruleSet) skip(r Rule, err error) {
	sk := SkippedRule{ID: r.ID, Name: r.Name, Reason: err.Error()}
	var ve *ValidationError
	if errors.As(err, &ve) {
		sk.Field = ve.Field
	}
	s.skipped = append(s.skipped, sk)
}

// checkStoredName judges a name as the store holds it, before any normalization.
func checkStoredName(name string) error {
	if err := checkString("name", name); err != nil {
		return err
	}
	if !ValidName(name) || len(name) > MaxNameBytes {
		return invalid("name", "%q is not a valid name as stored: it must match [a-z][a-z0-9_]* (at most %d bytes), with no padding", name, MaxNameBytes)
	}
	return nil
}

// logSummary is the one line every load and reload that changed the set writes: how many
// rules run, how many are disabled, how many were skipped and which. Reloads that find
// nothing new (most backstop ticks) write nothing. Caller holds reloadMu.
func (e *Engine) logSummary(set *ruleSet) {
	names := make([]string, len(set.skipped))
	for i, sk := range set.skipped {
		names[i] = sk.Name
	}
	attrs := []any{"loaded", len(set.all), "disabled", set.disabled,
		"skipped", len(set.skipped), "skipped_rules", names, "held_speech", heldSpeech(set)}
	if th := thinkingSummary(set); th != "" {
		attrs = append(attrs, "thinking", th) // thinking.go
	}
	e.log.Info("stream rules loaded", attrs...)
}

// maxHeldInSummary bounds the rules the load summary describes: the line stays readable,
// and a set of thousands of rules does not plan every release at load.
const maxHeldInSummary = 32

// heldSpeech lists, for the load summary, each rule that holds the client's stream and
// how ("telegram_reply_tail: holds a bounded tail (16 bytes) when telegram"); rules that
// stream are left out. The plans are the ones the rules' tours use, made once.
func heldSpeech(set *ruleSet) []string {
	var out []string
	for _, c := range set.all {
		if c.Tool() != "" && c.Mode != ModeInterrupt {
			continue // a soft rule never holds
		}
		if len(out) == maxHeldInSummary {
			return append(out, "… (streamrules validate says it per rule)")
		}
		if h := c.speechHold(); h.Kind != HoldNone {
			out = append(out, c.Name+": "+h.String())
		}
	}
	return out
}

// isNil reports whether v is nil or a nil pointer (map, func…) inside an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Func, reflect.Chan, reflect.Interface, reflect.Slice:
		return rv.IsNil()
	}
	return false
}
