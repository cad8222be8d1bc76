package console_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/console"
	"github.com/streamrules/streamrules/internal/pgtest"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/seeds"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

const testPassword = "correct horse battery staple"

// backends makes a fresh, empty database per test and returns its DSN.
var backends = []struct {
	name string
	dsn  func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "rules.db") }},
	{"postgres", func(t *testing.T) string { return pgtest.DSN(t) }},
}

// eachBackend runs fn as a parallel subtest per backend.
func eachBackend(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			fn(t, b.dsn(t))
		})
	}
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// fixture is a console over a real store and engine, served by httptest.
type fixture struct {
	store *rulesdb.Store
	eng   *streamrules.Engine
	srv   *httptest.Server
}

// testRules are the rules every fixture starts with: a soft reminder, a gate, a hard
// text rule and one with a fix.
var testRules = []streamrules.Rule{
	{Name: "local_shell", Scope: "tool:shell", Text: "This shell is the user's own machine."},
	{Name: "no_rm_rf", Scope: "tool:shell", Mode: streamrules.ModeInterrupt, Condition: `rm -rf`, Text: "Never rm -rf."},
	{Name: "no_apologies", Scope: "text", Condition: `(?i)\bsorry\b`, Text: "Do not apologise.", When: []string{"telegram"}},
	{Name: "no_shouting", Scope: "text", Condition: `!!+`, Text: "One exclamation mark at most.",
		Fix: &streamrules.Fix{ReplaceRegex: &streamrules.ReplaceRegex{Pattern: `!!+`, With: "!"}}},
}

func newFixture(t *testing.T, dsn string, cfg *console.Config) *fixture {
	t.Helper()
	ctx := context.Background()
	store, err := rulesdb.Open(ctx, dsn, &rulesdb.Config{Logger: quiet(), ReloadInterval: -1, Environments: seeds.Environments()})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	for _, r := range testRules {
		if _, err := store.CreateRule(ctx, r); err != nil {
			t.Fatalf("CreateRule %s: %v", r.Name, err)
		}
	}
	eng, err := streamrules.New(ctx, store, &streamrules.Config{Logger: quiet()})
	if err != nil {
		t.Fatalf("streamrules.New: %v", err)
	}
	t.Cleanup(eng.Close)
	if cfg == nil {
		cfg = &console.Config{Password: testPassword}
	}
	h, err := console.New(store, eng, cfg)
	if err != nil {
		t.Fatalf("console.New: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &fixture{store: store, eng: eng, srv: srv}
}

// client is a browser-like client: cookies kept, redirects not followed.
type client struct {
	t  *testing.T
	fx *fixture
	hc *http.Client
}

func (fx *fixture) client(t *testing.T) *client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &client{t: t, fx: fx, hc: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// get returns the status and body of a GET.
func (c *client) get(path string) (int, string) {
	c.t.Helper()
	resp, err := c.hc.Get(c.fx.srv.URL + path)
	if err != nil {
		c.t.Fatalf("GET %s: %v", path, err)
	}
	return read(c.t, resp)
}

func read(t *testing.T, resp *http.Response) (int, string) {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`)

// csrf reads the token a page's forms carry.
func (c *client) csrf(path string) string {
	c.t.Helper()
	_, body := c.get(path)
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		c.t.Fatalf("no CSRF token on %s", path)
	}
	return m[1]
}

// post sends a form with the token of the page it was on; the response is not followed.
func (c *client) post(from, path string, form url.Values) (*http.Response, string) {
	c.t.Helper()
	if form.Get("csrf") == "" {
		form.Set("csrf", c.csrf(from))
	}
	return c.postRaw(path, form)
}

func (c *client) postRaw(path string, form url.Values) (*http.Response, string) {
	c.t.Helper()
	resp, err := c.hc.PostForm(c.fx.srv.URL+path, form)
	if err != nil {
		c.t.Fatalf("POST %s: %v", path, err)
	}
	_, body := read(c.t, resp)
	return resp, body
}

func (c *client) login() {
	c.t.Helper()
	resp, body := c.post("/console/login", "/console/login", url.Values{"password": {testPassword}})
	if resp.StatusCode != http.StatusSeeOther {
		c.t.Fatalf("login: %d %s", resp.StatusCode, body)
	}
}

// recordFirings writes n firings of rule, one a move, at the given times.
func recordFirings(t *testing.T, s *rulesdb.Store, chat string, at []time.Time, f streamrules.Firing) {
	t.Helper()
	for i, when := range at {
		f := f
		f.ChatID, f.Move, f.At = chat, int64(i+1), when
		if err := s.SaveMove(context.Background(), streamrules.MoveRecord{ChatID: chat, Move: int64(i + 1), Answered: true, Firings: []streamrules.Firing{f}}); err != nil {
			t.Fatalf("SaveMove: %v", err)
		}
	}
}

func contains(t *testing.T, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("page lacks %q", w)
		}
	}
}
