package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
)

// An edit goes the master's way: the store holds it, updated_at moves, and an invalid
// value comes back at its field with the engine's message, nothing stored.
func TestRuleEdit(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		fx := newFixture(t, dsn, nil)
		ctx := context.Background()
		c := fx.client(t)
		c.login()
		before, err := fx.store.GetRule(ctx, "no_apologies")
		if err != nil {
			t.Fatal(err)
		}
		form := editForm(t, fx, "no_apologies")
		form.Set("text", "Never apologise to the user.")
		form.Set("when", "telegram, client_ops")
		resp, body := c.post("/console/rules/no_apologies", "/console/rules/no_apologies", form)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("edit: %d\n%s", resp.StatusCode, body)
		}
		after, err := fx.store.GetRule(ctx, "no_apologies")
		if err != nil {
			t.Fatal(err)
		}
		if after.Text != "Never apologise to the user." || strings.Join(after.When, ",") != "client_ops,telegram" {
			t.Errorf("stored %q when %v", after.Text, after.When)
		}
		if after.Condition != before.Condition || !after.UpdatedAt.After(before.UpdatedAt) {
			t.Errorf("condition %q→%q, updated_at %v→%v: want the condition kept and updated_at moved", before.Condition, after.Condition, before.UpdatedAt, after.UpdatedAt)
		}

		// A reminder made to interrupt is a gate.
		form = editForm(t, fx, "local_shell")
		form.Set("mode", "interrupt")
		if resp, body := c.post("/console/rules/local_shell", "/console/rules/local_shell", form); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("mode edit: %d\n%s", resp.StatusCode, body)
		}
		if r, err := fx.store.GetRule(ctx, "local_shell"); err != nil || r.Mode != streamrules.ModeInterrupt {
			t.Errorf("local_shell mode %q (%v)", r.Mode, err)
		}
		_, page := c.get("/console/rules/local_shell")
		contains(t, page, `<span class="mode m-gate">gate</span>`)

		tests := []struct {
			name, field, value, want string
		}{
			{"bad regex", "condition", "(unclosed", "err-condition"},
			{"unknown env", "when", "telegram, narnia", "err-when"},
			{"bad repeat", "repeat", "sometimes", "err-repeat"},
			{"bad severity", "severity", "extreme", "err-severity"},
			{"predicate not JSON", "predicate", "{nope", "err-predicate"},
			{"empty text", "text", "", "err-text"},
			{"bad mode", "mode", "loudly", "err-mode"},
		}
		for _, tt := range tests {
			form := editForm(t, fx, "no_apologies")
			form.Set(tt.field, tt.value)
			resp, body := c.post("/console/rules/no_apologies", "/console/rules/no_apologies", form)
			if resp.StatusCode != http.StatusUnprocessableEntity {
				t.Errorf("%s: %d, want 422", tt.name, resp.StatusCode)
			}
			if !strings.Contains(body, `id="`+tt.want+`"`) {
				t.Errorf("%s: no error at the field (%s)\n%s", tt.name, tt.want, body)
			}
			got, err := fx.store.GetRule(ctx, "no_apologies")
			if err != nil {
				t.Fatal(err)
			}
			if !got.UpdatedAt.Equal(after.UpdatedAt) {
				t.Errorf("%s: the store changed", tt.name)
			}
		}
	})
}

// editForm is the rule page's form as a browser would send it unchanged.
func editForm(t *testing.T, fx *fixture, name string) url.Values {
	t.Helper()
	r, err := fx.store.GetRule(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	f := url.Values{"scope": {r.Scope}, "mode": {string(r.Mode)}, "condition": {r.Condition}, "text": {r.Text}, "when": {strings.Join(r.When, ", ")},
		"repeat": {r.Repeat}, "field": {r.Field}, "severity": {r.Severity}, "explanation": {r.Explanation}, "hint": {r.Hint},
		"delivery": {string(r.Delivery)}}
	if r.Negate {
		f.Set("negate", "on")
	}
	if r.Fix != nil {
		f.Set("fix", `{"replace_regex":{"pattern":"!!+","with":"!"}}`)
	}
	if r.Tests != nil {
		b, err := json.Marshal(r.Tests)
		if err != nil {
			t.Fatal(err)
		}
		f.Set("tests", string(b))
	}
	return f
}

func TestRuleState(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		fx := newFixture(t, dsn, nil)
		ctx := context.Background()
		c := fx.client(t)
		c.login()
		for _, tt := range []struct {
			action           string
			disabled, shadow bool
		}{{"disable", true, false}, {"shadow", true, true}, {"enable", false, true}, {"enforce", false, false}} {
			resp, body := c.post("/console/rules/local_shell", "/console/rules/local_shell/state", url.Values{"action": {tt.action}})
			if resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("%s: %d\n%s", tt.action, resp.StatusCode, body)
			}
			r, err := fx.store.GetRule(ctx, "local_shell")
			if err != nil {
				t.Fatal(err)
			}
			if r.Disabled != tt.disabled || r.Shadow != tt.shadow {
				t.Errorf("after %s: disabled %v shadow %v, want %v %v", tt.action, r.Disabled, r.Shadow, tt.disabled, tt.shadow)
			}
		}
		_, body := c.get("/console/rules/local_shell?saved=enforce")
		contains(t, body, `id="saved"`, `id="disable"`, `id="shadow"`)
	})
}

// The security list: no session no write, a forged or missing token refused, a foreign
// Origin refused, logins limited.
func TestWritesNeedSessionAndToken(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		fx := newFixture(t, dsn, nil)
		ctx := context.Background()
		anon := fx.client(t)
		master := fx.client(t)
		master.login()
		tok := master.csrf("/console/rules/local_shell")
		tests := []struct {
			name string
			c    *client
			form url.Values
			hdr  map[string]string
		}{
			{"no session", anon, url.Values{"action": {"disable"}, "csrf": {anon.csrf("/console/try")}}, nil},
			{"no token", master, url.Values{"action": {"disable"}, "csrf": {"x"}}, nil},
			{"another token", master, url.Values{"action": {"disable"}, "csrf": {strings.Repeat("ab", 32)}}, nil},
			{"foreign origin", master, url.Values{"action": {"disable"}, "csrf": {tok}}, map[string]string{"Origin": "https://evil.example"}},
		}
		for _, tt := range tests {
			req, err := http.NewRequest(http.MethodPost, fx.srv.URL+"/console/rules/local_shell/state", strings.NewReader(tt.form.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for k, v := range tt.hdr {
				req.Header.Set(k, v)
			}
			resp, err := tt.c.hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			code, _ := read(t, resp)
			if code != http.StatusForbidden {
				t.Errorf("%s: %d, want 403", tt.name, code)
			}
			if r, err := fx.store.GetRule(ctx, "local_shell"); err != nil || r.Disabled {
				t.Errorf("%s: the rule was disabled (%v)", tt.name, err)
			}
		}
		// Without a session the edit form is there to read, disabled.
		_, body := anon.get("/console/rules/local_shell")
		contains(t, body, "<fieldset disabled>", "Log in</a> as the master")
		// Logged out, the session is gone.
		master.post("/console/try", "/console/logout", url.Values{})
		resp, _ := master.post("/console/rules/local_shell", "/console/rules/local_shell/state", url.Values{"action": {"disable"}})
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("after logout: %d, want 403", resp.StatusCode)
		}
	})
}

func TestLoginRateLimit(t *testing.T) {
	fx := newFixture(t, backends[0].dsn(t), nil)
	c := fx.client(t)
	for i := range 5 {
		resp, body := c.post("/console/login", "/console/login", url.Values{"password": {"guess"}})
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "Wrong password.") {
			t.Fatalf("attempt %d: %d", i+1, resp.StatusCode)
		}
	}
	// The right password is refused too, until the window is over.
	resp, body := c.post("/console/login", "/console/login", url.Values{"password": {testPassword}})
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("sixth attempt: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	contains(t, body, "Too many failed attempts")
	if resp.Cookies() != nil {
		for _, ck := range resp.Cookies() {
			if ck.Name == "streamrules_console_session" {
				t.Error("a session was issued past the limit")
			}
		}
	}
}

// The cookies are HttpOnly and SameSite=Strict; every page carries the CSP.
func TestCookiesAndHeaders(t *testing.T) {
	fx := newFixture(t, backends[0].dsn(t), nil)
	c := fx.client(t)
	resp, err := c.hc.Get(fx.srv.URL + "/console/login")
	if err != nil {
		t.Fatal(err)
	}
	read(t, resp)
	if got := resp.Header.Get("Content-Security-Policy"); !strings.HasPrefix(got, "default-src 'self'") || strings.Contains(got, "unsafe-inline") {
		t.Errorf("CSP %q", got)
	}
	form := url.Values{"password": {testPassword}, "csrf": {c.csrf("/console/login")}}
	resp, err = c.hc.PostForm(fx.srv.URL+"/console/login", form)
	if err != nil {
		t.Fatal(err)
	}
	read(t, resp)
	var saw int
	for _, ck := range resp.Cookies() {
		saw++
		if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/console/" {
			t.Errorf("cookie %s: HttpOnly %v SameSite %v Path %q", ck.Name, ck.HttpOnly, ck.SameSite, ck.Path)
		}
	}
	if saw != 2 {
		t.Errorf("%d cookies at login, want the session and a new CSRF token", saw)
	}
	if loc := resp.Header.Get("Location"); loc != "/console/" {
		t.Errorf("redirect to %q", loc)
	}
	// next never leaves the console.
	for _, next := range []string{"https://evil.example/", "//evil.example/console/", "/elsewhere"} {
		c2 := fx.client(t)
		resp, _ := c2.post("/console/login", "/console/login", url.Values{"password": {testPassword}, "next": {next}})
		if loc := resp.Header.Get("Location"); loc != "/console/" {
			t.Errorf("next %q: redirect to %q", next, loc)
		}
	}
}
