package console_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/console"
)

// The Tests page and the rule page run a rule's examples through the engine's judge and
// show each: what it expects, the verdict, ok or failing with the reason, the match
// marked. The edit form edits them, with an example's error at the tests field.
func TestTestsPage(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		fx := newFixture(t, dsn, nil)
		ctx := context.Background()
		ru, err := fx.store.GetRule(ctx, "no_shouting")
		if err != nil {
			t.Fatal(err)
		}
		ru.Tests = &streamrules.RuleTests{
			Fires:  []streamrules.Example{{Text: "Wow!! Great."}},
			Passes: []streamrules.Example{{Text: "Fine."}, {Text: "Oh!!! no"}}, // the second fires: a failing example
		}
		if _, err := fx.store.UpdateRule(ctx, "no_shouting", ru); err != nil {
			t.Fatal(err)
		}
		c := fx.client(t)
		c.login()
		row := func(body, field string) string {
			m := regexp.MustCompile(`(?s)<tr class="(t-ok|t-fail)" data-field="` + regexp.QuoteMeta(field) + `">(.*?)</tr>`).FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("no row for %s", field)
			}
			return m[1] + " " + m[2]
		}
		code, body := c.get("/console/tests")
		if code != http.StatusOK {
			t.Fatalf("tests page: %d", code)
		}
		contains(t, body, "3 examples over 1 rule:", "1 failed", "3 of 4 rules have no tests")
		for _, tt := range []struct{ field, want string }{
			{"tests.fires[0]", `t-ok`},
			{"tests.passes[0]", `t-ok`},
			{"tests.passes[1]", `t-fail`},
		} {
			if r := row(body, tt.field); !strings.HasPrefix(r, tt.want) {
				t.Errorf("%s: %s, want %s", tt.field, r, tt.want)
			}
		}
		failing := row(body, "tests.passes[1]")
		contains(t, failing, "passes", `s-violation`, "FAIL", "must pass, but it fires", "Oh<mark>!!</mark>")
		contains(t, row(body, "tests.fires[0]"), "fires", "s-violation", "Wow<mark>!!</mark> Great.")
		contains(t, row(body, "tests.passes[0]"), "s-pass", "Fine.")
		_, only := c.get("/console/tests?only=failed")
		contains(t, only, `id="tests-no_shouting"`)

		// The rule's own page shows the same, and a rule without tests says so.
		_, page := c.get("/console/rules/no_shouting")
		contains(t, page, `id="tests-failed">1 failed`, "must pass, but it fires", `name="tests"`)
		_, page = c.get("/console/rules/no_apologies")
		contains(t, page, `id="no-tests"`)

		// An example the engine refuses: its error at the tests field, named by its path.
		form := editForm(t, fx, "no_shouting")
		form.Set("tests", `{"fires": ["a!!", "b!!", "`+strings.Repeat("x", streamrules.MaxExampleBytes+1)+`"]}`)
		resp, body := c.post("/console/rules/no_shouting", "/console/rules/no_shouting", form)
		if resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("long example: %d", resp.StatusCode)
		}
		contains(t, body, `<p class="field-error" id="err-tests">tests.fires[2].text: `)
		// A key the tests do not have: refused by the rule file's shape, at the field.
		form.Set("tests", `{"fire": ["a!!"]}`)
		resp, body = c.post("/console/rules/no_shouting", "/console/rules/no_shouting", form)
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `id="err-tests"`) {
			t.Errorf("unknown key: %d, error at the field: %v", resp.StatusCode, strings.Contains(body, `id="err-tests"`))
		}
		// A good edit is stored, and the Tests page follows at once.
		form.Set("tests", `{"fires": ["Wow!! Great."], "passes": ["Fine.", "Oh! no"]}`)
		resp, body = c.post("/console/rules/no_shouting", "/console/rules/no_shouting", form)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("edit: %d %s", resp.StatusCode, body)
		}
		got, err := fx.store.GetRule(ctx, "no_shouting")
		if err != nil {
			t.Fatal(err)
		}
		if got.Tests == nil || len(got.Tests.Passes) != 2 || got.Tests.Passes[1].Text != "Oh! no" {
			t.Fatalf("stored tests: %+v", got.Tests)
		}
		_, body = c.get("/console/tests")
		contains(t, body, "3 examples over 1 rule:", "0 failed")
		if strings.Contains(body, "t-fail") {
			t.Error("a failing row after the fix")
		}
	})
}

// The Tests page shows PageRows rules a page, failing ones first, with the totals over
// every rule.
func TestTestsPagePaged(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		fx := newFixture(t, dsn, &console.Config{Password: testPassword, PageRows: 1})
		ctx := context.Background()
		for name, pass := range map[string]string{"no_shouting": "Fine.", "no_apologies": "So sorry."} {
			ru, err := fx.store.GetRule(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			ru.Tests = &streamrules.RuleTests{Passes: []streamrules.Example{{Text: pass}}}
			if _, err := fx.store.UpdateRule(ctx, name, ru); err != nil {
				t.Fatal(err)
			}
		}
		c := fx.client(t)
		_, p1 := c.get("/console/tests")
		contains(t, p1, "2 examples over 2 rules:", "1 failed", "only the 1 failing", "Page 1 of 2 (2 rules)", `id="tests-no_apologies"`)
		_, p2 := c.get("/console/tests?page=2")
		contains(t, p2, `id="tests-no_shouting"`, "Page 2 of 2")
		if strings.Contains(p2, `id="tests-no_apologies"`) {
			t.Error("page 2 repeats page 1's rule")
		}
		_, only := c.get("/console/tests?only=failed")
		contains(t, only, `id="tests-no_apologies"`, "showing the 1 failing")
		if strings.Contains(only, `id="tests-no_shouting"`) {
			t.Error("only=failed lists a passing rule")
		}
	})
}
