package console_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
)

const xss = `<script>alert(1)</script>"><img src=x onerror=alert(2)>`

// Everything a rule, an answer or a firing can fill is shown as text: the payload never
// reaches a page raw, on any page that shows it.
func TestEscapesEverything(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		fx := newFixture(t, dsn, nil)
		ctx := context.Background()
		evil := streamrules.Rule{Name: "evil", Scope: "text", Condition: `<script>|onerror`, Text: xss, Explanation: xss, Hint: "h" + xss[:20], Severity: "high",
			Tests: &streamrules.RuleTests{
				Fires:  []streamrules.Example{{Text: "a " + xss, Input: ptr(xss), Tools: []streamrules.ToolRun{{Tool: "t" + xss[:20], OK: true}}}},
				Passes: []streamrules.Example{{Text: "b " + xss}}, // fails: the reason quotes the payload too
			}}
		if _, err := fx.store.CreateRule(ctx, evil); err != nil {
			t.Fatal(err)
		}
		recordFirings(t, fx.store, "chat"+xss, []time.Time{time.Now().UTC()},
			streamrules.Firing{Rule: "evil", Mode: streamrules.ModeRemind, Tool: "t" + xss, Outcome: streamrules.OutcomeComplied})
		c := fx.client(t)
		c.login()
		pages := map[string]string{}
		for _, p := range []string{"/console/", "/console/rules", "/console/rules/evil", "/console/firings", "/console/tests", "/console/try?rule=" + url.QueryEscape(xss)} {
			code, body := c.get(p)
			if code != http.StatusOK {
				t.Errorf("GET %s: %d", p, code)
			}
			pages[p] = body
		}
		resp, body := c.post("/console/try", "/console/try", url.Values{"rule": {"evil"}, "text": {"x " + xss + " y"}, "input": {xss}, "vars": {xss}})
		if resp.StatusCode != http.StatusOK {
			t.Errorf("try: %d", resp.StatusCode)
		}
		pages["try post"] = body
		// An edit refused shows the typed value back, escaped.
		form := editForm(t, fx, "evil")
		form.Set("condition", "("+xss)
		_, body = c.post("/console/rules/evil", "/console/rules/evil", form)
		pages["edit refused"] = body
		pages["backtest"] = upload(t, c, "t.jsonl", `{"chat":"c`+strings.ReplaceAll(xss, `"`, `\"`)+`","answer":"a `+strings.ReplaceAll(xss, `"`, `\"`)+`"}`+"\n")
		for p, body := range pages {
			if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
				t.Errorf("%s: the payload is in the page raw", p)
			}
		}
		contains(t, pages["/console/rules/evil"], "&lt;script&gt;alert(1)&lt;/script&gt;")
		contains(t, pages["try post"], "<mark>&lt;script&gt;</mark>")
		contains(t, pages["backtest"], "<mark>&lt;script&gt;</mark>")
		contains(t, pages["/console/firings"], "chat&lt;script&gt;")
		for _, p := range []string{"/console/tests", "/console/rules/evil"} {
			contains(t, pages[p], "a <mark>&lt;script&gt;</mark>alert(1)", "b <mark>&lt;script&gt;</mark>", "input: &lt;script&gt;alert(1)")
		}
	})
}

// upload posts a transcript to the backtest page and returns the page.
func upload(t *testing.T, c *client, name, content string) string {
	t.Helper()
	tok := c.csrf("/console/backtest")
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := mw.WriteField("csrf", tok); err != nil {
		t.Fatal(err)
	}
	fw, err := mw.CreateFormFile("transcript", name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	resp, err := c.hc.Post(c.fx.srv.URL+"/console/backtest", mw.FormDataContentType(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	_, body := read(t, resp)
	return body
}

func ptr[T any](v T) *T { return &v }
