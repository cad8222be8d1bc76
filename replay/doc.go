// Package replay backtests stream rules: it runs past chats, stored as JSON Lines
// transcripts, through the same streamrules.Engine that will enforce the rules, and tells
// for each rule how often it would have fired and on what.
//
//	f, err := os.Open("last-week.jsonl")
//	…
//	rep, err := replay.Run(ctx, rules, []replay.Source{{Name: "last-week.jsonl", R: f}}, nil)
//	…
//	err = rep.WriteText(os.Stdout)            // or json.Marshal(rep)
//
// The command line does the same: `streamrules replay --rules rules.yaml last-week.jsonl`.
//
// # The transcript format
//
// One move per line, a JSON object:
//
//	{"chat":"tg-7","move":12,"env":["telegram","client_ops"],"tools":[{"name":"shell","args":"{\"cmd\":\"df -h\"}"}],"answer":"12G free. ↩ #12"}
//
// Its fields:
//
//   - chat (required): the conversation. The repeat policies (once, after:N) count per chat.
//   - move: the move's number in its chat, 1-based. Absent: the one after the chat's
//     previous line. Numbers must grow within a chat; gaps are kept.
//   - env: the environments that held in the move (telegram, client_ops, master,
//     picture, or names given in Options.Environments). A name the engine does not know
//     is ignored, as it would be live, and listed in Report.UnknownEnv.
//   - input: the user's message that began the move (the chain's input), what a rule's
//     input_contains_regex reads. Absent: not known, and a verdict that needs it is
//     not applicable (the rule does not fire, and counts in not_applicable when the atom
//     is in its applies_when).
//   - tools: the move's tool calls in order; args is the input the tool received (a
//     JSON object written as a string, as the model sent it; an object is accepted too);
//     ok is false for a call that failed (a Go error, or an output the host marked with
//     streamrules.MarkToolFailed), absent or true otherwise. The calls are also the move's
//     tool record, what tool_called, tool_succeeded, tool_failed and edited_unchecked
//     read: every call comes before the answer; a tool rule sees the calls before its own.
//   - answer: what the model said first in the move: the first answer the text rules
//     judged, before a discard or a fix (see below). It is what a backtest judges.
//   - reasoning: the model's reasoning in the move's first response that had some (up to
//     the answer's), what the thinking rules judge, before the answer; a thinking discard
//     spends the move's retry, as live. Absent: the model gave none.
//   - discarded, accepted: the answers the rules discarded live, and the one the client
//     got (absent: answer). Kept for the record; a backtest does not judge them.
//   - tools[].refused: the call was stopped by a gate live and never ran.
//
// A line with all of them:
//
//	{"chat":"dev-1","input":"Add a test for parse.","tools":[{"name":"write_file","args":"{\"path\":\"a_test.go\"}"},{"name":"run_tests","args":"{}","ok":false}],"answer":"Done."}
//
// Unknown fields are an error, so a misspelt "anwser" is not read as an empty answer,
// and so are what a rule file refuses (package rulefile checks both): a key twice, a key
// in another case ("Chat"), invalid UTF-8 and lone surrogate escapes. A line is at most
// [MaxLineBytes] (16 MiB); a longer one is an error, read without being kept. A bad line
// stops the run with its file and line:
//
//	week.jsonl:3: unknown field "anwser"
//	week.jsonl:9: "chat" is missing or empty: every move belongs to a chat
//	week.jsonl:12: chat "tg-7": move 4 comes after move 9: a chat's moves must be in order
//
// Lines of different chats may interleave; each chat's lines must be in its order.
//
// # What a would-fire means
//
// Each move is played as the middleware plays it live: BeginMove with the move's
// environments, ToolReminders for each call, CheckAnswer on the answer, End. A rule
// "fires" in a move when the engine fires it there, so everything the engine decides
// holds in a backtest too: `when`, the repeat policy over the chat's earlier moves (a
// `once` rule fires once per chat, as it would have), silence for the rest of a move
// once fired.
//
// What a backtest cannot do is replay: live, a text rule's miss throws the answer away
// and the model writes another one, which a transcript does not have. So each move's
// recorded answer is checked once, a would-fire is counted, and the replay goes on with
// the next move as recorded. With one answer checked per move the retry ceiling is never
// spent; RuleReport.Discards counts the would-fires that would have discarded (all of
// them, unless Options.MaxRetriesPerMove turns replays off, but the misses a fix repairs
// in place; a templated fix needs the move's Vars, as it needs Move.SetVar live).
//
// If rules were live when a transcript was recorded, the answer the client got is already
// corrected, and a backtest of it would see only what got past them. So answer is what
// the model said first (the discarded answer, where a rule discarded it; the draft a fix
// repaired), what a rule under test must see; accepted keeps what the client got.
// [Recorder] writes a guard's moves so (middleware.Config.Transcript), and such a
// transcript replays to the counts its moves produced; the demo (examples/agent) uses it.
//
// A gate (a tool rule in mode interrupt) is asked first for each call, as the tool
// wrapper asks it live: a matching call would never have run, so it is a would-fire of
// its own (a gate fires per call, every time), it reminds nothing, and its example is
// marked Gate ("gate": true in --json, as is the rule's report). It counts in Discards
// while replays are on: live, the response declaring it would have been discarded.
//
// A soft tool rule fires at most once per move; RuleReport.Calls counts the calls of its
// tool in moves in scope, so Fired of Calls reads as "reminded on so many calls".
// A move is in scope for a rule when the rule's `when` holds in it. Rate is the share of
// its chances a rule took, and RateOf says which: a text rule's moves in scope, a tool
// rule's calls (soft or gate alike, so their rates compare).
//
// # Rules under test
//
// Every rule given is replayed as if enabled and enforced (disabled and shadow rules
// included), since the question is "what if it were on"; Options.AsStored keeps the
// stored state instead. Each rule is validated as the engine validates it; a bad one
// stops the run with its name and field.
//
// # Producing transcripts
//
// From a LangChainGo agent behind a guard: set middleware.Config.Transcript to
// NewRecorder(f), and every move run through Guard.Run, Guard.Call or Guard.BeginMove and
// EndMove is a line, as the rules saw it. From OpenAI chat-completions logs: FromOpenAI
// converts them (see its doc for the log format). LangChainGo memory
// holds only the user's input and the final output of each run (the executor saves
// nothing else), so a transcript built from memory alone has no tool calls: pair each
// llms.HumanChatMessage with the llms.AIChatMessage after it, whose content is the
// answer; it backtests text rules only. FromChatMessages does that.
//
// # Cost
//
// The engine's own per-move path plus JSON decoding: about 35 µs of CPU a move against
// 100 rules (BenchmarkRun; the README has the figures). Lines are decoded on a goroutine
// of their own, and moves replay on Options.Workers goroutines (one per core by default),
// each owning a fixed set of chats, so each chat's moves still reach the engine in
// order; the report, and the first error, are the same for any number of workers.
// Memory grows with the number of chats (their repeat-policy state), not with the
// number of moves.
//
// # Tracing
//
// Options.Tracer takes the middleware's hook (middleware.Tracer; package tracing makes
// OpenTelemetry spans of it): each replayed move is a span streamrules.move, with a
// gen_ai.guardrail.result event per would-fire, and each tool call a span execute_tool
// NAME under it (the reminders it would have carried, or refused by a gate). A
// transcript has no model calls, so there are no chat spans, and a text rule's
// would-fire has outcome "none": its replay never came. This package imports no
// OpenTelemetry; `streamrules replay --trace` wires package tracing in.
package replay
