// Package callbacks gives LangChainGo callback handlers the clean view of a guarded agent:
// what the client and the database should see, never what only the model was told.
//
// Wrap the handler that feeds your client or your transcript store:
//
//	clean := callbacks.Clean(myHandler)
//	llm, _ := openai.New(openai.WithCallback(clean))            // provider events
//	agent := agents.NewOpenAIFunctionsAgent(llm, ts, agents.WithCallbacksHandler(clean))
//	guard := middleware.New(eng, &middleware.Config{Callbacks: clean}) // tool start/end
//
// The clean handler
//   - strips every <system-reminder …> and <system-interrupt …> block from prompts,
//     chain inputs and messages it passes on (the engine neutralises such tags in tool
//     output, so every real tag is one the engine wrote);
//   - drops the retry's interrupt message and the discarded answer before it;
//   - holds a provider's HandleLLMGenerateContentEnd while the middleware holds speech,
//     and passes it on only if the answer is accepted: a discarded answer never reaches
//     the handler.
//
// Tool start and end events with the clean output come from the middleware's tool
// wrapper, because LangChainGo's executor never sends them itself.
package callbacks
