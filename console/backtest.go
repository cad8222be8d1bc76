package console

import (
	"errors"
	"net/http"
	"strings"

	"github.com/streamrules/streamrules/replay"
)

// example is a backtest example cut at its marks, so the template highlights the match
// with <mark> and escapes all three parts.
type example struct {
	replay.Example
	Before, Match, After string
}

type backtestRow struct {
	replay.RuleReport
	Cut []example
}

type backtestData struct {
	File       string
	Moves      int
	Rows       []backtestRow
	UnknownEnv []string
	Error      string
	Ran        bool
	Fired      int // rules that fired
	Quiet      int // rules that did not fire, beyond the rows shown
}

func (h *Handler) backtestPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "backtest", backtestData{})
}

func (h *Handler) backtestPost(w http.ResponseWriter, r *http.Request) {
	file, hdr, err := r.FormFile("transcript")
	if err != nil {
		h.render(w, r, http.StatusBadRequest, "backtest", backtestData{Error: "choose a transcript file (JSON Lines, the replay format)"})
		return
	}
	defer file.Close()
	if hdr.Size > h.cfg.MaxUploadBytes {
		h.render(w, r, http.StatusRequestEntityTooLarge, "backtest", backtestData{Error: "the transcript is larger than the console takes"})
		return
	}
	// Every rule, disabled ones too: a backtest asks "what if it were on" (replay.Options.AsStored).
	eng, err := h.cache.backtestEngine(r.Context(), &replay.Options{Environments: h.knownEnvironments(), Logger: h.cfg.Logger})
	if err != nil {
		var ce compileError
		if errors.As(err, &ce) {
			h.render(w, r, http.StatusUnprocessableEntity, "backtest", backtestData{File: hdr.Filename, Ran: true, Error: err.Error()})
			return
		}
		h.storeFailed(w, r, err)
		return
	}
	defer h.cache.release(eng)
	d := backtestData{File: hdr.Filename, Ran: true}
	rep, err := eng.c.Run(r.Context(), []replay.Source{{Name: hdr.Filename, R: file}}, &replay.Options{Examples: 3})
	if err != nil {
		var mbe *http.MaxBytesError
		status := http.StatusUnprocessableEntity
		if errors.As(err, &mbe) {
			status = http.StatusRequestEntityTooLarge
		}
		d.Error = err.Error()
		h.render(w, r, status, "backtest", d)
		return
	}
	d.Moves, d.UnknownEnv = rep.Moves, rep.UnknownEnv
	// Every rule that fired has its row; of those that did not, the first PageRows (by
	// name), and a count of the rest: 10,000 rows would be a page nobody reads, and most
	// of its server time.
	quietShown := 0
	for _, rr := range rep.Rules {
		if rr.Fired > 0 {
			d.Fired++
		} else if quietShown >= h.cfg.PageRows {
			d.Quiet++
			continue
		} else {
			quietShown++
		}
		row := backtestRow{RuleReport: rr}
		for _, ex := range rr.Examples {
			row.Cut = append(row.Cut, cutExample(ex))
		}
		d.Rows = append(d.Rows, row)
	}
	h.render(w, r, http.StatusOK, "backtest", d)
}

// cutExample splits an example's excerpt at replay's marks ⟦ and ⟧.
func cutExample(ex replay.Example) example {
	out := example{Example: ex, Before: ex.Excerpt}
	before, rest, ok := strings.Cut(ex.Excerpt, replay.MarkStart)
	if !ok {
		return out
	}
	match, after, ok := strings.Cut(rest, replay.MarkEnd)
	if !ok {
		return out
	}
	out.Before, out.Match, out.After = before, match, after
	return out
}
