package middleware

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/tmc/langchaingo/agents"
	lcb "github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
)

// RunOption tunes one move of Guard.Run or Guard.Call.
type RunOption func(*runConfig)

type runConfig struct {
	env       []string
	vars      map[string]string
	input     *string
	stream    func(ctx context.Context, chunk []byte) error
	chainOpts []chains.ChainCallOption
}

// WithEnvironments names the environments that hold in the move: names the engine knows
// from its store (seeds.EnvTelegram, seeds.EnvClientOps, … on a store seeded with
// seeds.MustDefault()) or from streamrules.Config.Environments. A name the engine does
// not know fails the move before the chain runs (see Config.LenientEnvironments).
// Given twice, the names add up. Default: none.
func WithEnvironments(names ...string) RunOption {
	return func(c *runConfig) { c.env = append(c.env, names...) }
}

// WithVars sets the move's variables (streamrules.Move.SetVar) before the chain runs: what
// a fix's template reads, as the seeded tail fix reads {{message_id}}. Given twice, the
// maps merge, the later value winning.
func WithVars(vars map[string]string) RunOption {
	return func(c *runConfig) {
		if c.vars == nil {
			c.vars = map[string]string{}
		}
		maps.Copy(c.vars, vars)
	}
}

// WithInput sets the move's input, what the context atoms (input_contains_regex) read, when
// it is not the chain's input as given: a host that prefixes the user's message with a
// header for the model gives the bare message here. Default: the chain's input.
func WithInput(input string) RunOption {
	return func(c *runConfig) { c.input = &input }
}

// WithStreamingFunc streams this move's accepted answer to f instead of the client
// handler's HandleStreamingFunc (Config.Callbacks). An error from f stops the run.
func WithStreamingFunc(f func(ctx context.Context, chunk []byte) error) RunOption {
	return func(c *runConfig) { c.stream = f }
}

// WithChainOptions passes options to chains.Run or chains.Call, after the guard's own.
func WithChainOptions(opts ...chains.ChainCallOption) RunOption {
	return func(c *runConfig) { c.chainOpts = append(c.chainOpts, opts...) }
}

func runConfigOf(opts []RunOption) runConfig {
	var c runConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}

// Run plays one move of chat chatID: it begins the move in the environments of
// WithEnvironments, with input as the move's input (what input_contains_regex reads;
// WithInput overrides it) and the variables of WithVars, runs exec on input with the
// client handler's streaming (see Config.Callbacks; WithStreamingFunc replaces it), and
// ends the move, which counts it and writes its firings. It returns the answer, and the
// run's error joined with the store's and the transcript's (errors.Is finds either; the
// run's comes first).
//
// An environment name the engine does not know is an error wrapping
// streamrules.ErrUnknownEnvironment that names it and the known ones; the move never
// begins and the chain never runs (unless Config.LenientEnvironments).
//
// exec is usually an executor from Guard.Executor, over an agent built with Guard.Model
// and Guard.Tools. Like chains.Run, it needs exactly one input key besides memory's.
func (g *Guard) Run(ctx context.Context, exec chains.Chain, chatID, input string, opts ...RunOption) (string, error) {
	c := runConfigOf(opts)
	if c.input == nil {
		c.input = &input
	}
	var out string
	err := g.inMove(ctx, chatID, &c, func(ctx context.Context) (string, error) {
		var err error
		out, err = chains.Run(ctx, exec, input, g.runOptions(&c)...)
		return out, err
	})
	return out, err
}

// Call is Run for a chain with several inputs or outputs, as chains.Call is to chains.Run.
// The move's input is inputs["input"], or the one input when there is only one string
// (WithInput overrides it). Chain options (WithChainOptions) come after the guard's own.
func (g *Guard) Call(ctx context.Context, exec chains.Chain, chatID string, inputs map[string]any, opts ...RunOption) (map[string]any, error) {
	c := runConfigOf(opts)
	if c.input == nil {
		if in, ok := callInput(inputs); ok {
			c.input = &in
		}
	}
	var out map[string]any
	err := g.inMove(ctx, chatID, &c, func(ctx context.Context) (string, error) {
		var err error
		out, err = chains.Call(ctx, exec, inputs, g.runOptions(&c)...)
		answer, _ := out["output"].(string)
		return answer, err
	})
	return out, err
}

// callInput picks the user's message from a chain's inputs, as chainInput does: the
// "input" key, else the one string value.
func callInput(inputs map[string]any) (string, bool) {
	if in, ok := inputs["input"].(string); ok {
		return in, true
	}
	if len(inputs) == 1 {
		for _, v := range inputs {
			s, ok := v.(string)
			return s, ok
		}
	}
	return "", false
}

// inMove runs fn inside a move and ends it whatever happens: a panic in fn ends the move
// as failed (its firings are still written) and goes on up. The environments are checked
// first: a typo fails before anything runs.
func (g *Guard) inMove(ctx context.Context, chatID string, c *runConfig, fn func(context.Context) (string, error)) (err error) {
	if !g.lenientEnv {
		if err := g.eng.CheckEnvironments(c.env...); err != nil {
			return fmt.Errorf("middleware: chat %q: %w", chatID, err)
		}
	}
	if c.input != nil {
		ctx = streamrules.WithInput(ctx, *c.input)
	}
	ctx, span := g.startMove(ctx, chatID) // trace.go
	ctx = g.withRecord(ctx, c.env)        // transcript.go
	ctx, move := g.eng.BeginMove(ctx, chatID, c.env...)
	for name, value := range c.vars {
		move.SetVar(name, value)
	}
	ended := false
	if span != nil {
		defer endMove(span, move, &ended, &err) // runs last: after the move ended
	}
	defer func() {
		if ended {
			return
		}
		p := recover()
		if p == nil { // runtime.Goexit: end the move and let the goroutine go
			_ = move.End(ctx, errors.New("middleware: the move's goroutine exited"))
			return
		}
		_ = move.End(ctx, fmt.Errorf("middleware: move panicked: %v", p))
		panic(p)
	}()
	out, runErr := fn(ctx)
	ended = true
	err = move.End(ctx, runErr)
	return errors.Join(err, g.record(ctx, move, out, runErr))
}

// runOptions streams to the client (WithStreamingFunc, else the client handler), then
// the caller's chain options. LangChainGo's OpenAIFunctionsAgent ignores its own handler
// for streaming and takes the run's streaming func instead; MRKL and conversational
// agents let the run's func replace theirs: so the run's func is the one way that reaches
// every agent.
func (g *Guard) runOptions(c *runConfig) []chains.ChainCallOption {
	stream := c.stream
	if stream == nil && g.callbacks != nil {
		cb := g.callbacks
		stream = func(ctx context.Context, chunk []byte) error {
			cb.HandleStreamingFunc(ctx, chunk)
			return nil
		}
	}
	if stream == nil {
		return c.chainOpts
	}
	out := make([]chains.ChainCallOption, 0, len(c.chainOpts)+1)
	out = append(out, chains.WithStreamingFunc(stream))
	return append(out, c.chainOpts...)
}

// Executor wraps a with Agent (unless it is already this guard's) and returns a stock
// LangChainGo executor over it that sends its chain and agent events to the client
// handler (Config.Callbacks). opts come after, so an agents.WithCallbacksHandler of
// yours replaces it.
func (g *Guard) Executor(a agents.Agent, opts ...agents.Option) *agents.Executor {
	if ga, ok := a.(*guardedAgent); !ok || ga.g != g {
		a = g.Agent(a)
	}
	all := make([]agents.Option, 0, len(opts)+1)
	if g.callbacks != nil {
		all = append(all, agents.WithCallbacksHandler(g.callbacks))
	}
	return agents.NewExecutor(a, append(all, opts...)...)
}

// Callbacks returns the client handler as the guard hands it out (wrapped with
// clientview.Clean), or nil. Give it to a provider (openai.WithCallback) for the model's
// own events: its HandleLLMGenerateContentStart sees the clean messages, and the end of
// a discarded answer never reaches your handler.
func (g *Guard) Callbacks() lcb.Handler { return g.callbacks }

// Check reports the parts of agent this guard does not wrap, which would silently pass
// through: each tool not from Guard.Tools (soft rules never see its calls) and, for the
// stock agents whose model it can reach (OpenAIFunctionsAgent, OneShotZeroAgent,
// ConversationalAgent), a model not from Guard.Model (text rules never judge its
// answers). nil means every part it can see is wrapped. A tool left out on purpose is a
// reported part too: call it from a test of your wiring, not on every move.
func (g *Guard) Check(agent agents.Agent) error {
	if ga, ok := agent.(*guardedAgent); ok && ga.g == g {
		agent = ga.Agent
	}
	var problems []error
	for _, t := range agent.GetTools() {
		if gt, ok := t.(*guardedTool); !ok || gt.g != g {
			problems = append(problems, fmt.Errorf("middleware: tool %q is not wrapped by this guard (Guard.Tools): soft rules never see its calls", t.Name()))
		}
	}
	if m := agentModel(agent); m != nil {
		if gm, ok := m.(*guardedModel); !ok || gm.g != g {
			problems = append(problems, errors.New("middleware: the agent's model is not wrapped by this guard (Guard.Model): text rules never judge its answers"))
		}
	}
	return errors.Join(problems...)
}

// agentModel returns the model of a stock agent, or nil where it cannot be reached.
func agentModel(a agents.Agent) llms.Model {
	var chain chains.Chain
	switch a := a.(type) {
	case *agents.OpenAIFunctionsAgent:
		return a.LLM
	case *agents.OneShotZeroAgent:
		chain = a.Chain
	case *agents.ConversationalAgent:
		chain = a.Chain
	}
	if c, ok := chain.(*chains.LLMChain); ok {
		return c.LLM
	}
	return nil
}
