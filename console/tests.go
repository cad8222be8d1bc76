package console

import (
	"context"
	"net/http"
	"strings"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/ruletest"
)

// testRow is one example of a rule's tests as the Tests section shows it: what it
// expects, the judge's verdict, and the text cut around the matched span.
type testRow struct {
	ruletest.Result
	Field                string // tests.fires[1]
	Input                string // the example's input, when it gives one
	HasInput             bool
	Tools                []string // its tool record, as "tool ok" / "tool failed"
	Before, Match, After string
	HasSpan              bool
}

// ruleTests is one rule's tests, run.
type ruleTests struct {
	Rule   string
	Err    string // why the judge refused the rule
	Rows   []testRow
	Failed int
}

// runTests runs a rule's tests with the engine's environments, as the rule page and
// the Tests page show them.
func (h *Handler) runTests(ru streamrules.Rule) ruleTests {
	rep := ruletest.RunRule(ru, h.knownEnvironments()...)
	return testsOf(ru, rep)
}

func testsOf(ru streamrules.Rule, rep ruletest.RuleReport) ruleTests {
	out := ruleTests{Rule: rep.Rule}
	if rep.Err != nil {
		out.Err = rep.Err.Error()
	}
	tool := strings.HasPrefix(strings.TrimSpace(ru.Scope), streamrules.ScopeToolPrefix)
	for _, res := range rep.Results {
		row := testRow{Result: res, Field: res.Field(), Before: res.Example.Text}
		if res.Example.Input != nil {
			row.Input, row.HasInput = *res.Example.Input, true
		}
		for _, t := range res.Example.Tools {
			s := t.Tool + " ok"
			if !t.OK {
				s = t.Tool + " failed"
			}
			row.Tools = append(row.Tools, s)
		}
		// The span is in the text the judge read: a tool rule's compacted arguments.
		target := res.Example.Text
		if tool {
			target = streamrules.CompactArgs(target)
		}
		if s := res.Span; s != nil && res.Status == streamrules.StatusViolation && s.Start >= 0 && s.Start <= s.End && s.End <= len(target) {
			row.HasSpan = true
			row.Before, row.Match, row.After = target[:s.Start], target[s.Start:s.End], target[s.End:]
		}
		if !res.OK {
			out.Failed++
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

type testsData struct {
	Rules    []ruleTests // the rules with tests, those failing first
	Total    int         // every rule
	Examples int
	Failed   int
	Untested int
	Only     string // "failed": show only the rules with a failing example
	Tested   int    // rules with tests
	Matched  int    // rules listed, over every page
	Failing  int    // rules with a failing example (or that the judge refused)

	Page, Pages int
	PageQuery   string
}

// testsPage runs every rule's tests: the report is kept per rules version, as the
// rules are, so the page costs one run per change.
func (h *Handler) testsPage(w http.ResponseWriter, r *http.Request) {
	d, err := h.cache.testReport(r.Context(), h.knownEnvironments())
	if err != nil {
		h.storeFailed(w, r, err)
		return
	}
	if r.URL.Query().Get("only") == "failed" {
		d.Only = "failed"
		var failing []ruleTests
		for _, rt := range d.Rules {
			if rt.Failed > 0 || rt.Err != "" {
				failing = append(failing, rt)
			}
		}
		d.Rules = failing
	}
	// A page of PageRows rules: 10,000 rules' examples would be a page nobody reads, and
	// a third of a second to draw.
	var lo, hi int
	d.Matched = len(d.Rules)
	d.Page, d.Pages, lo, hi = paginate(r, len(d.Rules), h.cfg.PageRows)
	d.Rules = d.Rules[lo:hi]
	if d.Only != "" {
		d.PageQuery = "only=" + d.Only
	}
	h.render(w, r, http.StatusOK, "tests", d)
}

// testReport returns the tests of every rule, run for the store's current rules
// version. Shared: read only.
func (c *cache) testReport(ctx context.Context, envs []string) (testsData, error) {
	v, err := c.store.RulesVersion(ctx)
	if err != nil {
		return testsData{}, err
	}
	c.mu.Lock()
	if c.haveTests && c.testsVersion == v {
		d := c.tests
		c.mu.Unlock()
		return d, nil
	}
	c.mu.Unlock()
	rules, err := c.listRules(ctx)
	if err != nil {
		return testsData{}, err
	}
	d := testsData{Total: len(rules)}
	var failing, passing []ruleTests
	for _, ru := range rules {
		if ru.Tests == nil || len(ru.Tests.Fires)+len(ru.Tests.Passes) == 0 {
			d.Untested++
			continue
		}
		rt := testsOf(ru, ruletest.RunRule(ru, envs...))
		d.Examples += len(rt.Rows)
		d.Failed += rt.Failed
		if rt.Failed > 0 || rt.Err != "" {
			failing = append(failing, rt)
		} else {
			passing = append(passing, rt)
		}
	}
	d.Rules = append(failing, passing...)
	d.Tested, d.Failing = len(d.Rules), len(failing)
	c.mu.Lock()
	c.tests, c.testsVersion, c.haveTests = d, v, true
	c.mu.Unlock()
	return d, nil
}
