package console_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/streamrules/streamrules/console"
	"github.com/streamrules/streamrules/gateway"
)

// syncBuffer is a log the console writes from its handlers while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testKeys(t *testing.T) *gateway.Keys {
	t.Helper()
	k, err := gateway.ParseKeys(strings.NewReader("boss sk-boss master,telegram\nbot sk-bot telegram,client_ops\nops sk-ops *\n"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func hasSession(resp *http.Response) bool {
	for _, ck := range resp.Cookies() {
		if ck.Name == "streamrules_console_session" && ck.Value != "" {
			return true
		}
	}
	return false
}

// A gateway key that may claim master logs in as the master ("*" may claim it too) and
// its writes are logged with its name; the password still works beside the keys.
func TestLoginWithMasterKey(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		var log syncBuffer
		fx := newFixture(t, dsn, &console.Config{Password: testPassword, Keys: testKeys(t), Logger: slog.New(slog.NewTextHandler(&log, nil))})
		ctx := context.Background()
		for _, secret := range []string{"sk-boss", "sk-ops", testPassword} {
			c := fx.client(t)
			resp, body := c.post("/console/login", "/console/login", url.Values{"password": {secret}})
			if resp.StatusCode != http.StatusSeeOther || !hasSession(resp) {
				t.Fatalf("login with %q: %d\n%s", secret, resp.StatusCode, body)
			}
			_, page := c.get("/console/")
			if want := `<span class="key" id="key">(key boss)</span>`; (secret == "sk-boss") != strings.Contains(page, want) {
				t.Errorf("logged in with %q, the header says %v", secret, strings.Contains(page, want))
			}
			for _, action := range []string{"disable", "enable"} {
				if resp, body := c.post("/console/rules/local_shell", "/console/rules/local_shell/state", url.Values{"action": {action}}); resp.StatusCode != http.StatusSeeOther {
					t.Fatalf("%s with %q: %d\n%s", action, secret, resp.StatusCode, body)
				}
			}
		}
		if r, err := fx.store.GetRule(ctx, "local_shell"); err != nil || r.Disabled {
			t.Errorf("local_shell disabled %v (%v)", r.Disabled, err)
		}
		got := log.String()
		for _, want := range []string{`msg="console: login" client=127.0.0.1 by="key boss"`, `by="key ops"`, `by=password`, `msg="console: rule disabled" rule=local_shell by="key boss"`} {
			if !strings.Contains(got, want) {
				t.Errorf("log lacks %s:\n%s", want, got)
			}
		}
		for _, secret := range []string{"sk-boss", "sk-bot", "sk-ops", testPassword} {
			if strings.Contains(got, secret) {
				t.Errorf("the log holds the secret %q", secret)
			}
		}
		_, page := fx.client(t).get("/console/login")
		contains(t, page, "Console password or gateway key", "may claim the <code>master</code> environment")
	})
}

// A key whose environments do not include master is refused at login (403, no session,
// counted by the rate limit), and what it then posts is refused: the store is untouched.
func TestLoginNonMasterKey(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		fx := newFixture(t, dsn, &console.Config{Keys: testKeys(t), LoginAttempts: 3})
		ctx := context.Background()
		before, err := fx.store.GetRule(ctx, "no_apologies")
		if err != nil {
			t.Fatal(err)
		}
		c := fx.client(t)
		resp, body := c.post("/console/login", "/console/login", url.Values{"password": {"sk-bot"}})
		if resp.StatusCode != http.StatusForbidden || hasSession(resp) {
			t.Fatalf("non-master key: %d, session %v", resp.StatusCode, hasSession(resp))
		}
		contains(t, body, `id="login-error"`, "The gateway key &#34;bot&#34; may not claim the master environment: a non-master key cannot edit.")
		form := editForm(t, fx, "no_apologies")
		form.Set("text", "Edited by a client key.")
		if resp, _ := c.post("/console/rules/no_apologies", "/console/rules/no_apologies", form); resp.StatusCode != http.StatusForbidden {
			t.Errorf("edit after a refused login: %d, want 403", resp.StatusCode)
		}
		if resp, _ := c.post("/console/rules/no_apologies", "/console/rules/no_apologies/state", url.Values{"action": {"disable"}}); resp.StatusCode != http.StatusForbidden {
			t.Errorf("disable after a refused login: %d, want 403", resp.StatusCode)
		}
		after, err := fx.store.GetRule(ctx, "no_apologies")
		if err != nil {
			t.Fatal(err)
		}
		if after.Text != before.Text || after.Disabled || !after.UpdatedAt.Equal(before.UpdatedAt) {
			t.Errorf("the store moved: text %q, disabled %v, updated_at %v→%v", after.Text, after.Disabled, before.UpdatedAt, after.UpdatedAt)
		}
		// An unknown key is a wrong secret; with the non-master try it makes three, and the
		// master's own key is then refused until the window ends.
		if resp, body := c.post("/console/login", "/console/login", url.Values{"password": {"sk-nobody"}}); resp.StatusCode != http.StatusUnauthorized ||
			!strings.Contains(body, "Wrong password or gateway key.") {
			t.Errorf("unknown key: %d", resp.StatusCode)
		}
		c.post("/console/login", "/console/login", url.Values{"password": {"sk-bot"}})
		if resp, _ := c.post("/console/login", "/console/login", url.Values{"password": {"sk-boss"}}); resp.StatusCode != http.StatusTooManyRequests || hasSession(resp) {
			t.Errorf("past the limit: %d, want 429", resp.StatusCode)
		}
	})
}

// Keys without a master key and no password: nobody can log in, and the page says so.
func TestLoginNoMasterKey(t *testing.T) {
	keys, err := gateway.ParseKeys(strings.NewReader("bot sk-bot telegram\n"))
	if err != nil {
		t.Fatal(err)
	}
	fx := newFixture(t, backends[0].dsn(t), &console.Config{Keys: keys})
	c := fx.client(t)
	_, page := c.get("/console/login")
	contains(t, page, "no gateway key that may claim master: it only reads")
	if resp, _ := c.post("/console/login", "/console/login", url.Values{"password": {""}}); resp.StatusCode != http.StatusUnauthorized || hasSession(resp) {
		t.Errorf("empty secret: %d", resp.StatusCode)
	}
}
