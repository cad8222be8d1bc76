package main

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamrules/streamrules/console"
	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/internal/scripted"
)

// browser is a cookie-keeping client of the console serve runs; it does not follow
// redirects, so each answer's status is the console's.
type browser struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func newBrowser(t *testing.T, addr string) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, base: "http://" + addr, hc: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) get(path string) string {
	b.t.Helper()
	resp, err := b.hc.Get(b.base + path)
	if err != nil {
		b.t.Fatalf("GET %s: %v", path, err)
	}
	code, body := readAll(b.t, resp)
	if code != http.StatusOK {
		b.t.Fatalf("GET %s: %d\n%s", path, code, body)
	}
	return body
}

func (b *browser) post(path string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.hc.PostForm(b.base+path, form)
	if err != nil {
		b.t.Fatalf("POST %s: %v", path, err)
	}
	_, body := readAll(b.t, resp)
	return resp, body
}

func readAll(t *testing.T, resp *http.Response) (int, string) {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

var (
	csrfFieldRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`)
	inputRE     = regexp.MustCompile(`<input id="f-([a-z_]+)" name="[a-z_]+" value="([^"]*)">`)
	textareaRE  = regexp.MustCompile(`(?s)<textarea id="f-([a-z_]+)" name="[a-z_]+" rows="\d+"(?: class="code")?>(.*?)</textarea>`)
	checkedRE   = regexp.MustCompile(`<input type="checkbox" name="([a-z_]+)" checked>`)
)

// form reads the first form of the page at path as a browser would send it: its inputs,
// textareas and checked boxes, and its CSRF token.
func (b *browser) form(path string) url.Values {
	b.t.Helper()
	page := b.get(path)
	m := csrfFieldRE.FindStringSubmatch(page)
	if m == nil {
		b.t.Fatalf("no CSRF token on %s", path)
	}
	f := url.Values{"csrf": {m[1]}}
	for _, m := range inputRE.FindAllStringSubmatch(page, -1) {
		f.Set(m[1], html.UnescapeString(m[2]))
	}
	for _, m := range textareaRE.FindAllStringSubmatch(page, -1) {
		f.Set(m[1], html.UnescapeString(m[2]))
	}
	for _, m := range checkedRE.FindAllStringSubmatch(page, -1) {
		f.Set(m[1], "on")
	}
	return f
}

// login posts secret to the login form and returns the console's answer.
func (b *browser) login(secret string) (*http.Response, string) {
	b.t.Helper()
	f := b.form("/console/login")
	f.Set("password", secret)
	return b.post("/console/login", f)
}

// ruleShown is the rule as `rules show --json` reads it from the database.
func ruleShown(t *testing.T, environ map[string]string, name string) (condition string, enabled bool, updated string) {
	t.Helper()
	var r struct {
		Condition string `json:"condition"`
		Enabled   bool   `json:"enabled"`
		UpdatedAt string `json:"updated_at"`
	}
	out := must(t, cli(t, environ, "", "rules", "show", name, "--json")).stdout
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("rules show --json: %v\n%s", err, out)
	}
	return r.Condition, r.Enabled, r.UpdatedAt
}

// TestServeConsole: serve --console puts the console beside the gateway on one listener.
// The master logs in with a gateway key that may claim master, edits a rule's condition,
// and the gateway's next request is judged by the edited rule (discarded and replayed
// with the rule's text). A key without master is refused at login and cannot write; the
// console password still logs in, and its disable reaches the gateway too. On SQLite and
// PostgreSQL.
func TestServeConsole(t *testing.T) {
	t.Parallel()
	for name, env := range map[string]func(t *testing.T) map[string]string{
		"sqlite":   sqliteEnv,
		"postgres": func(t *testing.T) map[string]string { return map[string]string{"STREAMRULES_DSN": pgtest.DSN(t)} },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			serveConsole(t, env(t))
		})
	}
}

func serveConsole(t *testing.T, environ map[string]string) {
	up := openaitest.New(t,
		scripted.Reply{Text: "I like apples."}, // before the edit: nothing fires
		scripted.Reply{Text: "I like apples."}, // after it: the edited rule fires, the answer is replayed
		scripted.Reply{Text: "I like pears."},
		scripted.Reply{Text: "I like apples."}, // the rule disabled: passes again
	)
	must(t, cli(t, environ, "", "rules", "create", "--name", "no_fruit", "--scope", "text", "--mode", "interrupt",
		"--condition", `\bbananas?\b`, "--text", "Never name that fruit."))
	keys := writeTemp(t, "keys", "boss sk-boss master,telegram\nbot sk-bot telegram\n")
	environ["STREAMRULES_UPSTREAM_KEY"] = "sk-upstream"
	environ[console.EnvPassword] = "console pw"
	environ["STREAMRULES_CONSOLE"] = "true"
	addr, stderr := startServe(t, environ, "--upstream", up.URL+"/v1", "--keys", keys)
	if want := "console: http://" + addr + "/console/ (the master logs in with $" + console.EnvPassword + " or gateway keys that may claim master)"; !strings.Contains(stderr.String(), want) {
		t.Errorf("start message lacks %q:\n%s", want, stderr)
	}
	chat := func(n int) string {
		t.Helper()
		status, body := post(t, "http://"+addr+"/v1/chat/completions", "sk-bot", `{"model":"m","messages":[{"role":"user","content":"Which fruit?"}]}`,
			"X-Streamrules-Chat: c"+string(rune('0'+n)))
		if status != http.StatusOK {
			t.Fatalf("chat %d: %d %s", n, status, body)
		}
		var resp struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(body), &resp); err != nil || len(resp.Choices) != 1 {
			t.Fatalf("chat %d: %v\n%s", n, err, body)
		}
		return resp.Choices[0].Message.Content
	}
	if got := chat(1); got != "I like apples." || len(up.Requests()) != 1 {
		t.Fatalf("before the edit: %q after %d upstream calls", got, len(up.Requests()))
	}

	// A client key may claim telegram, not master: refused at login, and its posts too.
	bot := newBrowser(t, addr)
	resp, body := bot.login("sk-bot")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "a non-master key cannot edit") {
		t.Fatalf("login with the bot's key: %d\n%s", resp.StatusCode, body)
	}
	cond0, _, updated0 := ruleShown(t, environ, "no_fruit")
	f := bot.form("/console/rules/no_fruit")
	f.Set("condition", `\bapples?\b`)
	if resp, _ := bot.post("/console/rules/no_fruit", f); resp.StatusCode != http.StatusForbidden {
		t.Errorf("edit by the bot's key: %d, want 403", resp.StatusCode)
	}
	if resp, _ := bot.post("/console/rules/no_fruit/state", url.Values{"csrf": f["csrf"], "action": {"disable"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("disable by the bot's key: %d, want 403", resp.StatusCode)
	}
	if cond, enabled, updated := ruleShown(t, environ, "no_fruit"); cond != cond0 || !enabled || updated != updated0 {
		t.Fatalf("after the bot's posts the database holds %q, enabled %v, updated %s", cond, enabled, updated)
	}

	// The master's key logs in and edits the condition; the store holds it at once.
	boss := newBrowser(t, addr)
	if resp, body := boss.login("sk-boss"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login with the master's key: %d\n%s", resp.StatusCode, body)
	}
	f = boss.form("/console/rules/no_fruit")
	if f.Get("condition") != `\bbananas?\b` || f.Get("text") != "Never name that fruit." {
		t.Fatalf("the edit form reads condition %q, text %q", f.Get("condition"), f.Get("text"))
	}
	f.Set("condition", `\bapples?\b`)
	if resp, body := boss.post("/console/rules/no_fruit", f); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("edit: %d\n%s", resp.StatusCode, body)
	}
	if cond, _, _ := ruleShown(t, environ, "no_fruit"); cond != `\bapples?\b` {
		t.Fatalf("stored condition %q", cond)
	}
	// The gateway's next request: the first answer names apples, is discarded unseen, and
	// the replay is told the rule's text.
	if got := chat(2); got != "I like pears." {
		t.Fatalf("after the edit the client got %q", got)
	}
	reqs := up.Requests()
	if len(reqs) != 3 {
		t.Fatalf("after the edit: %d upstream calls, want 3 (the first, then the discarded one and its replay)", len(reqs))
	}
	if !strings.Contains(string(reqs[2].Raw), "Never name that fruit.") {
		t.Errorf("the replay was not told the rule:\n%s", reqs[2].Raw)
	}
	if !strings.Contains(stderr.String(), `msg="console: rule changed" rule=no_fruit by="key boss"`) {
		t.Errorf("the edit is not logged with the key's name:\n%s", stderr)
	}

	// The password still logs in; its disable reaches the gateway as the edit did.
	pw := newBrowser(t, addr)
	if resp, body := pw.login("console pw"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login with the password: %d\n%s", resp.StatusCode, body)
	}
	f = pw.form("/console/rules/no_fruit")
	if resp, body := pw.post("/console/rules/no_fruit/state", url.Values{"csrf": f["csrf"], "action": {"disable"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("disable: %d\n%s", resp.StatusCode, body)
	}
	if got := chat(3); got != "I like apples." || len(up.Requests()) != 4 {
		t.Fatalf("disabled: %q after %d upstream calls, want one call", got, len(up.Requests()))
	}
	for _, secret := range []string{"sk-boss", "sk-bot", "console pw", "sk-upstream"} {
		if strings.Contains(stderr.String(), secret) {
			t.Errorf("the log holds the secret %q", secret)
		}
	}
}

// serve --console refuses a non-loopback address when nobody could log in: no password,
// and no gateway key that may claim master.
func TestServeConsoleRefusesOpenAddress(t *testing.T) {
	t.Parallel()
	environ := sqliteEnv(t)
	environ["STREAMRULES_UPSTREAM_KEY"] = "sk-upstream"
	keys := writeTemp(t, "keys", "bot sk-bot telegram,client_ops\n")
	r := cli(t, environ, "", "serve", "--console", "--listen", "0.0.0.0:0", "--upstream", "http://127.0.0.1:1/v1", "--keys", keys)
	if r.code != 2 || !strings.Contains(r.stderr, console.EnvPassword) || !strings.Contains(r.stderr, "no gateway key may claim master") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}
