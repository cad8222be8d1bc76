package console

import (
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/seeds"
)

// EnvPassword is the environment variable the command reads Config.Password from.
const EnvPassword = "STREAMRULES_CONSOLE_PASSWORD"

// Prefix is where the console's pages live; mount the Handler there.
const Prefix = "/console/"

// Config tunes a console. A nil *Config means every default.
type Config struct {
	// Password is the console password: who gives it at /console/login is the master and
	// may change rules. Empty, and no master key in Keys: nobody can log in, and the
	// console only reads.
	Password string `env:"STREAMRULES_CONSOLE_PASSWORD"`
	// Keys, when set, are gateway keys the login form takes beside the password: a key
	// that may claim the master environment (seeds.EnvMaster, or "*") logs in as the
	// master; any other key is refused, since a non-master key cannot edit. `streamrules
	// serve --console` passes the gateway's *gateway.Keys. Default nil: the password only.
	Keys Keys
	// SessionTTL is how long a login lasts. Default 12h.
	SessionTTL time.Duration
	// MaxSessions bounds the logins kept at once; the oldest goes first. Default 1000.
	MaxSessions int
	// LoginAttempts is how many failed logins one client address may make per
	// LoginWindow before it gets 429. Default 5 per minute.
	LoginAttempts int
	LoginWindow   time.Duration
	// MaxUploadBytes bounds a backtest's transcript upload and any form. Default 16 MiB.
	MaxUploadBytes int64
	// FiringsShown is how many of the latest firings the Firings page lists. Default 200.
	FiringsShown int
	// PageRows is how many rules a page of the overview or the rules list shows, and how
	// many of the rules that did not fire a backtest lists. Default 100.
	PageRows int
	// ShowContent shows what a firing recorded of the answer (a fix's diff) on the
	// Firings page: content, shown only when the host opts in, as for traces. Default off.
	ShowContent bool
	// StatsMaxAge is how old the per-rule counters a page shows may be: they are read at
	// most once per StatsMaxAge, however many pages are drawn. Negative: read for every
	// page. Default 5s.
	StatsMaxAge time.Duration
	// Logger gets one line per write and per refused login. Default: discarded.
	Logger *slog.Logger

	now func() time.Time // the clock; tests drive it
}

// withDefaults returns a copy of c with every zero field set to its default.
func (c *Config) withDefaults() Config {
	var out Config
	if c != nil {
		out = *c
	}
	if out.SessionTTL == 0 {
		out.SessionTTL = 12 * time.Hour
	}
	if out.MaxSessions == 0 {
		out.MaxSessions = 1000
	}
	if out.LoginAttempts == 0 {
		out.LoginAttempts = 5
	}
	if out.LoginWindow == 0 {
		out.LoginWindow = time.Minute
	}
	if out.MaxUploadBytes == 0 {
		out.MaxUploadBytes = 16 << 20
	}
	if out.FiringsShown == 0 {
		out.FiringsShown = 200
	}
	if out.PageRows == 0 {
		out.PageRows = 100
	}
	if out.StatsMaxAge == 0 {
		out.StatsMaxAge = 5 * time.Second
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	if out.now == nil {
		out.now = time.Now
	}
	return out
}

func (c *Config) validate() error {
	switch {
	case c.SessionTTL < 0:
		return errors.New("console: SessionTTL must not be negative")
	case c.MaxSessions < 0:
		return errors.New("console: MaxSessions must not be negative")
	case c.LoginAttempts < 0 || c.LoginWindow < 0:
		return errors.New("console: LoginAttempts and LoginWindow must not be negative")
	case c.MaxUploadBytes < 0:
		return errors.New("console: MaxUploadBytes must not be negative")
	case c.FiringsShown < 0 || c.PageRows < 0:
		return errors.New("console: FiringsShown and PageRows must not be negative")
	}
	return nil
}

// Keys are credentials the login form takes beside the password; *gateway.Keys is one.
type Keys interface {
	// Claim reports which key secret is (known is false for none) and whether that key
	// may claim the environment env.
	Claim(secret, env string) (name string, known, allowed bool)
	// Claimable reports whether some key may claim env.
	Claimable(env string) bool
}

// Handler serves the console. It is safe for concurrent use; it starts no goroutine.
type Handler struct {
	store *rulesdb.Store
	eng   *streamrules.Engine
	cfg   Config
	mux   *http.ServeMux
	pages map[string]*template.Template
	auth  *auth
	cache *cache
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// New returns the console over store, judging and validating rules as eng does (its
// environments). eng may be an engine over store or any other; it is only read.
func New(store *rulesdb.Store, eng *streamrules.Engine, cfg *Config) (*Handler, error) {
	if store == nil || eng == nil {
		return nil, errors.New("console: New needs a store and an engine")
	}
	c := cfg.withDefaults()
	if err := c.validate(); err != nil {
		return nil, err
	}
	h := &Handler{store: store, eng: eng, cfg: c, mux: http.NewServeMux()}
	h.auth = newAuth(&h.cfg)
	h.cache = &cache{store: store, cfg: &h.cfg}
	if err := h.parseTemplates(); err != nil {
		return nil, err
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	m := h.mux
	m.Handle("GET /console/static/", http.StripPrefix("/console/static/", http.FileServerFS(static)))
	m.HandleFunc("GET /console/{$}", h.overview)
	m.HandleFunc("GET /console/rules", h.rulesList)
	m.HandleFunc("GET /console/rules/{name}", h.rulePage)
	m.HandleFunc("POST /console/rules/{name}", h.write(h.ruleEdit))
	m.HandleFunc("POST /console/rules/{name}/state", h.write(h.ruleState))
	m.HandleFunc("GET /console/try", h.tryPage)
	m.HandleFunc("POST /console/try", h.form(h.tryPost))
	m.HandleFunc("GET /console/backtest", h.backtestPage)
	m.HandleFunc("POST /console/backtest", h.form(h.backtestPost))
	m.HandleFunc("GET /console/firings", h.firings)
	m.HandleFunc("GET /console/tests", h.testsPage)
	m.HandleFunc("GET /console/login", h.loginPage)
	m.HandleFunc("POST /console/login", h.form(h.loginPost))
	m.HandleFunc("POST /console/logout", h.form(h.logoutPost))
	m.HandleFunc("GET /console", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
	})
	return h, nil
}

// ServeHTTP sets the security headers every response carries and routes the request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	// No inline script or style anywhere: the CSP says so, so an injected <script> that
	// escaped the templates still would not run.
	hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("Cache-Control", "no-store")
	h.mux.ServeHTTP(w, r)
}

// CheckListen refuses to serve a console nobody can log in to on an address other
// machines can reach: without Config.Password and without a key in Config.Keys that may
// claim master, nobody logs in, yet every rule and firing is shown. addr is a net.Listen
// address (":8080" listens everywhere); a nil cfg has neither.
func CheckListen(addr string, cfg *Config) error {
	if cfg != nil && (cfg.Password != "" || (cfg.Keys != nil && cfg.Keys.Claimable(seeds.EnvMaster))) {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("console: listen address %q: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("console: %s is not a loopback address, %s is not set and no gateway key may claim %s: set a password, give a master key, or listen on 127.0.0.1", addr, EnvPassword, seeds.EnvMaster)
}

// knownEnvironments is what the console validates and judges with: the engine's
// environments.
func (h *Handler) knownEnvironments() []string {
	envs := h.eng.Environments()
	slices.Sort(envs)
	return slices.Compact(envs)
}

// modeOf is a rule's mode as the console names it: soft (a reminder on a tool call),
// gate (a tool call that never runs), hard (an answer discarded and replayed), fix (an
// answer repaired in place).
func modeOf(r *streamrules.Rule) string {
	mode := r.Mode
	tool := strings.HasPrefix(r.Scope, streamrules.ScopeToolPrefix)
	if mode == "" {
		mode = streamrules.ModeInterrupt
		if tool {
			mode = streamrules.ModeRemind
		}
	}
	switch {
	case tool && mode == streamrules.ModeInterrupt:
		return "gate"
	case tool:
		return "soft"
	case r.Fix != nil:
		return "fix"
	}
	return "hard"
}
