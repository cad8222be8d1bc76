// Package console is the rules console: web pages where a person sees what each rule
// does, tries a rule on a text, backtests the rules on a transcript, and, as the master,
// edits, enables, disables, shadows and enforces them.
//
//	h, err := console.New(store, eng, &console.Config{Password: os.Getenv(console.EnvPassword)})
//	…
//	mux.Handle(console.Prefix, h)
//
// The command line serves it on its own: `streamrules console --listen 127.0.0.1:8080`,
// or beside the gateway: `streamrules serve --console`.
//
// # Pages
//
// Every page is drawn on the server with html/template and works without JavaScript;
// the charts are SVG this package draws from the numbers. Nothing is fetched from
// elsewhere.
//
//   - /console/ — the overview: per rule, firings per day for the last 30 days as a small
//     bar chart a row (busiest first, [Config.PageRows] a page); the outcome mix
//     (corrected, fixed, complied, kept, missed_again, repeated, refused, shadow); the ten
//     rules that fire most, and the rules that never fired.
//   - /console/rules — every rule with its scope, mode (soft, hard, gate, fix), state and
//     counts; ?scope= (text, tool:, tool:shell) and ?state= (enabled, disabled, shadow,
//     enforced, never_fired) filter it.
//   - /console/rules/NAME — the rule's fields and counters, its edit form, and the
//     enable/disable and shadow/enforce buttons. An edit goes the way the master's
//     stream_rule_edit tool goes (package ruletools): rulefile.Apply, the engine's
//     Validate, the store's UpdateRule; so updated_at marks the master's edit, and
//     calibration leaves the rule alone (rulesdb's doc). An invalid edit shows the
//     engine's own message at the field its [streamrules.ValidationError] names.
//   - /console/try — judges a pasted answer (or a tool call's arguments) with one rule,
//     through [streamrules.NewJudge], in the environments picked: pass, violation or
//     not_applicable, the matched span highlighted, and for a rule with a fix the
//     repaired text and its line diff.
//   - /console/tests — every rule's tests (the rule's tests field, run by package
//     ruletest with the engine's judge): per example, what it expects, the verdict, ok
//     or failing with the reason, the match highlighted; rules with a failing example
//     first, ?only=failed for them alone. A rule's page shows its own, and its edit form
//     edits them (an example's error named at the field: tests.fires[2].text).
//   - /console/backtest — runs an uploaded transcript (JSON Lines, package replay's
//     format) through the rules compiled once per rules version ([replay.Compile]) and
//     shows per rule fired, in scope and rate, with up to three examples, the match
//     highlighted: every rule that fired, and [Config.PageRows] of the rest.
//   - /console/firings — the latest [Config.FiringsShown] firings: time, chat, move, rule,
//     outcome, delivery. A fix's diff is content and shown only with [Config.ShowContent].
//
// # Access
//
// Anyone who reaches the console reads it; only the master writes. The master logs in at
// /console/login with [Config.Password] (STREAMRULES_CONSOLE_PASSWORD), or with one of
// [Config.Keys] that may claim the master environment: a *gateway.Keys, as `streamrules
// serve --console` passes. A key that may not claim master is refused with 403 ("a
// non-master key cannot edit") and counts as a failed login. The session is an
// HttpOnly, SameSite=Strict cookie; every form carries a CSRF token that must equal its
// cookie (and an Origin, when the browser sends one, must be this host); failed logins
// are limited per client address ([Config.LoginAttempts] per [Config.LoginWindow], then
// 429). Every response carries the CSP "default-src 'self'" with no inline script, and
// everything a rule or an answer holds is escaped by html/template: a rule whose text is
// <script>…</script> shows as that text.
//
// Without a password or a master key nobody can log in, yet every rule and firing is
// shown: serve such a console only on a loopback address. [CheckListen] says so, and the
// commands refuse.
//
// # Cost
//
// A page reads the rules (one query), the per-rule counters (one query, a few rows per
// rule) and, for the overview, the last 30 days of stat rows grouped by rule and day
// through the fired_at index; docs/performance.md has the figures for 10,000 rules.
// A Handler starts no goroutine and is safe for concurrent use.
package console
