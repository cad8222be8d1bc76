// Package integration (directory integration_test) holds the whole chain under test: a stock LangChainGo agent
// and executor, LangChainGo's real openai client over HTTP with SSE streaming (against a
// local chat-completions server), the streamrules middleware, and the rulesdb store on a
// real PostgreSQL that the tests start themselves (see internal/pgtest).
package integration
