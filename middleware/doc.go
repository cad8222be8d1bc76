// Package middleware wires a streamrules engine into LangChainGo.
//
// Wrap the three parts of a stock agent, then run each move inside the engine's move:
//
//	guard, err := middleware.New(eng, &middleware.Config{Callbacks: clientHandler})
//	model := guard.Model(llm)              // held speech + interrupt/retry-once
//	ts := guard.Tools(myTools...)          // clean outputs, soft hits recorded
//	agent := guard.Agent(agents.NewOneShotAgent(model, ts))
//	exec := agents.NewExecutor(agent, agents.WithMemory(mem))
//
//	ctx, move := eng.BeginMove(ctx, "chat-42", streamrules.EnvTelegram)
//	out, err := chains.Run(ctx, exec, input)
//	err = move.End(ctx, err)
//
// or, with the client's streaming and callbacks wired for you, in one call per message:
//
//	exec := guard.Executor(agent, agents.WithMemory(mem))
//	out, err := guard.Run(ctx, exec, "chat-42", input,
//		middleware.WithEnvironments(streamrules.EnvTelegram),
//		middleware.WithVars(map[string]string{"message_id": "4711"}))
//
// Run's options: WithEnvironments (an unknown name fails the move before the chain runs,
// naming it and the known ones, unless Config.LenientEnvironments), WithVars (the move's
// variables, for fixes' templates), WithInput (what input_contains_regex reads, when the
// chain's input is not the user's bare message), WithStreamingFunc (the client's stream
// for this move) and WithChainOptions. By hand, Guard.BeginMoveChecked fails the same way.
//
// # Transcripts
//
// Config.Transcript (a Recorder; replay.NewRecorder writes JSON Lines) gets every answered
// move as the rules saw it (MoveRecord): what the model said first, each discarded answer
// and each call a gate stopped, the accepted answer, and the move's input, environments,
// variables and tool record. `streamrules replay` backtests it to the counts the moves
// produced.
//
// What each wrapper does:
//
//   - The tool wrapper records the call in the move (the engine matches soft rules on the
//     tool's name and compact-JSON input), sends HandleToolStart/HandleToolEnd with the
//     clean output to Config.Callbacks, and hands the executor the clean output: the
//     executor's intermediate steps, memory and callbacks never see a reminder.
//     Every call inside a move joins the move's tool record, failed when Call returned an
//     error or the tool called streamrules.MarkToolFailed(ctx) (the one way to say an
//     output is a failure), for the rules' tool_succeeded, tool_failed and
//     edited_unchecked atoms.
//   - Run and Call give the move its input (the chain's input value), what
//     input_contains_regex reads; with the stock BeginMove + chains.Run the agent wrapper
//     takes it from the chain's input ("input", or the only key) at the first Plan.
//   - The agent wrapper's Plan lays each call's reminders onto a copy of the intermediate
//     steps, which only the prompt sees. This works for every agent: OpenAIFunctionsAgent
//     sends observations as role=tool messages; MRKL and conversational agents put them
//     in a text scratchpad. The splice is deterministic, so the prompt-cache prefix holds.
//   - The model wrapper checks what each finished answer says (see AnswerFormat) against
//     the text rules. While a text rule is armed, streamed chunks are held, and what
//     becomes final (no continuation can discard, repair or cut it: Scanner.Release) goes
//     to the client as it streams, the rest with the accepted (or repaired) answer;
//     otherwise they pass through one by one. A miss a rule's fix repairs is repaired in place, with no replay and no model
//     call, and holds speech even after the retry ceiling. A
//     violating answer is discarded unseen (its tool calls never run) and the tour is
//     replayed with the discarded answer and a human-role <system-interrupt>; at most
//     once per move by default. With early interrupt (Rule.Early, or the engine's
//     Config.EarlyInterrupt), the held text of a tool-calling answer is scanned as it
//     streams, and a miss that is already certain cancels the provider call at once and is
//     replayed the same way. Before each judged call the move's environment is brought up
//     to date (streamrules.Move.BeginTour), so a picture a tool brought in counts from the
//     next model call on.
//   - Gates (tool rules in mode interrupt): the model wrapper also judges the tool calls
//     each response declares (DeclaredCalls: ToolCalls, or MRKL's Action / Action Input)
//     before the agent gets it. A gate never holds speech: the text streams as the text
//     rules' release lets it, and only the tool-call chunks and agent events wait for the
//     verdict. While nothing of the response was shown, a matching call discards it like
//     a text miss (both in one interrupt when both happen). Once part of its text was
//     shown, or after the retry ceiling, the shown text stands and the tool wrapper
//     refuses the matching call: it never runs, no tool event is sent, and its prompt
//     copy is the gate's refusal block; no retry is spent. A held response's tool-call
//     chunks are then left out of the client's stream.
//
// # Runtime boundaries
//
// Config.CallTimeout, CallRetries and Heartbeat bound every model call through the
// wrapper: a per-request timeout; retries with exponential backoff and jitter on
// timeouts, lost connections, 429 and 5xx (Retry-After honoured), never on other 4xx and
// never once a chunk of that request reached the client; a heartbeat callback while a
// call runs. A transport retry does not spend the move's retry. Install Transport in the
// provider's HTTP client so the wrapper sees statuses and Retry-After exactly:
//
//	llm, err := openai.New(openai.WithHTTPClient(&http.Client{Transport: middleware.Transport(nil)}))
//
// Whatever the provider returned, once the context has ended the wrapper returns the
// context's error: LangChainGo's openai client answers a stream cancelled half-way with
// the part it had and no error, and a cut answer must never pass for a whole one.
//
// # Tracing
//
// Config.Tracer, if set, gets a span per move (Run, Call, or BeginMove/EndMove for a
// host that runs its executor itself), per model call and per tool call; package tracing
// implements it with OpenTelemetry. The middleware itself imports no tracing library;
// unset, nothing is called and nothing more is allocated.
//
// # The client's stream
//
// LangChainGo's openai client streams a response's tool calls as JSON through the same
// streaming func as the text. Inside a move the model wrapper keeps those chunks out of
// the client's stream (Config.StreamToolCalls lets them through).
//
// # The model's reasoning
//
// While a thinking rule (scope thinking) is armed, the model wrapper installs a reasoning
// func, whether or not the host gave one, and feeds the reasoning to the move's thinking
// scanner: at the first certain miss the provider is stopped while the model still
// thinks, and the tour is replayed with the interrupt; the cut reasoning is never sent
// back. The answer's text waits until the reasoning is judged (at its first chunk), then
// streams as the text rules allow. [Reasoning] reads a response's reasoning (the openai
// client's reasoning_content, Anthropic's thinking blocks). The reasoning reaches the
// host's client only through its own llms.WithStreamingReasoningFunc, and in a held tour
// only with the accepted response, in one piece: a discarded response's reasoning never.
//
// Outside a move (no streamrules.Move in the context) every wrapper passes straight
// through, but for the provider shims of Guard.Model (compat.go): they close gaps of
// some LangChainGo clients that break stock agents with or without rules.
package middleware
