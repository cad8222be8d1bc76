package statshttp

import (
	"encoding/json"
	"net/http"

	"github.com/streamrules/streamrules"
)

// Handler serves eng's Stats as JSON on GET (and HEAD); other methods get 405 with an
// Allow header. A store that cannot count firings, or fails to, gets 500 and one error
// line on the engine's logger (Engine.Logger). Mount it at /v1/stats. Each request
// reads the counters from the store once (Engine.Stats).
func Handler(eng *streamrules.Engine) http.Handler {
	log := eng.Logger()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		stats, err := eng.Stats(r.Context())
		if err != nil {
			log.Error("streamrules: stats", "err", err)
			http.Error(w, "stats unavailable", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(stats)
	})
}
