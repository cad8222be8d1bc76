package middleware

import (
	lcb "github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/callbacks"
)

// Config tunes a Guard. A nil *Config means all defaults.
type Config struct {
	// Callbacks is the handler that feeds your client: the one place to give it. It is
	// wrapped with callbacks.Clean once; tool wrappers send it HandleToolStart with the
	// input and HandleToolEnd with the clean output (LangChainGo's executor never sends
	// them), Guard.Executor gives it to the executor (chain and agent events), and
	// Guard.Run streams the accepted answer to its HandleStreamingFunc. To also get the
	// provider's own events, hand the provider Guard.Callbacks. Default nil: no events.
	Callbacks lcb.Handler
}

// Guard wires one engine into LangChainGo: tools, agent and model wrappers.
// A Guard keeps no per-move state; one serves every chat at once.
type Guard struct {
	eng       *streamrules.Engine
	callbacks lcb.Handler
	splice    streamrules.SpliceOptions
}

// New returns a Guard on eng.
func New(eng *streamrules.Engine, cfg *Config) *Guard {
	if cfg == nil {
		cfg = &Config{}
	}
	return &Guard{eng: eng, callbacks: callbacks.Clean(cfg.Callbacks), splice: eng.SpliceOptions()}
}

// Tools wraps each tool with Tool.
func (g *Guard) Tools(ts ...tools.Tool) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		out[i] = g.Tool(t)
	}
	return out
}
