// Package gateway is an OpenAI-compatible HTTP gateway that gives stream rules to any
// agent that can set a base URL, in any language: an http.Handler over an
// *streamrules.Engine, in front of an OpenAI-protocol upstream (the provider, vLLM,
// Ollama).
//
//	gw, err := gateway.New(eng, &gateway.Config{Upstream: "https://api.openai.com/v1"})
//	http.ListenAndServe("127.0.0.1:8080", gw)
//
// It serves POST /v1/chat/completions (streaming and not) and passes GET /v1/models
// through. `streamrules serve` runs one; `streamrules serve --console` serves the rules
// console (package console) beside it on the same listener, over the same engine, and
// lets a key that may claim master log in there ([Keys.Claim]).
//
// # Identity
//
//   - X-Streamrules-Chat names the chat. Without it a request is a chat of its own (its
//     tours are still found by their tool call ids), so repeat limits mean nothing.
//   - X-Streamrules-Env names the move's environments, comma-separated; a name the engine
//     does not know is a 400 naming it. On a later tour it sets the environment from the
//     next model call on.
//   - X-Streamrules-Vars sets the move's variables (name=value, comma-separated), for the
//     templates of fixes.
//
// These headers never go upstream.
//
// # The move, from requests
//
// A request whose messages end with anything but role=tool messages begins a move of the
// chat (ending the chat's open move, unanswered, if there was one). A request whose
// trailing role=tool messages answer the calls of the open move's last response is the
// next tour of that move. The response with no tool calls (the final answer) ends the
// move with one write, as Move.End does; a move whose next tour does not come within
// Config.IdleTimeout is ended unanswered. A client that edits its history so that its
// trailing tool results answer calls the move did not hand out starts a new move with
// them: their calls are judged as the new move's. Each role=tool message must answer a
// call of the assistant message before it, or the request is a 400.
//
// The open move lives in this process: behind a load balancer, route by
// X-Streamrules-Chat (sticky sessions), so every tour of a move reaches the replica that
// holds it. The move records, stats and repeat limits are in the shared store.
//
// # The halves
//
//   - Soft: each role=tool result of the move is judged by the call it answers (the name
//     and arguments of the matching tool_call), and the call's reminders are prepended
//     to its content in the upstream copy only, laid out as streamrules.Splice lays it
//     (output capped and neutralised). Later requests get the same bytes, so the
//     provider's prompt-cache prefix holds. The client's history never holds a reminder.
//     Tool-record atoms (tool_called, tool_succeeded, tool_failed, edited_unchecked) read
//     the calls and results in the messages. The protocol has no status for a result, so a
//     result that is a JSON object with an "error" member, or whose text starts with
//     "error:" or "error ", is a failed call; any other, a successful one.
//   - Hard: the final response is judged (Move.CheckResponse). A miss with a retry left
//     is discarded unseen and replayed once, with the discarded answer (neutralised) and
//     the <system-interrupt> added to the upstream copy; a fix repairs in place. Before
//     it, the response's reasoning (message.reasoning_content, or reasoning) is judged by
//     the thinking rules (Move.CheckThinking): a miss discards the whole response, its
//     reasoning, text and calls, on the same retry ceiling, and the replay gets its text
//     and the interrupt, never its reasoning. The client gets only the accepted answer;
//     usage counts every upstream call.
//   - Gates: the tool_calls of a response are judged before the client sees them. With a
//     retry left a match discards the response like a text miss. After the ceiling (or,
//     streaming, once some of its text was released) the call is refused in place: it
//     never reaches the client, so it never runs, and the upstream gets the refusal block
//     as that call's result (at once when every call was refused, else beside the next
//     tour's results), and the client gets what follows.
//
// # Streaming
//
// With stream: true the upstream streams too. While a rule could discard or repair the
// answer, its text reaches the client as the engine's release lets it (Scanner.Release,
// as the middleware's held speech); otherwise chunk by chunk, as the upstream sent them.
// With early interrupt a certain miss cuts the upstream stream at once. Tool-call deltas
// are assembled and held until the response ends, then sent whole (one delta per call),
// without the calls a gate refused. Reasoning deltas are held with the answer they
// precede. While a thinking rule is armed they are scanned as they come
// (Move.ThinkingScanner) and the upstream stream is cut at the first certain miss; the
// answer's first text ends the reasoning, which is judged whole then, before any text is
// released. The client never gets a byte of a discarded response's reasoning. The
// client's stream is one id, one role, the accepted text, the calls, a finish chunk, the
// usage of every upstream call summed (with stream_options.include_usage) and [DONE]. A
// client that goes away cancels the upstream call; an upstream stream that breaks off
// gets the client an error event, then a cut connection (never a short answer passing for
// a whole one), and the move is ended. Config.UpstreamTimeout bounds the wait for the
// upstream's headers and for each next chunk.
//
// Fields the gateway does not act on (response_format, images, vendor fields) go upstream
// as the client wrote them. n>1 is refused with a 400: the rules judge one answer. An
// upstream error is passed to the client with its status and body, and the move stays
// open: the client's retry of the request is the same tour.
package gateway
