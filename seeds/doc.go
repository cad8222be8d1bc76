// Package seeds holds the rule set a fresh streamrules database starts with, as data.
//
// The set is a rule file (package rulefile): JSON or YAML with a version and a list of rules:
//
//	{
//	  "version": 5,
//	  "rules": [
//	    {
//	      "name": "telegram_reply_tail",
//	      "scope": "text",
//	      "condition": "↩ #\\d+\\s*$",
//	      "negate": true,
//	      "when": ["telegram"],
//	      "text": "Every Telegram reply ends with the tail line ↩ # followed by the id…",
//	      "fix": {"append_if_missing": "\n\n↩ #{{message_id}}"}
//	    }
//	  ]
//	}
//
// A rule has the fields of streamrules.Rule except id and the timestamps, which belong
// to the store: name, scope, condition, negate, when, text, mode (usually left out: it
// follows from the scope), repeat ("", "once", "after:N"), enabled (default true), and
// the optional predicate, applies_when, field, fix, severity, explanation, delivery
// ("full": always whole over the reminder budget), hint (what a manifest block says) and
// tests (examples that must fire the rule and must not, run by `streamrules test`).
// Unknown fields are errors, and every rule is checked with streamrules.Validate, so a
// typo fails loudly with the rule and the field named:
//
//	rulefile: line 14: rule #3 "telegram_markdown_image": streamrules: invalid condition: …
//
// # The default set
//
// [Default] returns the embedded seeds.json (version 6): ten chronic misses: two soft,
// six hard on the answer, one on the model's reasoning, one gate on shell calls. Since
// version 5 (a calibration wave that changes no verdict) each carries tests: at least two
// answers or calls it must fire on and two it must not, the context rules' with the move's
// input and tool record. local_shell_for_his_machine has fires examples only: its empty
// condition fires on every shell call of a client_ops move, so no call passes it. Version
// 6 adds look_before_refusing_thinking.
//
//   - write_diff_over_write_file (tool:write_file, after:5): edit existing files with
//     write_diff, not a full rewrite.
//   - local_shell_for_his_machine (tool:shell, when client_ops, once): the shell is the
//     agent's host, not the master's or the client's machine.
//   - telegram_markdown_image (text, when telegram): ![…](…) is not rendered there; since
//     seed version 2 its fix turns the image into its plain link, with no replay.
//   - telegram_reply_tail (text, negate, when telegram): the reply ends with the tail ↩ #id;
//     since seed version 2 its fix appends the tail from the move's message_id variable
//     (streamrules.Move.SetVar), with no replay.
//   - look_before_refusing (text, when picture, after:3): "I can't see the image" while
//     the picture is in context and visible.
//   - look_before_refusing_thinking (thinking, when picture, after:3, since version 6):
//     the same refusal in the model's reasoning, cut while the model still thinks; it
//     fires only where the provider streams reasoning text.
//   - telegram_react_not_emoji (text, when telegram): a bare emoji is a reaction; call
//     telegram_react instead.
//   - destructive_shell (tool:shell, mode interrupt, when client_ops): the cmd field read
//     as a shell reads it (shell: true); a call it cannot read is refused. Since version
//     4 (a calibration wave) it judges words, not a joined line, refuses rm -r without -f
//     on /, ~, .., $VAR or a glob (no terminal: it never prompts), ln -s naming build
//     output (the symlink trick) beside a forced recursive rm outside build output and
//     a forced push, and lets build output's dot entries (node_modules/.cache) through.
//     git reset --hard, clean -f, branch -D and stash drop/clear are not in it: with them
//     the rule's regexes cost more than the cost bound lets one rule (docs/rules.md
//     shows a gate of their own).
//   - unbacked_tool_claim (text, since version 3): "Audio saved: …" when the user asked
//     for audio (applies_when: input_contains_regex) and no generate_speech call
//     succeeded in the move; its replace_regex fix turns the claim into an honest
//     sentence, with no replay. It reads the move's input and tool record, so an
//     ordinary reply folds it away and streams.
//   - verify_before_done (text, since version 3): "done" or "finished" after a write_file
//     or write_diff with no successful run_tests since (edited_unchecked): replayed.
//
// # Your own set
//
// [Load] reads a file in the same format, and [Parse] takes the bytes. Pass the host's
// own environment names (those given to streamrules.Config.Environments) so `when` may
// use them. Give the set to rulesdb (rulesdb.Config.Seed, or Store.Seed): a database is
// seeded once per life, and a set with a higher version is a calibration wave that
// rewrites only the seeded rules nobody edited since.
package seeds
