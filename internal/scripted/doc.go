// Package scripted provides a scripted [llms.Model] test double.
//
// A [Model] answers each GenerateContent call with the next [Reply] of its
// script (see [New]) or with whatever a function returns (see [NewFunc]). It
// behaves like a real provider where middleware can observe the difference:
// options are applied in order, text is streamed chunk by chunk through
// StreamingFunc / StreamingReasoningFunc, stop words cut the text the way a
// completion API does, tool calls come back in ContentChoice.ToolCalls with
// the legacy FuncCall field mirrored from the first one (as llms/openai does),
// and context cancellation is honoured. Everything the model was sent is
// recorded and available, deep-copied, through [Model.Calls].
//
// Streaming is deliberately the common denominator of the providers:
// StreamingFunc only ever receives non-empty text pieces. llms/openai also
// calls it with empty chunks (role and finish events) and with the JSON of
// every tool-call delta; use package openaitest when that matters.
//
// For tests that need the real llms/openai client on the wire, see
// package openaitest, which serves the same [Reply] values over HTTP.
package scripted
