package console

import (
	"net/http"

	"github.com/streamrules/streamrules"
)

type firingsData struct {
	Firings     []streamrules.Firing
	Limit       int
	ShowContent bool
}

func (h *Handler) firings(w http.ResponseWriter, r *http.Request) {
	fs, err := h.store.LatestFirings(r.Context(), h.cfg.FiringsShown)
	if err != nil {
		h.storeFailed(w, r, err)
		return
	}
	if !h.cfg.ShowContent {
		for i := range fs {
			fs[i].Diff = nil
		}
	}
	h.render(w, r, http.StatusOK, "firings", firingsData{Firings: fs, Limit: h.cfg.FiringsShown, ShowContent: h.cfg.ShowContent})
}
