// Package streamrules is the core of stream rules for LLM agents: rules that watch
// what an agent does and step in exactly where a miss happens.
//
// A line in the system prompt is paid on every request and forgotten by the fiftieth
// move; a rule is silent until the miss, and speaks only there. A rule is for what the
// model knows but forgets.
//
// There are two halves:
//
//   - soft (scope "tool:<name>", mode "remind"): when a tool call's compact-JSON
//     arguments match, the prompt copy of that call's result gets a
//     <system-reminder rule="…">…</system-reminder> block in front. The client, the
//     database and the callbacks see the clean output.
//   - hard (scope "text", mode "interrupt"): when a finished answer matches (or, with
//     negate, does not match), the answer is thrown away unseen and the tour is replayed
//     once with the discarded answer and a <system-interrupt …> human message.
//
// This package knows no framework and no database. An [Engine] compiles the rules a
// [Store] holds; per-move state lives in a [Move] carried by the context:
//
//	eng, err := streamrules.New(ctx, store, &streamrules.Config{ToolResultMaxChars: 20000})
//	ctx, move := eng.BeginMove(ctx, "chat-42", streamrules.EnvTelegram, streamrules.EnvMaster)
//	reminders := move.ToolReminders(ctx, "shell", `{"cmd":"ls"}`)   // soft half
//	verdict := move.CheckAnswer(ctx, answerText)                    // hard half
//	err = move.End(ctx, err)                                        // one write to the store
//
// Any agent loop can call those two entry points; the middleware package wires them into
// LangChainGo. The rulesdb package is the PostgreSQL / SQLite store.
//
// # Rolling a rule out
//
// A rule with Shadow set (or every rule, with Config.Shadow) is watched, not enforced: it
// is evaluated as a live one, and where it would fire a Firing with Outcome
// [OutcomeShadow] is recorded and "stream rule would fire" logged, but nothing is
// reminded, discarded or held. Every firing's outcome (corrected, missed_again, kept,
// complied, repeated …) is decided by [Move.End]; [Engine.Stats] reports them per rule,
// and the metrics package exports them to Prometheus through the Config hooks.
package streamrules
