package middleware

import (
	"context"
	"errors"
	"fmt"

	"github.com/tmc/langchaingo/agents"
	lcb "github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"

	"github.com/streamrules/streamrules"
)

// Run plays one move of chat chatID: it begins the move in the environments env, with
// input as the move's input (what input_contains_regex reads), runs
// exec on input with the client handler's streaming (see Config.Callbacks), and ends the
// move, which counts it and writes its firings. It returns the answer, and the run's
// error joined with the store's (errors.Is finds either; the run's comes first).
//
// exec is usually an executor from Guard.Executor, over an agent built with Guard.Model
// and Guard.Tools. Like chains.Run, it needs exactly one input key besides memory's.
func (g *Guard) Run(ctx context.Context, exec chains.Chain, chatID, input string, env ...string) (string, error) {
	var out string
	err := g.inMove(streamrules.WithInput(ctx, input), chatID, env, func(ctx context.Context) error {
		var err error
		out, err = chains.Run(ctx, exec, input, g.runOptions(nil)...)
		return err
	})
	return out, err
}

// Call is Run for a chain with several inputs or outputs, as chains.Call is to chains.Run.
// The move's input is inputs["input"], or the one input when there is only one string.
// Options given here come after the guard's own, so a chains.WithStreamingFunc of yours
// replaces the client handler's streaming for this move.
func (g *Guard) Call(ctx context.Context, exec chains.Chain, chatID string, inputs map[string]any, env []string, opts ...chains.ChainCallOption) (map[string]any, error) {
	var out map[string]any
	if in, ok := callInput(inputs); ok {
		ctx = streamrules.WithInput(ctx, in)
	}
	err := g.inMove(ctx, chatID, env, func(ctx context.Context) error {
		var err error
		out, err = chains.Call(ctx, exec, inputs, g.runOptions(opts)...)
		return err
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
// as failed (its firings are still written) and goes on up.
func (g *Guard) inMove(ctx context.Context, chatID string, env []string, fn func(context.Context) error) (err error) {
	ctx, span := g.startMove(ctx, chatID) // trace.go
	ctx, move := g.eng.BeginMove(ctx, chatID, env...)
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
	runErr := fn(ctx)
	ended = true
	return move.End(ctx, runErr)
}

// runOptions streams to the client handler, then the caller's options. LangChainGo's
// OpenAIFunctionsAgent ignores its own handler for streaming and takes the run's
// streaming func instead; MRKL and conversational agents let the run's func replace
// theirs: so the run's func is the one way that reaches every agent.
func (g *Guard) runOptions(opts []chains.ChainCallOption) []chains.ChainCallOption {
	if g.callbacks == nil {
		return opts
	}
	cb := g.callbacks
	out := make([]chains.ChainCallOption, 0, len(opts)+1)
	out = append(out, chains.WithStreamingFunc(func(ctx context.Context, chunk []byte) error {
		cb.HandleStreamingFunc(ctx, chunk)
		return nil
	}))
	return append(out, opts...)
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
// callbacks.Clean), or nil. Give it to a provider (openai.WithCallback) for the model's
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
