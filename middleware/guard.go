package middleware

import (
	lcb "github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/callbacks"
)

// Config tunes a Guard. A nil *Config means all defaults.
type Config struct {
	// Callbacks receives the clean view of tool calls: HandleToolStart with the input and
	// HandleToolEnd with the tool's clean output (LangChainGo's executor never sends them).
	// It is wrapped with callbacks.Clean. Default nil: no tool events.
	Callbacks lcb.Handler
}

// Guard wires one engine into LangChainGo: tools, agent and model wrappers.
// A Guard keeps no per-move state; one serves every chat at once.
type Guard struct {
	callbacks lcb.Handler
	splice    streamrules.SpliceOptions
}

// New returns a Guard on eng.
func New(eng *streamrules.Engine, cfg *Config) *Guard {
	if cfg == nil {
		cfg = &Config{}
	}
	return &Guard{callbacks: callbacks.Clean(cfg.Callbacks), splice: eng.SpliceOptions()}
}

// Tools wraps each tool with Tool.
func (g *Guard) Tools(ts ...tools.Tool) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		out[i] = g.Tool(t)
	}
	return out
}
