// Package openaitest provides an httptest server that speaks enough of the
// OpenAI chat-completions protocol for LangChainGo's real llms/openai client.
//
// Answers are scripted with the same [scripted.Reply] values used by package
// scripted. Streaming requests get server-sent events shaped like the real
// API's (role delta, content pieces, tool calls announced with id, type and
// name before their arguments arrive in pieces, a finish_reason chunk, an
// optional usage chunk, then [DONE]); other requests get a plain
// chat.completion object. Like the real API, the server applies "stop"
// sequences, rejects malformed tool-call histories with a 400, and answers
// Reply.Err with an OpenAI-style error body. Every request is recorded and
// available through [Server.Requests].
package openaitest
