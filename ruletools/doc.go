// Package ruletools gives the master of an agent four LangChainGo tools to read and edit
// the stream rules from the chat itself:
//
//	stream_rule_list    {} or {"scope": "tool", "limit": 50, …}       a page of rules, with "loaded" and "fired"
//	stream_rule_create  {"name": …, "scope": …, "condition": …, …}    a new rule (enabled unless "enabled": false)
//	stream_rule_edit    {"name": "rule", "text": "…"}                 a partial patch; "new_name" renames
//	stream_rule_delete  {"name": "rule"}                              gone for good; its stats stay
//
// and every move, not only the master's, one more (Reader):
//
//	stream_rule_read    {"rule": "name"}                              the whole text of a rule delivered in manifest form
//
// Hand them to the agent next to its other tools:
//
//	store, _ := rulesdb.Open(ctx, dsn, cfg)
//	eng, _ := streamrules.New(ctx, store, nil)
//	agentTools := append(myTools, ruletools.New(store, eng)...)
//
// # Only the master
//
// Every call checks the move in its context: without a streamrules.Move whose environment
// holds "master" (eng.BeginMove(ctx, chat, seeds.EnvMaster, …)) the tool refuses,
// and so it does in a move another engine began (its "master" is not this engine's).
// The engine must know the name: a store seeded with seeds.MustDefault() lists it, and
// any other store needs it in streamrules.Config.Environments (an engine that does not
// know it ignores it in BeginMove, and every call refuses). The check is inside Call, so handing the tools to every chat is safe, if wasteful.
//
// # Output the model can act on
//
// Every result is a JSON object: {"ok": true, "message": …, "rule": {…}} on success, or
// {"ok": false, "error": "invalid condition: …", "field": "condition"} when something is
// wrong. Refusals, bad JSON, validation errors (the same validation as the engine's,
// `when` checked against eng.Environments()), a taken or missing name and store failures
// are all output, never a Go error, which would abort the agent run. Nothing is written
// when the answer is an error.
//
// # Bounded, and strict
//
// A rule is shown in its own JSON (streamrules.Rule's names, "enabled" for Disabled) plus
// "loaded", "problem" and "fired": the shape of package rulefile, which the streamrules
// command prints too. stream_rule_list filters by "name" (a part of it), "scope" ("text",
// "tool" or "tool:<name>"), "enabled" and "loaded", and pages: "limit" rules at most (20
// by default, 100 at most) and about 8 KB at most, in name order, with "next_cursor" to
// pass as "cursor" for the next page. With 10,000 rules a page stays under 8 KB where the
// whole list was megabytes. A rule's tests (its examples, see package ruletest) are left
// out of a page unless the input says "tests": true; create and edit show them.
//
// Inputs are decoded by rulefile as strictly as a rule file: an unknown key, a key in
// another case ("NAME"), a duplicate key, invalid UTF-8, null where the field has none, a
// name with space around it or data after the object is an error naming the field.
// Models write null to mean "unchanged": {"name": "x", "condition": null} is refused,
// not a cleared condition. null removes predicate, applies_when and fix; removing the
// predicate also needs the condition that replaces it in the same edit, or the rule
// would fire on every target. No output quotes more than an excerpt (64 characters) of its
// input, however large the input.
//
// # Reading a manifest rule
//
// Over the engine's reminder budget (streamrules.Config.ReminderBudget) a reminder comes
// as a short manifest block, <system-reminder rule="NAME" delivery="manifest">, with a
// hint and "read it with stream_rule_read". [Reader] is that tool: it returns the rule's
// whole text, {"ok": true, "rule": …, "text": …}, for a rule delivered in manifest form in
// the same move, and refuses any other rule (one delivered whole, one that did not fire,
// one from an earlier move). The read is recorded on the firing (streamrules.Firing.Read)
// and counted in the stats (manifest_read). Its input is decoded as strictly as the
// others' and capped at 1 KB; its output is bounded by the rule's own limit.
//
// # In force at once
//
// When a tool returns, the engine runs the change, so it holds for every move begun after
// it (the move that made it keeps the rules it started with). A store that notifies its
// subscribers synchronously (rulesdb, streamrules.MemoryStore) has reloaded the engine by
// then; for any other store the tool reloads it. Other replicas follow through the
// store's change notification.
package ruletools
