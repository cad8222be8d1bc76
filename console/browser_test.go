package console_test

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/console"
)

var screenshots = flag.Bool("screenshots", false, "write the browser tests' screenshots to docs/console/")

// browser starts Debian's chromium headless and returns a context for a new tab. Without
// chromium the test is skipped, loudly, and fails under CI=true, as pgtest does.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed, and CI=true: the browser tests must run (apt-get install chromium)")
		}
		t.Skip("SKIPPING the browser tests: chromium is not installed (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // root in a container has no user namespaces for the sandbox
		chromedp.DisableGPU,
		chromedp.WindowSize(1200, 860),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	bctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	// The first call starts the browser, which lives as long as its context: that one
	// has no deadline; the actions after it do.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancelTime := context.WithTimeout(bctx, 5*time.Minute)
	t.Cleanup(cancelTime)
	return ctx
}

// shot saves the viewport as docs/console/NAME.png when -screenshots is given.
func shot(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if !*screenshots {
			return nil
		}
		png, err := chromedp.CaptureScreenshot()(ctx, t)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join("..", "docs", "console", name+".png"), png, 0o644)
	})
}

// into runs a and keeps its value in dst: a step of chromedp.Do that reads the page.
func into[T any](a chromedp.Action[T], dst *T) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		v, err := a(ctx, t)
		*dst = v
		return chromedp.Void{}, err
	}
}

// Each page in a real browser: log in, do the page's main task, read the DOM.
func TestBrowser(t *testing.T) {
	ctx := browser(t)
	fx := newFixture(t, backends[0].dsn(t), nil)
	now := time.Now().UTC()
	var at []time.Time
	for d := range 30 {
		for range (d*7)%11 + d%3 {
			at = append(at, now.AddDate(0, 0, -d))
		}
	}
	recordFirings(t, fx.store, "tg-7", at, streamrules.Firing{Rule: "local_shell", Mode: streamrules.ModeRemind, Tool: "shell",
		Outcome: streamrules.OutcomeComplied, Delivery: streamrules.DeliveryFull})
	recordFirings(t, fx.store, "tg-8", at[:len(at)/3], streamrules.Firing{Rule: "no_apologies", Mode: streamrules.ModeInterrupt,
		Retry: true, Outcome: streamrules.OutcomeCorrected})
	recordFirings(t, fx.store, "tg-9", at[:len(at)/8], streamrules.Firing{Rule: "no_apologies", Mode: streamrules.ModeInterrupt,
		Retry: true, Outcome: streamrules.OutcomeMissedAgain})
	base := fx.srv.URL

	t.Run("login and overview", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var who, outcomes, bg string
		var rows int
		err := chromedp.Do(ctx,
			chromedp.Navigate(base+"/console/login"),
			chromedp.SendKeys(chromedp.ID("password"), testPassword),
			chromedp.Click(chromedp.ID("login")),
			chromedp.WaitVisible(chromedp.ID("outcomes")),
			into(chromedp.Text(chromedp.CSS(".who")), &who),
			into(chromedp.Text(chromedp.ID("outcomes")), &outcomes),
			into(chromedp.Evaluate[int](`document.querySelectorAll("#daily svg.spark").length`), &rows),
			// The stylesheet loaded under the CSP: the header is dark.
			into(chromedp.Evaluate[string](`getComputedStyle(document.querySelector("header")).backgroundColor`), &bg),
			shot("overview"),
		)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(who, "master") || !strings.Contains(outcomes, "complied") || !strings.Contains(outcomes, "missed_again") {
			t.Errorf("who %q, outcomes %q", who, outcomes)
		}
		if rows != 2 || bg != "rgb(23, 32, 43)" {
			t.Errorf("%d charts (want 2), header background %q", rows, bg)
		}
	})

	t.Run("rules list filter", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var names []string
		err := chromedp.Do(ctx,
			chromedp.Navigate(base+"/console/rules"),
			chromedp.SetValue(chromedp.ID("scope"), "tool:"),
			chromedp.Click(chromedp.ID("filter")),
			chromedp.WaitReady(chromedp.CSS(`#scope option[value="tool:"][selected]`)),
			into(chromedp.Evaluate[[]string](`[...document.querySelectorAll("#rules tbody td:first-child a")].map(a => a.textContent)`), &names),
			chromedp.Navigate(base+"/console/rules"),
			shot("rules"),
		)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(names, ",") != "local_shell,no_rm_rf" {
			t.Errorf("tool rules: %v", names)
		}
	})

	t.Run("edit shows the field error", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var msg string
		var invalid bool
		err := chromedp.Do(ctx,
			chromedp.Navigate(base+"/console/rules/no_apologies"),
			chromedp.SetValue(chromedp.ID("f-condition"), "(unclosed"),
			chromedp.Click(chromedp.ID("save")),
			chromedp.WaitVisible(chromedp.ID("err-condition")),
			into(chromedp.Text(chromedp.ID("err-condition")), &msg),
			into(chromedp.Evaluate[bool](`document.querySelector("#f-condition").closest(".field").classList.contains("invalid")`), &invalid),
			chromedp.ScrollIntoView(chromedp.ID("err-condition")),
			shot("rule-edit-error"),
		)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(msg, "missing closing )") || !invalid {
			t.Errorf("field error %q, marked %v", msg, invalid)
		}
		r, err := fx.store.GetRule(context.Background(), "no_apologies")
		if err != nil || r.Condition != `(?i)\bsorry\b` {
			t.Errorf("stored condition %q (%v)", r.Condition, err)
		}
		// A good edit is saved, and the page says so.
		var saved, text string
		err = chromedp.Do(ctx,
			chromedp.SetValue(chromedp.ID("f-condition"), `(?i)\b(sorry|apologi[sz]e)\b`),
			chromedp.Click(chromedp.ID("save")),
			chromedp.WaitVisible(chromedp.ID("saved")),
			into(chromedp.Text(chromedp.ID("saved")), &saved),
			into(chromedp.Text(chromedp.ID("field-condition")), &text),
			shot("rule"),
		)
		if err != nil {
			t.Fatal(err)
		}
		if saved != "Saved." || text != `(?i)\b(sorry|apologi[sz]e)\b` {
			t.Errorf("saved %q, condition %q", saved, text)
		}
	})

	t.Run("try highlights the match", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var status, mark, fixed string
		err := chromedp.Do(ctx,
			chromedp.Navigate(base+"/console/try"),
			chromedp.SetValue(chromedp.ID("rule"), "no_apologies"),
			chromedp.SetValue(chromedp.ID("text"), "I apologise: the build failed twice."),
			chromedp.Click(chromedp.CSS(`input[name="env"][value="telegram"]`)),
			chromedp.Click(chromedp.ID("judge")),
			chromedp.WaitVisible(chromedp.CSS("#highlight mark")),
			into(chromedp.Text(chromedp.ID("status")), &status),
			into(chromedp.Text(chromedp.CSS("#highlight mark")), &mark),
			chromedp.ScrollIntoView(chromedp.ID("verdict")),
			shot("try"),
			chromedp.SetValue(chromedp.ID("rule"), "no_shouting"),
			chromedp.SetValue(chromedp.ID("text"), "Deployed!!!\nAll green."),
			chromedp.Click(chromedp.ID("judge")),
			chromedp.WaitVisible(chromedp.ID("diff")),
			into(chromedp.Text(chromedp.ID("fixed")), &fixed),
			chromedp.ScrollIntoView(chromedp.ID("verdict")),
			shot("try-fix"),
		)
		if err != nil {
			t.Fatal(err)
		}
		if status != "violation" || mark != "apologise" || fixed != "Deployed!\nAll green." {
			t.Errorf("status %q, mark %q, fixed %q", status, mark, fixed)
		}
	})

	t.Run("backtest counts", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		path := filepath.Join(t.TempDir(), "week.jsonl")
		jsonl := `{"chat":"tg-1","env":["telegram"],"answer":"So sorry, the deploy failed."}
{"chat":"tg-1","env":["telegram"],"answer":"It works now."}
{"chat":"dev","tools":[{"name":"shell","args":"{\"cmd\":\"rm -rf build\"}"}],"answer":"Cleaned!!"}
`
		if err := os.WriteFile(path, []byte(jsonl), 0o600); err != nil {
			t.Fatal(err)
		}
		var fired, inScope, mark string
		err := chromedp.Do(ctx,
			chromedp.Navigate(base+"/console/backtest"),
			chromedp.SetUploadFiles(chromedp.ID("transcript"), []string{path}),
			chromedp.Click(chromedp.ID("run")),
			chromedp.WaitVisible(chromedp.ID("results")),
			into(chromedp.Text(chromedp.CSS(`tr[data-rule="no_apologies"] .fired`)), &fired),
			into(chromedp.Text(chromedp.CSS(`tr[data-rule="no_apologies"] .inscope`)), &inScope),
			into(chromedp.Text(chromedp.CSS(`tr[data-rule="no_apologies"] mark`)), &mark),
			shot("backtest"),
		)
		if err != nil {
			t.Fatal(err)
		}
		if fired != "1" || inScope != "2" || mark != "sorry" {
			t.Errorf("no_apologies: fired %q in scope %q mark %q", fired, inScope, mark)
		}
	})

	t.Run("tests page names the failing example", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		ru, err := fx.store.GetRule(context.Background(), "no_shouting")
		if err != nil {
			t.Fatal(err)
		}
		ru.Tests = &streamrules.RuleTests{
			Fires:  []streamrules.Example{{Text: "Deployed!! All green."}, {Text: "Wow!!!"}},
			Passes: []streamrules.Example{{Text: "Deployed! All green."}, {Text: "Build failed!! Retrying."}},
		}
		if _, err := fx.store.UpdateRule(context.Background(), "no_shouting", ru); err != nil {
			t.Fatal(err)
		}
		var field, reason, mark, summary string
		var failing int
		err = chromedp.Do(ctx,
			chromedp.Navigate(base+"/console/tests"),
			chromedp.WaitVisible(chromedp.CSS("tr.t-fail")),
			into(chromedp.Text(chromedp.ID("tests-summary")), &summary),
			into(chromedp.Evaluate[int](`document.querySelectorAll("tr.t-fail").length`), &failing),
			into(chromedp.Evaluate[string](`document.querySelector("tr.t-fail").dataset.field`), &field),
			into(chromedp.Text(chromedp.CSS("tr.t-fail .reason")), &reason),
			into(chromedp.Text(chromedp.CSS("tr.t-fail mark")), &mark),
			shot("tests"),
		)
		if err != nil {
			t.Fatal(err)
		}
		if failing != 1 || field != "tests.passes[1]" || !strings.Contains(reason, "must pass, but it fires") || mark != "!!" ||
			!strings.Contains(summary, "1 failed") {
			t.Errorf("%d failing, first %q: %q, mark %q; summary %q", failing, field, reason, mark, summary)
		}
	})

	t.Run("firings", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var n int
		var first string
		err := chromedp.Do(ctx,
			chromedp.Navigate(base+"/console/firings"),
			chromedp.WaitVisible(chromedp.ID("firings")),
			into(chromedp.Evaluate[int](`document.querySelectorAll("#firings tbody tr").length`), &n),
			into(chromedp.Text(chromedp.CSS("#firings tbody tr:first-child td:nth-child(4)")), &first),
			shot("firings"),
		)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 || !strings.Contains(first, "local_shell") && !strings.Contains(first, "no_apologies") {
			t.Errorf("%d rows, first rule %q", n, first)
		}
	})
}

// Logging in with a gateway key in a real browser: a client key is refused at the form,
// the master's key logs in and the header names it.
func TestBrowserKeys(t *testing.T) {
	ctx := browser(t)
	fx := newFixture(t, backends[0].dsn(t), &console.Config{Keys: testKeys(t)})
	base := fx.srv.URL
	var refused, who string
	var editable bool
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/console/login?next=/console/rules/no_apologies"),
		chromedp.SendKeys(chromedp.ID("password"), "sk-bot"),
		chromedp.Click(chromedp.ID("login")),
		chromedp.WaitVisible(chromedp.ID("login-error")),
		into(chromedp.Text(chromedp.ID("login-error")), &refused),
		shot("login-non-master-key"),
		chromedp.SendKeys(chromedp.ID("password"), "sk-boss"),
		chromedp.Click(chromedp.ID("login")),
		chromedp.WaitVisible(chromedp.ID("save")),
		into(chromedp.Text(chromedp.CSS(".who")), &who),
		shot("login-master-key"),
		into(chromedp.Evaluate[bool](`!document.querySelector("#edit fieldset").disabled`), &editable),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(refused, "a non-master key cannot edit") {
		t.Errorf("the bot's key: %q", refused)
	}
	if !strings.Contains(who, "master") || !strings.Contains(who, "key boss") || !editable {
		t.Errorf("after the master's key: header %q, form editable %v", who, editable)
	}
}
