package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/streamrules/streamrules/ruletest"
)

func init() {
	commands = append(commands,
		&command{path: "test", args: "[--json] FILE…", summary: "run the rules' tests: each fires example must fire, each passes example must not", opts: func() opts { return &testCmd{} },
			about: "For the CI of a rules repository, beside validate: no database needed. Each example is judged\nby the engine's own judge, as in a move where the environments of the rule's when hold (docs/rules.md,\n\"Rule tests\"). Exit 1 names each failing example (file, rule, tests.fires[N] or tests.passes[N] and\nwhy); exit 2 when a file does not validate. Rules may use the environments STREAMRULES_ENVIRONMENTS\nnames. --json writes one document: per file, per rule, each example's verdict."},
	)
}

// testCmd is test [--json] FILE….
type testCmd struct {
	files []string
	json  bool
}

func (c *testCmd) flags(fs *flag.FlagSet) {
	fs.BoolVar(&c.json, "json", false, "write the results as one JSON document")
}

func (c *testCmd) validate(args []string) error {
	if len(args) == 0 {
		return usagef("test takes one or more FILEs")
	}
	c.files = args
	return nil
}

// testFailedError: the files are valid, and some examples did not come out as they say.
// It ran and said no: exit 1.
type testFailedError struct{ msg string }

func (e *testFailedError) Error() string { return e.msg }

// fileTests is one file's results, for --json.
type fileTests struct {
	File  string                `json:"file"`
	Rules []ruletest.RuleReport `json:"rules"`
}

func (c *testCmd) run(_ context.Context, e *proc) error {
	cfg, err := e.config()
	if err != nil {
		return err
	}
	bad, rules, examples, failed, untested := 0, 0, 0, 0, 0
	var out []fileTests
	for _, path := range c.files {
		set, err := loadRules(path, cfg.Environments) // speech.go: a set, or a single rule
		if err != nil {
			bad++
			fmt.Fprintln(e.stderr, err)
			continue
		}
		rep := ruletest.Run(set.Rules, cfg.Environments...)
		n, f, u := rep.Counts()
		for _, rr := range rep.Rules {
			if rr.Err != nil { // the file validated: a rule the judge still refuses
				bad++
				fmt.Fprintf(e.stderr, "%s: rule %q: %v\n", path, rr.Rule, rr.Err)
				continue
			}
			for _, res := range rr.Failed() {
				fmt.Fprintf(e.stderr, "%s: rule %q: %s\n", path, rr.Rule, res)
			}
		}
		rules, examples, failed, untested = rules+len(rep.Rules), examples+n, failed+f, untested+u
		out = append(out, fileTests{File: path, Rules: rep.Rules})
		if c.json {
			continue
		}
		status := "ok"
		if f > 0 {
			status = fmt.Sprintf("%d failed", f)
		}
		line := fmt.Sprintf("%s: %s, %s, %s", path, status, plural(len(rep.Rules), "rule"), plural(n, "example"))
		if u > 0 {
			line += fmt.Sprintf(" (%s without tests)", plural(u, "rule"))
		}
		fmt.Fprintln(e.stdout, line)
	}
	if c.json {
		if err := writeJSON(e.stdout, struct {
			Files []fileTests `json:"files"`
		}{out}); err != nil {
			return err
		}
	}
	if bad > 0 {
		return &invalidError{fmt.Sprintf("%d of %s invalid", bad, plural(len(c.files), "file"))}
	}
	summary := fmt.Sprintf("tested %s: %s, %d failed", plural(rules, "rule"), plural(examples, "example"), failed)
	if untested > 0 {
		summary += fmt.Sprintf(", %s without tests", plural(untested, "rule"))
	}
	fmt.Fprintln(e.stderr, summary)
	if failed > 0 {
		return &testFailedError{fmt.Sprintf("test: %d of %s failed", failed, plural(examples, "example"))}
	}
	return nil
}
