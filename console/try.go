package console

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/streamrules/streamrules"
)

// tryForm is the Try it form as typed.
type tryForm struct {
	Rule  string   // the rule's name
	Text  string   // the answer, or a tool call's arguments
	Input string   // the user's message, for input atoms; empty: not known
	Envs  []string // the environments that hold
	Vars  string   // name=value lines, for a templated fix
}

// tryResult is the verdict, with the text cut around the matched span.
type tryResult struct {
	Status               streamrules.Status
	Why                  string // why not applicable, when it is the rule's when
	Before, Match, After string
	HasSpan              bool
	Fixed                string
	Diff                 []streamrules.Change
	FixNote              string
}

type tryData struct {
	Form   tryForm
	Envs   []string
	Result *tryResult
	Error  string
	Scope  string
}

func (h *Handler) tryData(r *http.Request, f tryForm) (tryData, error) {
	return tryData{Form: f, Envs: h.knownEnvironments()}, nil
}

func (h *Handler) tryPage(w http.ResponseWriter, r *http.Request) {
	d, err := h.tryData(r, tryForm{Rule: r.URL.Query().Get("rule")})
	if err != nil {
		h.storeFailed(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "try", d)
}

func (h *Handler) tryPost(w http.ResponseWriter, r *http.Request) {
	f := tryForm{Rule: r.PostFormValue("rule"), Text: r.PostFormValue("text"), Input: r.PostFormValue("input"),
		Envs: r.PostForm["env"], Vars: r.PostFormValue("vars")}
	d, err := h.tryData(r, f)
	if err != nil {
		h.storeFailed(w, r, err)
		return
	}
	ru, err := h.store.GetRule(r.Context(), f.Rule)
	if errors.Is(err, streamrules.ErrNotFound) {
		d.Error = "there is no rule named " + quote(f.Rule)
		h.render(w, r, http.StatusUnprocessableEntity, "try", d)
		return
	}
	if err != nil {
		h.storeFailed(w, r, err)
		return
	}
	d.Scope = ru.Scope
	res, err := h.try(ru, f)
	if err != nil {
		d.Error = err.Error()
		h.render(w, r, http.StatusUnprocessableEntity, "try", d)
		return
	}
	d.Result = res
	h.render(w, r, http.StatusOK, "try", d)
}

// try judges f.Text with the engine's own compiled rule (streamrules.Judge), as replay and
// validate do. A rule whose when does not hold in the picked environments is not
// applicable, as a live move without them would not run it.
func (h *Handler) try(ru streamrules.Rule, f tryForm) (*tryResult, error) {
	for _, e := range ru.When {
		if !slices.Contains(f.Envs, e) {
			return &tryResult{Status: streamrules.StatusNotApplicable, Why: "its when needs " + strings.Join(ru.When, " and ") + " to hold"}, nil
		}
	}
	j, err := streamrules.NewJudge(ru, h.knownEnvironments()...)
	if err != nil {
		return nil, err
	}
	var facts *streamrules.Facts
	if f.Input != "" {
		facts = &streamrules.Facts{Input: f.Input, HasInput: true}
	}
	v := j.Check(f.Text, facts)
	res := &tryResult{Status: v.Status}
	if v.Span != nil && v.Span.Start >= 0 && v.Span.Start <= v.Span.End && v.Span.End <= len(f.Text) {
		res.HasSpan = true
		res.Before, res.Match, res.After = f.Text[:v.Span.Start], f.Text[v.Span.Start:v.Span.End], f.Text[v.Span.End:]
	}
	if v.Status == streamrules.StatusViolation && ru.Fix != nil {
		fixed, diff, ok := j.Fix(f.Text, parseVars(f.Vars))
		if ok {
			res.Fixed, res.Diff = fixed, diff
			if j.Check(fixed, facts).Status == streamrules.StatusViolation {
				res.FixNote = "the repaired text still violates the rule: live, the answer would be replayed"
			}
		} else {
			res.FixNote = "the fix changed nothing (or a variable it needs is missing): live, the answer would be replayed"
		}
	}
	return res, nil
}

// parseVars reads name=value lines; lines without "=" are skipped.
func parseVars(s string) map[string]string {
	out := map[string]string{}
	for line := range strings.Lines(s) {
		k, v, ok := strings.Cut(strings.TrimRight(line, "\r\n"), "=")
		if k = strings.TrimSpace(k); ok && k != "" {
			out[k] = v
		}
	}
	return out
}
