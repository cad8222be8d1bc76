package streamrules

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A reminder budget bounds how much rule text one tour adds to the prompt
// (Config.ReminderBudget, in characters of rule text). The reminders due on the tool
// calls of one tour (the calls one model answer declared: between two BeginTour calls)
// share it. While they fit, nothing changes: every block is whole, in rule-name order.
// When a call's reminders do not fit what is left, its blocks are laid in a fixed order,
// severity high first (then medium, low, none), then name, and each is delivered in full
// while the budget lasts; once one does not fit, it and every later one of the tour is
// delivered in manifest form:
//
//	<system-reminder rule="NAME" delivery="manifest">HINT (read it with stream_rule_read)</system-reminder>
//
// HINT is the rule's Hint, or the first sentence of its text. The model loads the whole
// rule with the stream_rule_read tool (ruletools.Reader, Move.ReadRule), which answers
// only for rules delivered in manifest form in the same move.
//
// A rule with "delivery": "full" is always whole and counts against the budget first;
// so are the reminders of text rules missed after the retry ceiling (they ride whole,
// as an interrupt would have been). Interrupts are never cut. The decision is made once,
// when the call is recorded, and kept with the call (Move.ToolCalls), so the splice is
// byte-identical in every later tour of the move.

// Delivery says how a reminder reached the model.
type Delivery string

// The deliveries.
const (
	// DeliveryFull: the rule's text is inline. On a Reminder, empty means the same.
	DeliveryFull Delivery = "full"
	// DeliveryManifest: a short block names the rule and says how to read it.
	DeliveryManifest Delivery = "manifest"
)

// MaxHintChars bounds Rule.Hint and the first sentence a manifest block quotes.
const MaxHintChars = 120

// ReadToolName is the name of the tool that reads a rule delivered in manifest form; the
// manifest block tells the model to call it.
const ReadToolName = "stream_rule_read"

// ErrNotManifest is wrapped by Move.ReadRule when the rule was not delivered in manifest
// form in this move.
var ErrNotManifest = errors.New("streamrules: not delivered in manifest form in this move")

// manifestSuffix follows the hint in a manifest block.
const manifestSuffix = " (read it with " + ReadToolName + ")"

func normalizeDelivery(r *Rule) {
	r.Delivery = Delivery(strings.TrimSpace(string(r.Delivery)))
	r.Hint = strings.TrimSpace(r.Hint)
}

func validateDelivery(r *Rule) error {
	if r.Delivery != "" && r.Delivery != DeliveryFull {
		return invalid("delivery", "%q: must be empty (full while the reminder budget lasts) or %q (always inline)", r.Delivery, DeliveryFull)
	}
	return checkChars("hint", r.Hint, MaxHintChars)
}

// checkChars checks a rule's text field: valid UTF-8, at most most characters.
func checkChars(field, s string, most int) error {
	switch n := utf8.RuneCountInString(s); {
	case !utf8.ValidString(s):
		return invalid(field, "not valid UTF-8")
	case n > most:
		return invalid(field, "%d characters, at most %d", n, most)
	}
	return nil
}

// firstSentence returns the first sentence of text (up to and including the first '.',
// '!' or '?' followed by a space or the end, or the first line), cut to MaxHintChars
// characters with "…": what a manifest block says of a rule without a Hint.
func firstSentence(text string) string {
	text = strings.TrimSpace(text)
	end := len(text)
	for i, r := range text {
		if r == '\n' {
			end = i
			break
		}
		if r == '.' || r == '!' || r == '?' || r == '。' {
			j := i + utf8.RuneLen(r)
			if next, _ := utf8.DecodeRuneInString(text[j:]); j == len(text) || unicode.IsSpace(next) {
				end = j
				break
			}
		}
	}
	s := strings.TrimSpace(text[:end])
	if utf8.RuneCountInString(s) <= MaxHintChars {
		return s
	}
	return string([]rune(s)[:MaxHintChars-1]) + "…"
}

// deliveryPlan is what the budget needs of a rule, worked out when the rule set is built.
type deliveryPlan struct {
	chars int    // characters of Text: what the rule costs in full
	rank  int    // severity: 3 high, 2 medium, 1 low, 0 none
	full  bool   // Rule.Delivery is full: always inline
	hint  string // what its manifest block says
}

func planDelivery(r *Rule) deliveryPlan {
	p := deliveryPlan{chars: utf8.RuneCountInString(r.Text), full: r.Delivery == DeliveryFull, hint: r.Hint}
	p.rank = slices.Index(severities, r.Severity) + 1 // "" is -1+1: none
	if p.hint == "" {
		p.hint = firstSentence(r.Text)
	}
	return p
}

// manifestBlock renders a reminder delivered in manifest form; r.Text is the hint.
func (r Reminder) manifestBlock() string {
	return "<" + ReminderTag + ` rule="` + escapeAttr(r.Rule) + `" delivery="manifest">` + escapeText(r.Text) +
		manifestSuffix + "</" + ReminderTag + ">"
}

// deliverLocked applies the tour's budget to one call's reminders. out holds the soft
// rules' reminders (due, in the same order, are their rules) followed by the pending
// reminders of text rules. It returns the reminders in the order to lay them and whether
// that order is already final (false: the caller sorts by name, as without a budget).
// firings are this call's firings (the tail of m.firings); those delivered in manifest
// form are marked. Caller holds m.mu.
//
// Cost: the sum of the costs when all fit; over the budget, an ordering of indexes kept
// on the stack (sorting the reminders themselves moved pointers through the GC's write
// barrier: three times slower) by passes over the severities, with no comparison of
// names unless text rules' reminders ride along.
func (m *Move) deliverLocked(out []Reminder, due []*compiledRule, firings []Firing) ([]Reminder, bool) {
	budget := m.eng.budget
	total := 0
	for _, r := range due {
		total += r.deliveryPlan.chars
	}
	pending := out[len(due):]
	for _, p := range pending {
		total += utf8.RuneCountInString(p.Text)
	}
	if m.spent+total <= budget {
		m.spent += total // it all fits: whole, in name order, as without a budget
		return out, false
	}
	var (
		planBuf [16]*deliveryPlan
		idxBuf  [16]int
		plans   = planBuf[:0]
		idx     = idxBuf[:0]
	)
	for _, r := range due {
		plans = append(plans, &r.deliveryPlan)
	}
	if len(pending) == 0 {
		// The usual call: due is in name order, so four passes by severity lay it in the
		// fixed order, stable, with no comparison of names.
		for rank := len(severities); rank >= 0; rank-- {
			for i, p := range plans {
				if p.rank == rank {
					idx = append(idx, i)
				}
			}
		}
	} else {
		for i, p := range pending {
			// A text rule's reminder after the ceiling rides whole, as its interrupt would have.
			plan := &deliveryPlan{chars: utf8.RuneCountInString(p.Text), full: true}
			if r := m.set.ruleByName(p.Rule); r != nil {
				plan.rank = r.deliveryPlan.rank
			}
			plans = append(plans, plan)
			idx = append(idx, len(due)+i)
		}
		for i := range due {
			idx = append(idx, i)
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			if plans[a].rank != plans[b].rank {
				return plans[b].rank - plans[a].rank
			}
			return strings.Compare(out[a].Rule, out[b].Rule)
		})
	}
	var (
		manBuf     [16]bool
		stash      [16]Reminder
		manifest   = manBuf[:0]
		laidBefore = stash[:0]
	)
	for _, i := range idx { // the rules that are always whole count first
		if plans[i].full {
			m.spent += plans[i].chars
		}
	}
	manifest = manifest[:len(out)]
	for _, i := range idx {
		if plans[i].full {
			continue
		}
		if m.spent+plans[i].chars <= budget {
			m.spent += plans[i].chars
			continue
		}
		// The budget is out for the rest of the tour: later calls of the tour go on in
		// manifest form too, so the order severity-then-name holds across them.
		m.spent = max(m.spent, budget+1)
		manifest[i] = true
	}
	// The call's live firings are due's, in due's order (a would-fire is recorded, never
	// due; a pending reminder fired earlier, on the answer).
	k := 0
	for j := range firings {
		if f := &firings[j]; f.Mode == ModeRemind && f.Outcome != OutcomeShadow {
			if k < len(due) && manifest[k] {
				f.Delivery = DeliveryManifest
			}
			k++
		}
	}
	laidBefore = append(laidBefore, out...)
	for pos, i := range idx {
		r := laidBefore[i]
		if manifest[i] {
			r = Reminder{Rule: r.Rule, Text: plans[i].hint, Delivery: DeliveryManifest}
		}
		out[pos] = r
	}
	return out, true
}

// ReadRule returns the text of a rule delivered in manifest form in this move, for the
// stream_rule_read tool, and records the read on the rule's firings (Firing.Read), so the
// stats show whether manifest rules get read. Any other rule is refused with an error
// wrapping ErrNotManifest: the tool reads only what this move pointed the model to. The
// text is the rule as the move's rule set holds it, the version the manifest named.
func (m *Move) ReadRule(ctx context.Context, name string) (string, error) {
	m.mu.Lock()
	if m.ended {
		m.mu.Unlock()
		return "", ErrMoveEnded
	}
	found := false
	for i := range m.firings {
		if f := &m.firings[i]; f.Rule == name && f.Delivery == DeliveryManifest {
			f.Read, found = true, true
		}
	}
	r := m.set.ruleByName(name)
	m.mu.Unlock()
	if !found || r == nil {
		return "", inRule(name, ErrNotManifest)
	}
	m.eng.log.InfoContext(ctx, "stream rule read", "rule", name, "chat", m.chatID, "move", m.number, "delivery", DeliveryManifest.attr())
	return r.Text, nil
}

// countDelivery adds a firing to a rule's delivery counters: live firings with a
// delivery (a would-fire delivers nothing).
func countDelivery(c *RuleCounter, f Firing) {
	if f.Delivery == "" || f.Outcome == OutcomeShadow {
		return
	}
	if c.ByDelivery == nil {
		c.ByDelivery = map[Delivery]int64{}
	}
	c.ByDelivery[f.Delivery]++
	if f.Read {
		c.Read++
	}
}

// attr is d as a log attribute's value: the known values are constants, so boxing them
// allocates nothing (a firing's log line is built on the hot path).
func (d Delivery) attr() any {
	switch d {
	case DeliveryFull:
		return string(DeliveryFull)
	case DeliveryManifest:
		return string(DeliveryManifest)
	}
	return string(d)
}
