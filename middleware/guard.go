package middleware

import (
	"context"
	"time"

	lcb "github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/tools"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/clientview"

	// Shell rules (Rule.Shell) are read as a shell reads them wherever this package runs.
	_ "github.com/streamrules/streamrules/shellcmd"
)

// Config tunes a Guard. A nil *Config means all defaults. New fills the zero fields with
// their defaults (WithDefaults) and refuses a negative duration or retry count with an
// error naming the field.
type Config struct {
	// Callbacks is the handler that feeds your client: the one place to give it. It is
	// wrapped with clientview.Clean once; tool wrappers send it HandleToolStart with the
	// input and HandleToolEnd with the clean output (LangChainGo's executor never sends
	// them), Guard.Executor gives it to the executor (chain and agent events), and
	// Guard.Run streams the accepted answer to its HandleStreamingFunc. To also get the
	// provider's own events, hand the provider Guard.Callbacks. Default nil: no events.
	Callbacks lcb.Handler

	// Runtime boundaries of every model call through Guard.Model (see the README's table
	// of what is retried). All off by default.

	// CallTimeout bounds each provider request. Default 0: no bound.
	CallTimeout time.Duration `env:"STREAMRULES_CALL_TIMEOUT"`
	// CallRetries is how many times a provider request that timed out, lost its
	// connection, or was answered 429 or 5xx is made again. It is never retried once a
	// chunk of it reached the client, and it does not spend the move's retry.
	// Default 0: no retry.
	CallRetries int `env:"STREAMRULES_CALL_RETRIES"`
	// RetryDelay is the wait before the first retry; it doubles with each retry, with
	// ±25 % jitter. A Retry-After header replaces it. Default 0 means 1s.
	RetryDelay time.Duration `env:"STREAMRULES_RETRY_DELAY"`
	// RetryMaxDelay caps the wait; a Retry-After longer than it is not retried.
	// Default 0 means 30s.
	RetryMaxDelay time.Duration `env:"STREAMRULES_RETRY_MAX_DELAY"`
	// Heartbeat is how often OnHeartbeat is called while a model call runs, so a host can
	// show that a long generation is not a hang. Default 0: no heartbeat.
	Heartbeat time.Duration `env:"STREAMRULES_HEARTBEAT"`
	// OnHeartbeat receives the heartbeat, on its own goroutine. Default none.
	OnHeartbeat func(ctx context.Context, h Heartbeat)

	// Transcript, if set, gets every move that Run, Call or Guard.BeginMove/EndMove ran
	// to an answer, as the rules saw it (MoveRecord): what the model said first, each
	// discarded answer and each call a gate stopped, the accepted answer, and the move's
	// input, environments, variables and tool record. replay.NewRecorder(w) writes them
	// to w as a backtest transcript, which replays to the counts the moves produced.
	// Default nil: nothing recorded, nothing allocated.
	Transcript Recorder

	// LenientEnvironments lets Run and Call begin a move with an environment name the
	// engine does not know, logged once and ignored, instead of failing it with an error
	// naming the name. Default false: a typo fails the move before the chain runs.
	LenientEnvironments bool

	// StreamToolCalls lets the provider's streamed tool-call deltas through to the
	// client's streaming func. LangChainGo's openai client streams a response's tool calls
	// as JSON (`[{"id":"call_1","type":"function",…}]`) through the same func as the
	// answer's text; by default the model wrapper keeps those chunks out of the client's
	// stream inside a move, so the client gets the answer's words only. Default false.
	StreamToolCalls bool

	// Tracer, if set, gets a span per move, model call and tool call (trace.go); package
	// tracing supplies one over OpenTelemetry. Default nil: no spans, no cost.
	Tracer Tracer

	clock clock // test hook: the boundaries' time source (default the real clock)
}

// Guard wires one engine into LangChainGo: tools, agent and model wrappers.
// A Guard keeps no per-move state; one serves every chat at once.
type Guard struct {
	eng       *streamrules.Engine
	callbacks lcb.Handler
	splice    func(output string, reminders []streamrules.Reminder) string // Engine.Splice
	bounds    boundaries
	tracer    Tracer
	rec       Recorder // Config.Transcript; nil: no recording
	// lenientEnv is Config.LenientEnvironments.
	lenientEnv bool
	// toolChunks is Config.StreamToolCalls: tool-call JSON reaches the client's stream.
	toolChunks bool
}

// New returns a Guard on eng. A negative duration or retry count in cfg is an error
// naming the field.
func New(eng *streamrules.Engine, cfg *Config) (*Guard, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Guard{eng: eng, callbacks: clientview.Clean(cfg.Callbacks), splice: eng.Splice, bounds: newBoundaries(cfg), tracer: cfg.Tracer,
		rec: cfg.Transcript, lenientEnv: cfg.LenientEnvironments, toolChunks: cfg.StreamToolCalls}, nil
}

// Tools wraps each tool with Tool.
func (g *Guard) Tools(ts ...tools.Tool) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		out[i] = g.Tool(t)
	}
	return out
}
