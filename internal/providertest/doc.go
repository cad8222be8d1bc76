// Package providertest serves the wire protocols of LangChainGo's Anthropic,
// Ollama and Mistral clients from a local httptest server, scripted per
// request with the same [scripted.Reply] values as packages scripted and
// openaitest, so the guarded agent can be run against each provider's real
// client with no network.
//
//	srv := providertest.New(t, providertest.Anthropic,
//		scripted.Reply{Text: "Let me check.", ToolCalls: calls},
//		scripted.Reply{Text: "Done."})
//	llm := srv.LLM(t) // *anthropic.LLM pointed at srv
//
// Each server speaks its provider faithfully, streaming and not:
//
//   - Anthropic: POST /v1/messages. A streamed answer is SSE: message_start,
//     then per content block content_block_start, content_block_delta
//     (text_delta, or input_json_delta pieces for a tool_use block) and
//     content_block_stop, then message_delta (stop_reason) and message_stop.
//     Text and tool calls of one Reply become separate blocks, [text, tool_use…],
//     as Claude answers; Reply.Blocks gives several text blocks.
//   - Ollama: POST /api/chat. NDJSON lines of {"message":{…},"done":false}, then a
//     done line; "stream" absent means streaming, as the real server does.
//     Ollama's v0.1.14 client cannot send or receive tool calls, so a Reply's
//     ToolCalls are an error here.
//   - Mistral: POST /v1/chat/completions. OpenAI-style SSE chunks ending in
//     [DONE]; tool calls arrive whole in one delta, as Mistral sends them.
//
// Every request is recorded ([Server.Requests]) and checked against the
// provider's documented rules: roles alternate where the provider demands it,
// every tool_use has its tool_result (and a tool message its tool_call_id),
// no empty text blocks, system content where the provider expects it, and a
// request that carries tool blocks also declares its tools. A request that
// breaks a rule is answered with the provider's 400 error, as the real API
// would, and its Violations say why.
//
// Tests that cancel mid-stream set [Server.OnChunk]: it runs after each
// streamed piece is flushed, so a test cancels at an exact point without
// sleeping.
package providertest
