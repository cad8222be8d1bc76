package console

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"
)

// pageNames are the templates under templates/, each parsed with the layout.
var pageNames = []string{"overview", "rules", "rule", "try", "backtest", "firings", "tests", "login", "error"}

// layout is what every page's template gets: the page's own data in Data.
type layout struct {
	Title  string
	Nav    string // the menu entry to mark
	Master bool   // logged in: the forms that write are shown
	Key    string // the gateway key the master logged in with; "" for the password
	CSRF   string
	Data   any
}

// formField is one field of the rule form, with the error the engine gave for it.
type formField struct{ Name, Label, Value, Error, Kind string }

var funcs = template.FuncMap{
	"ago": func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return t.UTC().Format("2006-01-02 15:04")
	},
	"pct":  func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) },
	"join": strings.Join,
	"add":  func(a, b int) int { return a + b },
	"has":  func(list []string, s string) bool { return slices.Contains(list, s) },
	"fieldArgs": func(name, label, value string, errs map[string]string, kind string) formField {
		return formField{Name: name, Label: label, Value: value, Error: errs[name], Kind: kind}
	},
}

func (h *Handler) parseTemplates() error {
	h.pages = map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/testrows.html", "templates/"+name+".html")
		if err != nil {
			return fmt.Errorf("console: template %s: %w", name, err)
		}
		h.pages[name] = t
	}
	return nil
}

var titles = map[string]string{
	"overview": "Overview", "rules": "Rules", "rule": "Rule", "try": "Try it",
	"backtest": "Backtest", "firings": "Firings", "tests": "Tests", "login": "Log in", "error": "Error",
}

// render executes page into a buffer first, so a template error is a 500, not half a page.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, page string, data any) {
	s, master := h.auth.session(r)
	l := layout{Title: titles[page], Nav: page, Master: master, Key: s.key, CSRF: csrfToken(w, r), Data: data}
	var buf bytes.Buffer
	if err := h.pages[page].ExecuteTemplate(&buf, "layout", l); err != nil {
		h.cfg.Logger.Error("console: render", "page", page, "err", err)
		http.Error(w, "console: the page could not be drawn", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes()) // the client went away: nothing to do
}

// fail renders the error page with msg and status.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	h.render(w, r, status, "error", struct {
		Status  int
		Message string
	}{status, msg})
}

// storeFailed is fail for a store read or write that failed: logged once, shown short.
func (h *Handler) storeFailed(w http.ResponseWriter, r *http.Request, err error) {
	h.cfg.Logger.Error("console: store", "path", r.URL.Path, "err", err)
	h.fail(w, r, http.StatusInternalServerError, "the rule store failed: "+err.Error())
}
