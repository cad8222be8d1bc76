package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamrules/streamrules/seeds"
)

// Cookie names. Both are HttpOnly and SameSite=Strict: a page on another site can neither
// read them nor make the browser send them with a form it posts here.
const (
	sessionCookie = "streamrules_console_session"
	csrfCookie    = "streamrules_console_csrf"
	csrfField     = "csrf"
)

// auth holds the logins and the login rate limit. Only the master logs in: a session is
// the master's.
type auth struct {
	cfg      *Config
	password [32]byte // sha256 of Config.Password: compared in constant time, whatever its length

	mu       sync.Mutex
	sessions map[string]session // session id → the login
	failures map[string]*window // client address → failed logins in the current window
}

// session is one login: until when, and with what: the gateway key's name, or "" for
// the password.
type session struct {
	expires time.Time
	key     string
}

// by names what a session logged in with, for the log: "password", or "key NAME".
func (s session) by() string {
	if s.key == "" {
		return "password"
	}
	return "key " + s.key
}

// window counts failed logins from one address since start.
type window struct {
	start time.Time
	n     int
}

// maxTrackedClients bounds the rate limit's memory: past it the oldest windows go first
// (a flood of addresses resets itself, it never grows the map without bound).
const maxTrackedClients = 10000

func newAuth(cfg *Config) *auth {
	return &auth{cfg: cfg, password: sha256.Sum256([]byte(cfg.Password)), sessions: map[string]session{}, failures: map[string]*window{}}
}

func randomToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// master reports whether r carries a live session.
func (a *auth) master(r *http.Request) bool {
	_, ok := a.session(r)
	return ok
}

// session returns r's live session, if r carries one.
func (a *auth) session(r *http.Request) (session, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return session{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[c.Value]
	if ok && a.cfg.now().After(s.expires) {
		delete(a.sessions, c.Value)
		return session{}, false
	}
	return s, ok
}

// by names what the session that made a write logged in with, for the log.
func (a *auth) by(r *http.Request) string {
	s, _ := a.session(r)
	return s.by()
}

// clientOf is the address a login attempt is counted against: the connection's host.
// A proxy in front of the console makes every client one address, which only makes the
// limit stricter.
func clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// allowLogin reports whether the client may try a password now, and if not, how long
// until it may.
func (a *auth) allowLogin(client string) (bool, time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.cfg.now()
	w, ok := a.failures[client]
	if !ok || now.Sub(w.start) >= a.cfg.LoginWindow {
		return true, 0
	}
	if w.n >= a.cfg.LoginAttempts {
		return false, a.cfg.LoginWindow - now.Sub(w.start)
	}
	return true, 0
}

func (a *auth) failed(client string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.cfg.now()
	w, ok := a.failures[client]
	if !ok || now.Sub(w.start) >= a.cfg.LoginWindow {
		if !ok && len(a.failures) >= maxTrackedClients {
			a.pruneFailures(now)
		}
		w = &window{start: now}
		a.failures[client] = w
	}
	w.n++
}

// pruneFailures drops the windows that are over, and if that is not enough, all of them.
func (a *auth) pruneFailures(now time.Time) {
	for k, w := range a.failures {
		if now.Sub(w.start) >= a.cfg.LoginWindow {
			delete(a.failures, k)
		}
	}
	if len(a.failures) >= maxTrackedClients {
		clear(a.failures)
	}
}

// verdict is what check made of a login's secret.
type verdict int

const (
	wrong     verdict = iota // neither the password nor a key
	notMaster                // a gateway key that may not claim master
	master                   // the password, or a key that may claim master
)

// check judges a login's secret: the console password, or one of Config.Keys. A key is
// the master's when it may claim the master environment; key is its name ("" for the
// password). An empty console password never matches: a console with neither a password
// nor a master key is read-only.
func (a *auth) check(secret string) (key string, v verdict) {
	if secret == "" {
		return "", wrong
	}
	if a.cfg.Password != "" {
		got := sha256.Sum256([]byte(secret))
		if subtle.ConstantTimeCompare(got[:], a.password[:]) == 1 {
			return "", master
		}
	}
	if a.cfg.Keys == nil {
		return "", wrong
	}
	name, known, allowed := a.cfg.Keys.Claim(secret, seeds.EnvMaster)
	switch {
	case !known:
		return "", wrong
	case !allowed:
		return name, notMaster
	}
	return name, master
}

// canLogin reports whether anyone can log in: a password is set, or a key may claim master.
func (a *auth) canLogin() bool {
	return a.cfg.Password != "" || (a.cfg.Keys != nil && a.cfg.Keys.Claimable(seeds.EnvMaster))
}

// login starts a session for key ("" for the password) and returns its id.
func (a *auth) login(key string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.cfg.now()
	if len(a.sessions) >= a.cfg.MaxSessions {
		var oldest string
		var at time.Time
		for id, s := range a.sessions {
			if now.After(s.expires) {
				delete(a.sessions, id)
				continue
			}
			if oldest == "" || s.expires.Before(at) {
				oldest, at = id, s.expires
			}
		}
		if len(a.sessions) >= a.cfg.MaxSessions {
			delete(a.sessions, oldest)
		}
	}
	id := randomToken()
	a.sessions[id] = session{expires: now.Add(a.cfg.SessionTTL), key: key}
	return id
}

func (a *auth) logout(r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		a.mu.Lock()
		delete(a.sessions, c.Value)
		a.mu.Unlock()
	}
}

func cookie(r *http.Request, name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: Prefix, MaxAge: maxAge, HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode}
}

// csrfToken returns the token the page's forms carry, setting its cookie on the first
// visit. The forms double-submit it: a post is honoured only when its field equals the
// cookie, which another site can neither read nor (SameSite=Strict) make the browser send.
func csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) == 64 {
		return c.Value
	}
	tok := randomToken()
	http.SetCookie(w, cookie(r, csrfCookie, tok, 0))
	r.AddCookie(&http.Cookie{Name: csrfCookie, Value: tok}) // the page rendered next reads it
	return tok
}

// csrfOK checks a post's token against its cookie, and its Origin, where the browser
// sent one, against the host it was sent to.
func csrfOK(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return false
		}
	}
	c, err := r.Cookie(csrfCookie)
	if err != nil || len(c.Value) != 64 {
		return false
	}
	got := r.PostFormValue(csrfField)
	return subtle.ConstantTimeCompare([]byte(got), []byte(c.Value)) == 1
}

// form wraps a POST handler: the body is bounded, and a post without the page's CSRF
// token is refused with 403 before anything runs.
func (h *Handler) form(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, h.cfg.MaxUploadBytes+1<<20)
		if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
			if err := r.ParseMultipartForm(1 << 20); err != nil {
				h.fail(w, r, http.StatusRequestEntityTooLarge, "the upload is too large or not a form: "+err.Error())
				return
			}
		}
		if !csrfOK(r) {
			h.fail(w, r, http.StatusForbidden, "the form's security token is missing or stale: reload the page and send it again")
			return
		}
		next(w, r)
	}
}

// write is form for the posts that change rules: without a session they get 403.
func (h *Handler) write(next http.HandlerFunc) http.HandlerFunc {
	return h.form(func(w http.ResponseWriter, r *http.Request) {
		if !h.auth.master(r) {
			h.fail(w, r, http.StatusForbidden, "only the master changes rules: log in first")
			return
		}
		next(w, r)
	})
}

func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "login", h.loginData(safeNext(r.FormValue("next")), ""))
}

type loginData struct {
	Next    string
	Error   string
	NoLogin bool // neither a password nor a key that may claim master: nobody logs in
	Keys    bool // the form takes a gateway key too
}

func (h *Handler) loginData(next, msg string) loginData {
	return loginData{Next: next, Error: msg, NoLogin: !h.auth.canLogin(), Keys: h.cfg.Keys != nil}
}

func (h *Handler) loginPost(w http.ResponseWriter, r *http.Request) {
	client := clientOf(r)
	next := safeNext(r.PostFormValue("next"))
	if ok, wait := h.auth.allowLogin(client); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		h.render(w, r, http.StatusTooManyRequests, "login", h.loginData(next, "Too many failed attempts: wait a minute and try again."))
		return
	}
	key, v := h.auth.check(r.PostFormValue("password"))
	by := session{key: key}.by()
	switch v {
	case wrong:
		h.auth.failed(client)
		h.cfg.Logger.Warn("console: login refused", "client", client)
		msg := "Wrong password."
		switch {
		case !h.auth.canLogin():
			msg = "This console has no password (" + EnvPassword + ") and no gateway key that may claim master: it only reads."
		case h.cfg.Keys != nil:
			msg = "Wrong password or gateway key."
		}
		h.render(w, r, http.StatusUnauthorized, "login", h.loginData(next, msg))
		return
	case notMaster:
		// A real key, yet not the master's: it counts against the limit like a wrong one.
		h.auth.failed(client)
		h.cfg.Logger.Warn("console: login refused: a non-master key", "client", client, "by", by)
		h.render(w, r, http.StatusForbidden, "login", h.loginData(next,
			"The gateway key "+quote(key)+" may not claim the master environment: a non-master key cannot edit."))
		return
	}
	h.cfg.Logger.Info("console: login", "client", client, "by", by)
	http.SetCookie(w, cookie(r, sessionCookie, h.auth.login(key), int(h.cfg.SessionTTL.Seconds())))
	// A new CSRF token with the new session: a token seen before the login is not worth a write.
	http.SetCookie(w, cookie(r, csrfCookie, randomToken(), 0))
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (h *Handler) logoutPost(w http.ResponseWriter, r *http.Request) {
	h.auth.logout(r)
	http.SetCookie(w, cookie(r, sessionCookie, "", -1))
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}

// safeNext keeps a redirect target inside the console: never another site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, Prefix) || strings.HasPrefix(next, "//") || strings.Contains(next, "\\") {
		return Prefix
	}
	return next
}
