package replay

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/streamrules/streamrules"
)

// Report is what a backtest found: every rule loaded, by name, zero fires included.
// Its JSON is the --json output of `streamrules replay`.
type Report struct {
	Rules []RuleReport `json:"rules"`
	Moves int          `json:"moves"` // moves replayed
	// UnknownEnv lists the environment names the transcripts used that the engine does
	// not know (ignored, as live): a misspelt "telgram" puts every Telegram rule out of
	// scope. Register a host's own names in Options.Environments.
	UnknownEnv []string `json:"unknown_env,omitempty"`
}

// RuleReport is one rule's line.
type RuleReport struct {
	Rule  string `json:"rule"`
	Scope string `json:"scope"`
	// Gate marks a tool rule in mode interrupt: a call it matches would have been stopped
	// before it ran. Its Fired counts calls, not moves.
	Gate bool `json:"gate,omitempty"`
	// InScope counts the moves the rule applied to: its `when` held.
	InScope int `json:"in_scope"`
	// Fired counts the moves it would have fired in: at most once per move, and no more
	// often than its repeat policy lets it over each chat. A gate (Mode interrupt on a tool
	// rule) counts calls instead: every matching call would have been stopped.
	Fired int `json:"fired"`
	// Rate is the share of chances the rule took, per RateOf: for a text rule, Fired of
	// InScope (moves); for a tool rule, soft or gate, Fired of Calls (calls of its tool in
	// the moves in scope), since it fires on calls. 0 with nothing in scope.
	Rate float64 `json:"rate"`
	// RateOf says what Rate is a share of: "moves" or "calls".
	RateOf string `json:"rate_of"`
	// Discards counts, for a text rule, the would-fires that would have thrown the answer
	// away and replayed the tour (the move still had a retry). The others would have been
	// kept, the rule's reminder riding the move's next tool result.
	Discards int `json:"discards,omitempty"`
	// NotApplicable counts the moves where the rule's `when` held but its applies_when
	// did not (not in scope).
	NotApplicable int `json:"not_applicable,omitempty"`
	// Calls counts, for a tool rule, the calls of its tool in the moves in scope: Fired of
	// Calls is how many of them it would have reminded.
	Calls int `json:"calls,omitempty"`
	// Examples are the first firings, in input order, with the matched span marked.
	Examples []Example `json:"examples"`
}

// Example is one firing, with an excerpt of what the rule matched.
type Example struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Chat string `json:"chat"`
	Move int64  `json:"move"`
	// Tool is, for a tool rule, the call that matched; its target is the call's
	// compact-JSON arguments. Empty for a text rule, whose target is the answer.
	Tool string `json:"tool,omitempty"`
	// Gate: the rule is a tool rule in mode interrupt, and this call would have been
	// stopped before it ran (the response discarded, or the call refused after the ceiling).
	Gate bool `json:"gate,omitempty"`
	// Excerpt is the target around the match, with the matched span between
	// MarkStart and MarkEnd; "…" where it was cut. A negate rule fires on what is
	// missing, so its excerpt is the end of the target, unmarked.
	Excerpt string `json:"excerpt"`
	// Match is the matched text, whole ("" for a negate rule, or an empty match).
	Match string `json:"match"`

	seq int64 // the move's place in the input, over every source: orders the examples
}

// The marks around the matched span in Example.Excerpt.
const (
	MarkStart = "⟦"
	MarkEnd   = "⟧"
)

// excerptContext is how many characters of the target an excerpt keeps on each side of
// the match (twice that for a negate rule's tail); the match itself is cut past 200.
const (
	excerptContext = 40
	maxMatchChars  = 200
)

// ruleStat is a rule's running report and what it needs to cut examples.
type ruleStat struct {
	rule  streamrules.Rule
	re    *regexp.Regexp     // compiled on the first example only
	judge *streamrules.Judge // the rule outside the engine, for applies_when; compiled on first use
	RuleReport
}

// addExample keeps the example, marked where the engine's firing says the rule matched
// (span); without a span, it finds the condition's match itself (the same RE2 semantics).
func (rs *ruleStat) addExample(ex Example, target string, span *streamrules.Span) {
	if span != nil && span.Start <= span.End && span.End <= len(target) {
		ex.Match = target[span.Start:span.End]
		ex.Excerpt = excerpt(target, span.Start, span.End)
		rs.Examples = append(rs.Examples, ex)
		return
	}
	if rs.rule.Negate {
		ex.Excerpt = tail(target, 2*excerptContext)
		rs.Examples = append(rs.Examples, ex)
		return
	}
	if rs.re == nil {
		re, err := regexp.Compile(rs.rule.Condition)
		if err != nil {
			return // cannot happen: the engine loaded the rule, so its condition compiles
		}
		rs.re = re
	}
	loc := rs.re.FindStringIndex(target)
	if loc == nil || rs.rule.Condition == "" {
		// An empty condition matches every target: the whole target is what fired it.
		loc = []int{0, len(target)}
	}
	ex.Match = target[loc[0]:loc[1]]
	ex.Excerpt = excerpt(target, loc[0], loc[1])
	rs.Examples = append(rs.Examples, ex)
}

// excerpt returns s[start:end] marked, with up to excerptContext characters on each side.
func excerpt(s string, start, end int) string {
	before, after := s[:start], s[end:]
	match := s[start:end]
	if utf8.RuneCountInString(match) > maxMatchChars {
		match = string([]rune(match)[:maxMatchChars]) + "…"
	}
	return tail(before, excerptContext) + MarkStart + match + MarkEnd + head(after, excerptContext)
}

// head returns the first n characters of s, "…" after them if it was cut.
func head(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos] + "…"
		}
		i++
	}
	return s
}

// tail returns the last n characters of s, "…" before them if it was cut.
func tail(s string, n int) string {
	count := utf8.RuneCountInString(s)
	if count <= n {
		return s
	}
	skip := count - n
	for pos := range s {
		if skip == 0 {
			return "…" + s[pos:]
		}
		skip--
	}
	return s
}

// WriteText writes the report as a table, one rule a row, then each rule's examples.
// Newlines and tabs in excerpts are shown as ⏎ and →, so an example stays on one line.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "rule\tscope\tin scope\tcalls\tfired\trate\n")
	for _, rr := range r.Rules {
		calls := "-"
		if rr.RateOf == rateOfCalls {
			calls = fmt.Sprint(rr.Calls)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%.1f%% of %s\n", rr.Rule, rr.Scope, rr.InScope, calls, rr.Fired, 100*rr.Rate, rr.RateOf)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d moves replayed\n", r.Moves)
	if len(r.UnknownEnv) > 0 {
		fmt.Fprintf(w, "unknown environments, ignored: %s\n", strings.Join(r.UnknownEnv, ", "))
	}
	for _, rr := range r.Rules {
		if len(rr.Examples) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", rr.Rule)
		for _, ex := range rr.Examples {
			where := fmt.Sprintf("%s:%d (chat %s, move %d)", ex.File, ex.Line, ex.Chat, ex.Move)
			if ex.Tool != "" {
				where += " " + ex.Tool
			}
			if ex.Gate {
				where += " (stopped before it ran)"
			}
			if _, err := fmt.Fprintf(w, "  %s: %s\n", where, oneLine(ex.Excerpt)); err != nil {
				return err
			}
		}
	}
	return nil
}

var oneLineReplacer = strings.NewReplacer("\r\n", "⏎", "\n", "⏎", "\r", "⏎", "\t", "→")

func oneLine(s string) string { return oneLineReplacer.Replace(s) }

// What RuleReport.Rate is a share of.
const (
	rateOfMoves = "moves"
	rateOfCalls = "calls"
)
