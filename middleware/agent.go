package middleware

import (
	"context"
	"maps"
	"strings"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/schema"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/cleanview"
	"github.com/streamrules/streamrules/internal/splice"
)

// guardedAgent splices reminders into a copy of the intermediate steps, so only the
// prompt sees them; the executor's steps, the callbacks and memory keep the clean output.
type guardedAgent struct {
	agents.Agent
	g       *Guard
	format  AnswerFormat
	guarded map[string]bool // names of this guard's tools, as given and upper-cased (the executor's lookup)
}

// AgentOption tunes Agent.
type AgentOption func(*guardedAgent)

// WithAnswerFormat says what an answer of this agent's model says to the user, when the
// agent type alone does not tell (a custom agent). See AnswerFormat.
func WithAnswerFormat(f AnswerFormat) AgentOption {
	return func(a *guardedAgent) { a.format = f }
}

// Agent wraps a LangChainGo agent. Its Plan gets a copy of the intermediate steps in which
// each tool result is laid out for the prompt: the empty-output marker removed when
// reminders go on top, the output cut at the engine's ToolResultMaxChars, system tags in
// the output neutralised, the call's reminders in front. The model's own call goes back
// neutralised too: its tool name and arguments (the functions agent's tool calls) and, for
// a text agent, its thought and Action Input. The executor's steps, its callbacks and the
// tools keep the call as the model wrote it. The splice of a call is the same in every
// later tour of the move, so each request only appends to the one before.
//
// The agent type also fixes what an answer says, for the model wrapper's text rules:
// MRKL (NewOneShotAgent) and conversational agents answer after "Final Answer:" / "AI:";
// other agents (OpenAIFunctionsAgent) answer with the response's text content.
func (g *Guard) Agent(a agents.Agent, opts ...AgentOption) agents.Agent {
	ga := &guardedAgent{Agent: a, g: g, format: formatOf(a), guarded: map[string]bool{}}
	for _, t := range a.GetTools() {
		if gt, ok := t.(*guardedTool); ok && gt.g == g {
			ga.guarded[t.Name()] = true
			ga.guarded[strings.ToUpper(t.Name())] = true
		}
	}
	for _, o := range opts {
		o(ga)
	}
	return ga
}

// Unwrap returns the wrapped agent.
func (a *guardedAgent) Unwrap() agents.Agent { return a.Agent }

func formatOf(a agents.Agent) AnswerFormat {
	switch a.(type) {
	case *agents.OneShotZeroAgent:
		return FormatMRKL
	case *agents.ConversationalAgent:
		return FormatConversational
	}
	return FormatToolCalling
}

func (a *guardedAgent) Plan(
	ctx context.Context,
	steps []schema.AgentStep,
	inputs map[string]string,
	options ...chains.ChainCallOption,
) ([]schema.AgentAction, *schema.AgentFinish, error) {
	ctx = withAnswerFormat(ctx, a.format)
	if m := streamrules.MoveFrom(ctx); m != nil {
		if _, ok := m.Input(); !ok {
			// The stock wiring (BeginMove, then chains.Run) gives the move no input:
			// the chain's input is it, for input_contains_regex.
			if in, ok := chainInput(inputs); ok {
				m.SetInput(in)
			}
		}
		calls, total := m.ToolCalls()
		var ins *cleanview.Inserted
		// A text agent's scratchpad carries each step's log (the model's own thought) back
		// into the prompt; OpenAIFunctionsAgent sends only the calls, and groups parallel
		// calls by comparing logs, which must then stay as they are.
		textLog := a.format != FormatToolCalling
		steps, ins = spliceSteps(steps, calls, total, a.isGuarded, a.g.splice, textLog)
		if ins != nil {
			// What the engine put into this tour's prompt copy rides the context to the
			// clean callbacks of the calls below, so they remove exactly that.
			ctx = cleanview.WithInserted(ctx, ins)
		}
		inputs = neutralizeInputs(inputs)
	}
	actions, finish, err := a.Agent.Plan(ctx, steps, inputs, options...)
	if a.g.tracer != nil {
		noteActions(ctx, actions) // the calls' ids, for the tool spans (trace.go)
	}
	return actions, finish, err
}

// chainInput picks the user's message from an agent's inputs: the "input" key, which the
// stock agents and chains.Run use, else the one value when there is only one.
func chainInput(inputs map[string]string) (string, bool) {
	if in, ok := inputs["input"]; ok {
		return in, true
	}
	if len(inputs) == 1 {
		for _, v := range inputs {
			return v, true
		}
	}
	return "", false
}

// spliceSteps returns steps with each observation laid out for the prompt, each call's tool
// name and input neutralised and, with textLog, the model's own text of each step (a MRKL
// thought and its Action Input, which go back into the prompt) neutralised. The input is
// never modified; when nothing changes, it is returned as is.
// Each result that gets reminder blocks is recorded in ins, nil when there is none.
// The n-th step that reached a guarded tool is the move's n-th tool call; steps that never
// reached one (an unknown tool name, a parse error) are not counted and get no reminders.
func spliceSteps(steps []schema.AgentStep, calls []streamrules.ToolCall, total int, guarded func(tool string) bool,
	spl func(string, []streamrules.Reminder) string, textLog bool) (_ []schema.AgentStep, ins *cleanview.Inserted) {
	// The executor runs its tools one after another and plans only after the last returns,
	// so this run's guarded steps are the move's last calls: the first one is call
	// total-n. Calls made before this run (another run in the same move, the host's own)
	// are skipped.
	n := 0
	for _, step := range steps {
		if guarded(step.Action.Tool) {
			n++
		}
	}
	var out []schema.AgentStep
	next, index := 0, max(0, total-n)
	for i, step := range steps {
		var reminders []streamrules.Reminder
		if guarded(step.Action.Tool) {
			for next < len(calls) && calls[next].Index < index {
				next++
			}
			if next < len(calls) && calls[next].Index == index && sameCall(step.Action, calls[next]) {
				reminders = calls[next].Reminders
			}
			index++
		}
		// Engine.Splice lays the blocks in front of the body: a clean view of the prompt copy
		// drops exactly blocks.
		obs := spl(step.Observation, reminders)
		if blocks := splice.Blocks(reminders); blocks != "" {
			if ins == nil {
				ins = &cleanview.Inserted{}
			}
			ins.AddSplice(obs, obs[len(blocks):])
		}
		log := step.Action.Log
		if textLog {
			log = streamrules.Neutralize(log)
		}
		// The call as the model wrote it goes back into the prompt too: OpenAIFunctionsAgent
		// sends it as the AI message's tool call (name and arguments), a text agent as the
		// log's Action and Action Input (neutralised above with the log).
		tool, input := streamrules.Neutralize(step.Action.Tool), streamrules.Neutralize(step.Action.ToolInput)
		if obs == step.Observation && log == step.Action.Log && tool == step.Action.Tool && input == step.Action.ToolInput {
			if out != nil {
				out[i] = step
			}
			continue
		}
		if out == nil {
			out = make([]schema.AgentStep, len(steps))
			copy(out, steps[:i])
		}
		step.Observation = obs
		step.Action.Log = log
		step.Action.Tool, step.Action.ToolInput = tool, input
		out[i] = step
	}
	if out == nil {
		return steps, ins
	}
	return out, ins
}

// isGuarded reports whether the executor found a tool of this guard under this name. It
// looks tools up case-insensitively; the exact name, the usual case, costs no allocation.
func (a *guardedAgent) isGuarded(tool string) bool {
	return a.guarded[tool] || a.guarded[strings.ToUpper(tool)]
}

// sameCall matches an executor step to a recorded tool call. The executor looks tools up
// case-insensitively and trims the MRKL "\nObservation:" suffix from the input.
func sameCall(a schema.AgentAction, c streamrules.ToolCall) bool {
	return strings.EqualFold(a.Tool, c.Tool) && strings.TrimSuffix(a.ToolInput, "\nObservation:") == c.Input
}

// neutralizeInputs defuses system tags the user typed (the input, the chat history
// memory adds), so a client cannot pose as the system in the prompt. The executor keeps
// the original inputs for memory and callbacks.
func neutralizeInputs(inputs map[string]string) map[string]string {
	var out map[string]string
	for k, v := range inputs {
		if n := streamrules.Neutralize(v); n != v {
			if out == nil {
				out = maps.Clone(inputs)
			}
			out[k] = n
		}
	}
	if out == nil {
		return inputs
	}
	return out
}
