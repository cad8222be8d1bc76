// Package streamrules is the core of stream rules for LLM agents: rules that watch
// what an agent does and step in exactly where a miss happens.
//
// # Glossary
//
//   - chat: one conversation, named by the chat ID the host passes in.
//   - move: one user message and everything the agent does about it ([Engine.BeginMove]
//     … [Move.End]).
//   - tour: one model call inside a move; a move has one or more tours.
//   - environment: names the host's code says hold now (telegram, client_ops, master,
//     picture, its own); a rule's when must all hold.
//   - soft: a "tool:<name>" rule: a <system-reminder> prepended to that tool call's result,
//     model-only.
//   - hard: a "text" rule: the finished answer is discarded unseen and the tour replayed
//     once with a <system-interrupt> (or repaired in place by its fix).
//   - held speech: while a text rule is armed, streamed chunks are held and released only up
//     to a point no continuation can discard, repair or cut.
//   - fix: a deterministic repair of the answer in place (replace_regex, append_if_missing,
//     …), no extra model call ([Fix]).
//   - shadow: a rule that is evaluated and counted but does not act, to roll it out safely.
//   - gate: a rule that stops a tool call before it runs.
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
//	ctx, move := eng.BeginMove(ctx, "chat-42", seeds.EnvTelegram, seeds.EnvMaster)
//	reminders := move.ToolReminders(ctx, "shell", `{"cmd":"ls"}`)   // soft half
//	verdict := move.CheckAnswer(ctx, answerText)                    // hard half
//	err = move.End(ctx, err)                                        // one write to the store
//
// Any agent loop can call those two entry points; the middleware package wires them into
// LangChainGo. A loop of your own also calls [Move.BeginTour] before each model call, so
// an environment changed in the middle of the move ([Move.AddEnvironment], say from an
// image tool) holds from that call on, and may feed a held answer's chunks to a
// [Move.EarlyScanner] to stop the provider at the first certain miss. The rulesdb package
// is the PostgreSQL / SQLite store.
//
// # Running your own agent loop
//
// A host that does not use LangChainGo's executor drives a move itself. Per move:
// [Engine.BeginMove] with the chat and the environments that hold, and [Move.SetInput]
// with the user's message (for the context atoms). Per tour (model call):
// [Move.BeginTour]; if [Move.Armed], hold what the model streams, giving the chunks to a
// [Move.HeldScanner] ([Scanner.Scan] cuts the answer at the first certain miss of an early
// rule, [Scanner.Release] says how much of it may go to the client now); then judge the
// whole response with [Move.CheckResponse] (its text and the tool calls it declares), or
// [Move.CheckShownResponse] when part of it was shown, or [Move.CheckAnswer] for text
// alone. A [Verdict] with Discard set means: show nothing of it, run none of its calls,
// and replay the tour with Verdict.Interrupt added as a human message; Fixed, when set, is
// the text to show instead. Per tool call: run it on a context from [WithToolCall] unless
// [Move.GateCall] refuses it (its reminders are then the call's result), mark a failure
// with [MarkToolFailed] or [Move.ToolError], and lay the reminders of
// [Move.ToolReminders] on the result with [Splice] in the prompt copy only. At the end,
// [Move.End] once, with the run's error. The middleware package is this loop, written
// once for LangChainGo; its model and tool wrappers are the reference.
//
// # Implementing a Store
//
// A [Store] has three methods: LoadRules (the rules; disabled and broken rows may be among
// them: the engine validates and skips), LoadChat (a chat's move counter and each rule's
// last-fired move, for the repeat policies) and SaveMove (one finished move in one write).
// [MemoryStore] is the reference, small enough to read whole; package rulesdb is the
// PostgreSQL and SQLite one. The rest is optional, found by type assertion: [ChangeNotifier]
// makes every engine on the store reload on an edit, [Claimer] makes repeat-limited rules
// fire once across concurrent moves of a chat, [MoveQueuer] lets End hand the record over
// without waiting for the write, [RuleEditor] backs the rule tools of package ruletools, and
// [FiringCounter] and [StatsCounter] back [Engine.Stats]. Every method may be called from
// many goroutines at once, and LoadChat and SaveMove must return when their context is
// done (the engine bounds them with Config.StoreTimeout).
//
// # Predicates, field paths and fixes
//
// A rule's condition is a regex, or a [Predicate] tree (contains_regex, not_contains_regex,
// starts_with_regex, ends_with_regex, max_words, min_words, max_chars, combined with
// all_of, any_of and not_); AppliesWhen scopes it. Every regex of every tree of a group
// goes into the group's one matcher, so trees cost one prefilter pass like plain rules.
// A tool rule's Field (edits.new_string) judges each value the path names
// (see Rule.Field).
//
// A text rule's [Fix] repairs a missed answer in place: the verdict carries the repaired
// text in Verdict.Fixed, the firing has outcome fixed and a line [Diff]; no retry, no model
// call. Templates use the move's variables ([Move.SetVar]): {{message_id}}. A bad tree is
// a *ValidationError naming its node:
//
//	streamrules: invalid predicate.all_of[1].ends_with_regex: not an RE2 regular expression: …
//
// [Judge] runs one rule outside an engine, with the not_applicable verdict a backtest needs.
//
// # Stopping a call before it runs
//
// A tool rule in mode interrupt is a gate: [Move.CheckResponse] judges the calls a
// response declares with its text, and while a retry is left a matching call discards
// the response before anything runs. A gate's promise is that the call never runs, not
// that the text is unseen, so it never holds speech: once the client has seen part of the
// response's text, [Move.CheckShownResponse] keeps it, and [Move.GateCall], asked by the
// tool wrapper before each call, refuses the call, as it does after the ceiling. With Shell, a tool rule reads each value as a
// shell script and judges each simple command: the reader is a [ShellReader] hook
// (Config.ShellReader, or the one package shellcmd registers when imported), so this
// package stays free of a shell parser; with no reader, shell rules are skipped and named
// in the load summary, never matched raw.
//
// # Context: the user's message and the move's tools
//
// Context atoms read the move instead of the target: input_contains_regex and
// input_not_contains_regex the move's user input ([WithInput], [Move.SetInput]);
// tool_called, tool_succeeded and tool_failed, and edited_unchecked {edits, checks}, the
// move's tool record ([Move.ToolRecord]): each call's tool and whether it returned
// normally, in order, kept in the move only and never stored. A call fails when its Call
// returns an error ([Move.ToolError]) or when the tool marks its output with
// [MarkToolFailed]. The atoms are evaluated only when a tree reaches them; a verdict that
// reaches context it was not given does not fire ([Judge.Check] with [Facts] says
// not_applicable). A [Firing]'s Span is where its first matched regex atom matched.
//
// # Rolling a rule out
//
// A rule with Shadow set (or every rule, with Config.Shadow) is watched, not enforced: it
// is evaluated as a live one, and where it would fire a Firing with Outcome
// [OutcomeShadow] is recorded and "stream rule would fire" logged, but nothing is
// reminded, discarded or held. Every firing's outcome (corrected, missed_again, kept,
// complied, repeated, refused …) is decided by [Move.End]; [Engine.Stats] reports them per rule,
// and the metrics package exports them to Prometheus through the Config hooks.
//
// # A reminder budget
//
// Config.ReminderBudget bounds the rule text the reminders of one tour add to the prompt.
// Over it, reminders are laid severity high first, then by name, whole while the budget
// lasts, then as manifest blocks that name the rule and quote its Hint (or first
// sentence):
//
//	<system-reminder rule="bravo" delivery="manifest">Rule bravo applies to shell. (read it with stream_rule_read)</system-reminder>
//
// A rule with Delivery [DeliveryFull] is always whole and counts first; interrupts are
// never cut. [Move.ReadRule] (the stream_rule_read tool of package ruletools) returns the
// text of a rule delivered in manifest form in the same move and records the read
// (Firing.Read). Every firing carries its [Delivery]. The budget costs one comparison per
// tool call when it is 0, and a sum of ten integers when ten reminders fit.
package streamrules
