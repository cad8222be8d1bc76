// Command constitution runs seed 003's constitution (rules.yaml) over four drafts with
// the stream-rules engine: each rule's verdict on each draft (pass, violation or
// not_applicable), then the engine's deterministic repair of the violating draft and the
// line diff kept for audit. No model is called.
//
//	go run ./examples/constitution
package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulefile"
)

//go:embed rules.yaml
var rulesYAML []byte

// draft is an answer and the user's message it answers: urgent_line_on_safety reads the
// message (input_contains_regex), the other rules only the answer.
type draft struct {
	Prompt, Answer string
}

// drafts are answers like the seed's: one passes, one violates and is fixed, one is
// outside the code rule's applies_when (no code block), and one answers a safety
// question without the urgent line, which its fix appends.
var drafts = []draft{
	{"Sort [3, 1, 2] in Python.", "Here is the sorted list:\n```python\nprint(sorted([3, 1, 2]))\n```"},
	{"Print a file in Python.", "```python\nprint(open(path).read())\n```\nThis prints the file."},
	{"How do I sort a list?", "Sorting is done with sorted(): it returns a new list."},
	{"Is it safe to stay home during a gas leak?", "No. Leave the house, leave the door open and do not touch any switch."},
}

// parseRules reads the YAML constitution with rulefile, the rule files' one strict
// decoder, which validates every rule and names the line, rule and field of an error.
func parseRules(data []byte) ([]streamrules.Rule, error) {
	set, err := rulefile.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("rules.yaml: %w", err)
	}
	return set.Rules, nil
}

// report is what the engine says about one draft.
type report struct {
	Draft    draft
	Statuses map[string]streamrules.Status // rule -> its verdict on the draft
	Fixed    string                        // the repaired draft, when the fixes repaired it
	Diff     []streamrules.Change
	Firings  []streamrules.Firing
	Discard  bool // a violation no fix repairs: an agent would replay the tour
}

func judge(ctx context.Context, rules []streamrules.Rule, drafts []draft) ([]report, error) {
	judges := make([]*streamrules.Judge, len(rules))
	for i, r := range rules {
		j, err := streamrules.NewJudge(r)
		if err != nil {
			return nil, err
		}
		judges[i] = j
	}
	store, err := streamrules.NewMemoryStore(rules)
	if err != nil {
		return nil, err
	}
	eng, err := streamrules.New(ctx, store, &streamrules.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	out := make([]report, len(drafts))
	for i, d := range drafts {
		rep := report{Draft: d, Statuses: map[string]streamrules.Status{}}
		// The judges and the move see the same context: the message, and no tool calls.
		facts := &streamrules.Facts{Input: d.Prompt, HasInput: true, HasTools: true}
		for k, j := range judges {
			rep.Statuses[rules[k].Name] = j.Check(d.Answer, facts).Status
		}
		_, move := eng.BeginMove(streamrules.WithInput(ctx, d.Prompt), fmt.Sprintf("draft-%d", i+1))
		v := move.CheckAnswer(ctx, d.Answer)
		rep.Fixed, rep.Discard, rep.Firings = v.Fixed, v.Discard, move.Firings()
		if v.Fixed != "" {
			rep.Diff = streamrules.Diff(d.Answer, v.Fixed)
		}
		if err := move.End(ctx, nil); err != nil {
			return nil, err
		}
		out[i] = rep
	}
	return out, nil
}

func run(ctx context.Context, w io.Writer) error {
	rules, err := parseRules(rulesYAML)
	if err != nil {
		return err
	}
	reports, err := judge(ctx, rules, drafts)
	if err != nil {
		return err
	}
	for i, rep := range reports {
		fmt.Fprintf(w, "draft %d, asked %q: %q\n", i+1, rep.Draft.Prompt, rep.Draft.Answer)
		for _, r := range rules {
			fmt.Fprintf(w, "  %-32s %-6s %s\n", r.Name, r.Severity, rep.Statuses[r.Name])
		}
		switch {
		case rep.Fixed != "":
			fmt.Fprintf(w, "  fixed in place, no model call: %q\n", rep.Fixed)
			for _, c := range rep.Diff {
				fmt.Fprintf(w, "    %s\n", c)
			}
		case rep.Discard:
			fmt.Fprintln(w, "  no fix: an agent would replay the tour")
		}
	}
	return nil
}

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, strings.TrimSpace(err.Error()))
		os.Exit(1)
	}
}
