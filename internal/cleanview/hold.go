package cleanview

import (
	"context"
	"sync"
)

// Hold collects callback events of one tour while the middleware holds its speech.
// The middleware calls Release on an accepted answer and Drop on a discarded one.
// A Hold is safe for concurrent use; its zero value is ready.
type Hold struct {
	mu      sync.Mutex
	pending []func()
	done    bool
}

type holdKey struct{}

// WithHold returns a context whose clean handlers defer their answer events into h.
func WithHold(ctx context.Context, h *Hold) context.Context {
	return context.WithValue(ctx, holdKey{}, h)
}

// HoldFrom returns the Hold ctx carries, or nil.
func HoldFrom(ctx context.Context) *Hold {
	h, _ := ctx.Value(holdKey{}).(*Hold)
	return h
}

// Add defers fn; it reports false once the hold is over (the event then passes at once).
func (h *Hold) Add(fn func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return false
	}
	h.pending = append(h.pending, fn)
	return true
}

// Release runs the held events in order; later events pass at once.
func (h *Hold) Release() {
	h.mu.Lock()
	fns := h.pending
	h.pending, h.done = nil, true
	h.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// Drop forgets the held events: the answer they describe was discarded.
func (h *Hold) Drop() {
	h.mu.Lock()
	h.pending, h.done = nil, true
	h.mu.Unlock()
}
