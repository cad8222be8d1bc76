package gateway

import (
	"context"
	"errors"
	"net/http"
)

// runStream serves a stream: true request.
func (t *tour) runStream(ctx context.Context, w http.ResponseWriter) ([]string, error) {
	err := errors.New("gateway: streaming is not implemented yet")
	writeError(w, http.StatusNotImplemented, "invalid_request_error", err.Error())
	return nil, err
}
