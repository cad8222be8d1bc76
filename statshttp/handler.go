package statshttp

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/streamrules/streamrules"
)

// Handler serves eng's Stats as JSON on GET (and HEAD); other methods get 405 with an
// Allow header. A store that cannot count firings, or fails to, gets 500 and one error
// line on log (nil: slog.Default()). Mount it at /v1/stats. Each request reads the
// counters from the store once (Engine.Stats).
func Handler(eng *streamrules.Engine, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		stats, err := eng.Stats(r.Context())
		if err != nil {
			log.Error("stream rules: stats", "err", err)
			http.Error(w, "stats unavailable", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(stats)
	})
}
