package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulefile"
)

// What each rule does to the client's stream (streamrules.SpeechHoldOf), as validate,
// rules show and rules list print it, and validate --stream's check.

// speechLine is a rule's verdict and its reason on one line:
// "holds a bounded tail (16 bytes) when telegram — a negate rule that …".
func speechLine(h streamrules.SpeechHold) string {
	s := h.String() + " — " + h.Reason
	if h.Otherwise != "" {
		s += "; " + h.Otherwise
	}
	return s
}

// speechOf is the verdict of a rule as the store holds it, or "" when the engine would
// not load it (disabled or invalid: it holds nothing).
func speechOf(r streamrules.Rule, known []string) (streamrules.SpeechHold, bool) {
	r.Normalize()
	if r.Disabled || streamrules.Validate(&r, known) != nil {
		return streamrules.SpeechHold{}, false
	}
	return streamrules.SpeechHoldOf(&r), true
}

// printSpeech writes each rule's verdict under its file's line in validate's output.
func printSpeech(w io.Writer, rules []streamrules.Rule) {
	for i := range rules {
		fmt.Fprintf(w, "  %s: %s\n", rules[i].Name, speechLine(streamrules.SpeechHoldOf(&rules[i])))
	}
}

// holdsError: validate --stream found rules that hold whole tours in the environments
// given. The files are valid; validate ran and said no (exit 1).
type holdsError struct{ msg string }

func (e *holdsError) Error() string { return e.msg }

// checkStream returns the rules that hold whole tours in a tour of exactly env: each rule
// whose `when` env satisfies and whose verdict is the whole tour, its context included
// (a context-bound rule holds in the tours its context allows).
func checkStream(rules []streamrules.Rule, env []string) []streamrules.Rule {
	var out []streamrules.Rule
	for i := range rules {
		r := &rules[i]
		if r.Shadow || !whenHolds(r.When, env) {
			continue
		}
		if h := streamrules.SpeechHoldOf(r); h.Kind == streamrules.HoldTour {
			out = append(out, *r)
		}
	}
	return out
}

func whenHolds(when, env []string) bool {
	for _, w := range when {
		if !slices.Contains(env, w) {
			return false
		}
	}
	return true
}

func reportStream(w io.Writer, holding []streamrules.Rule, env []string) {
	for i := range holding {
		fmt.Fprintf(w, "rule %q %s\n", holding[i].Name, speechLine(streamrules.SpeechHoldOf(&holding[i])))
	}
	verb := "hold"
	if len(holding) == 1 {
		verb = "holds"
	}
	fmt.Fprintf(w, "%s %s whole tours in a %s tour: the client gets those answers only when complete\n",
		plural(len(holding), "rule"), verb, strings.Join(env, "+"))
}

// parseEnvList reads --stream's comma-separated names; each must be known.
func parseEnvList(s string, known []string) ([]string, error) {
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if !slices.Contains(known, n) {
			return nil, usagef("validate: --stream: unknown environment %q (known: %s)", n, strings.Join(known, ", "))
		}
		out = append(out, n)
	}
	return out, nil
}

// loadRules reads a rule file for validate and replay --rules: a set (version and rules),
// or a single rule as rules show writes it, read as a set of one.
func loadRules(path string, environments []string) (rulefile.Set, error) {
	set, err := rulefile.Load(path, environments...)
	var fe *rulefile.Error
	if err == nil || !errors.As(err, &fe) || fe.Rule != 0 || fe.Field == "" || fe.Field == "rules" || fe.Field == "version" {
		return set, err
	}
	// The top level has a key a set does not: a rule's field, when the file is one rule.
	r, rerr := rulefile.LoadRule(path, environments...)
	if rerr != nil {
		var re *rulefile.Error
		if errors.As(rerr, &re) && re.Field == "version" {
			return set, err // neither shape: the set's error says what a set holds
		}
		return set, rerr
	}
	return rulefile.Set{Rules: []streamrules.Rule{r}}, nil
}
