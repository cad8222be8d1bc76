// Package rulesdb is the database store of streamrules: rules, chat state and firings in
// PostgreSQL (shared by every replica) or in an embedded, pure-Go SQLite file (the
// default, so a fresh machine needs no server). One code base serves both, through sqlx.
//
// A *Store implements streamrules.Store, RuleEditor, FiringCounter and ChangeNotifier:
//
//	set, _ := seeds.Default()
//	store, err := rulesdb.Open(ctx, os.Getenv(rulesdb.EnvDSN), &rulesdb.Config{Seed: &set})
//	if err != nil { … }
//	defer store.Close()
//	eng, err := streamrules.New(ctx, store, nil)   // follows the store's change notifications
//
// # DSN forms
//
//	postgres://user:pass@host:5432/db?sslmode=disable   PostgreSQL through lib/pq (postgresql:// too)
//	""                                                  SQLite file Config.DefaultSQLitePath ("streamrules.db")
//	sqlite:/var/lib/agent/rules.db                      SQLite file; sqlite:rules.db is relative
//	file:rules.db?cache=shared                          SQLite URI
//	sqlite::memory:                                     SQLite in memory (one connection; for tests)
//
// Anything else is an error wrapping ErrUnknownScheme. A DSN that is malformed (a port
// that is not a number, an unclosed "[", a value lib/pq refuses such as sslmode=bogus, a
// query that does not decode such as "%zz", which net/url would drop silently) is an
// error wrapping ErrBadDSN from Describe and Open, before anything is dialled: the
// caller's input is wrong, not the database. A connection error names the host
// and the database (or the file), never the password. On PostgreSQL the store turns on
// lib/pq's binary_parameters unless the DSN sets it, so a statement with parameters is
// one network round trip. SQLite is opened in WAL mode with a busy timeout; a transaction
// that writes takes the write lock when it begins (_txlock=immediate), and writers in one
// process take turns on a mutex instead of spinning in the busy handler.
//
// # Schema
//
// Embedded migrations (migrations/<dialect>/NNNN_name.sql) run at Open, each in its own
// transaction together with its row in stream_rules_migration; replicas starting at once
// take turns (pg_advisory_xact_lock on PostgreSQL, BEGIN IMMEDIATE on SQLite). A new
// migration is named after the schema change it makes; shipped ones keep their names
// (migrate.go says why).
//
//	stream_rules       id, name (unique), scope, condition, negate, "when" (names,
//	                   comma-separated), text, mode, repeat, enabled, created_at, updated_at,
//	                   seeded, seed_version, seeded_updated_at
//	stream_rule_stat   one row per firing: id, rule, chat_id, move, mode, retry, tool,
//	                   fired_at. No foreign key: rows outlive their rule
//	stream_chat        chat_id, moves (final answers so far)
//	stream_chat_rule   chat_id, rule, last_fired_move: what `once` and `after:N` need
//	stream_rule_seed   every rule name ever seeded, so a deleted seeded rule stays deleted
//	stream_seed_state  the seed version applied
//	stream_chat_writer chat_id, writer, seq: the last move record each Store wrote for
//	                   a chat, which makes a retried write a no-op (see Outages)
//
// Rows edited by hand are welcome: LoadRules returns them as they are, and the engine
// skips a bad one (an invalid regex, an unknown scope, a name that is not valid exactly as
// stored, such as " good_tool") with one warning naming its id, while every other rule
// keeps working; Engine.Skipped says why each was skipped. A hand edit that leaves updated_at alone still moves it (a
// trigger does), so it counts as the master's edit.
//
// # The hot path
//
// A move costs the store two statements at most: LoadChat when it begins (one query) and
// SaveMove when it ends. On PostgreSQL SaveMove is a single statement (data-modifying CTEs
// over unnest arrays) that adds one to the chat's move counter, raises each fired rule's
// last-fired move and appends the stat rows; concurrent moves of a chat add up. On SQLite
// it is one short transaction. Tool calls and answers never touch the database. Under
// load a move costs far less (docs/scale.md): the engine's End queues its record
// (QueueMove), and the flusher writes the records of many chats in one statement (group
// commit); on PostgreSQL the LoadChats of moves that begin together share one read.
// [Store.Stats] counts every statement sent (RoundTrips), for tests and benchmarks.
//
// # Outages
//
// No call waits on a sick database without a bound:
//
//   - A PostgreSQL DSN without connect_timeout gets connect_timeout=5 (DefaultConnectTimeout):
//     lib/pq would otherwise wait forever on a host that accepts the connection and never
//     answers. Open also returns as soon as its context ends (Ctrl-C), whatever the
//     server does: it cuts its connections. Its error says what to do, e.g.
//     "(the server does not speak TLS: add sslmode=disable to the DSN, …)".
//   - LoadChat, SaveMove and ClaimFiring return when their context ends; the engine gives
//     each streamrules.Config.StoreTimeout (2s), and the claims of one call share one.
//   - Once a read, a write or a claim found the database down, claims fail at once (the
//     engine keeps the rule silent) until a call finds it answering again: a read of a
//     chat, the flusher's next write or, with nothing queued, its probe (SELECT 1).
//
// SaveMove never drops a move because the database failed. What it could not write
// within its context (down, too slow, an answer lost after the COMMIT) goes into a write
// queue in memory, and one goroutine writes the queue, in order per chat, once the
// database answers: retries back off from 50ms to 5s, with jitter. A move never waits on
// the queue: once the database is known to be down, new records queue at once. Each
// record carries a seq, and the database applies it only if it is above the last seq of
// this Store for the chat, in the same statement (table stream_chat_writer): a retry of a
// write that did commit changes nothing, so no move and no firing counts twice.
//
// The queue holds Config.QueueSize records (10000, about 600 bytes each with two
// firings). When it is full the oldest record is dropped, counted
// ([Stats.DroppedMoves]) and logged; SaveMove still does not wait. A dropped record loses
// its stat rows, not its move: the chat's next record carries it into the move counter,
// so move numbers keep growing and no later move reuses a dropped one's number. Close lets the
// SaveMove calls under way finish (a first write that fails meanwhile queues its record)
// and writes what is queued, within Config.FlushTimeout (10s), and logs what it could not
// write; a SaveMove whose write fails after that returns an error.
//
// The chat state this process has seen stays authoritative until it is written: LoadChat
// adds the chat's queued records to what the database holds, and while the database is
// down it answers from memory for every chat this process has read (the last 10000 used).
// So a `once` rule stays fired and move numbers keep growing through an outage and after
// it. A chat this process never read before the outage has no state: LoadChat fails, and
// the engine fails closed (rules with a repeat policy stay silent in its moves, which are
// numbered from 1 until the database answers).
//
// What a crash of the process during an outage still loses: the records in its queue
// (the moves not yet written, and their firings). Nothing else: what was written is
// written once.
//
// For metrics: [Store.Stats] (QueuedMoves, DroppedMoves, RejectedMoves,
// MoveWriteFailures, WrittenMoves and more), and metrics.Config.StoreStats exports them.
//
// # Editing and change notification
//
// CreateRule, UpdateRule and DeleteRule validate exactly as the engine does
// (streamrules.Rule.Normalize and streamrules.Validate, with Store.Environments:
// Config.Seed's environments and Config.Environments): a NUL byte or invalid UTF-8 in
// any text field is rejected the same way on both databases. A bad rule is a *streamrules.ValidationError naming the
// field and nothing is written; a taken name is one too (field "name"), wrapping
// streamrules.ErrExists; a missing one is streamrules.ErrNotFound. UpdateRule and
// DeleteRule address the name exactly as stored, and an UpdateRule whose rule has that
// same name keeps it as stored, even one Normalize would trim (" good_tool", typed in by
// hand, is edited in place rather than renamed onto good_tool). Every edit moves updated_at forward. The package ruletools
// exposes these as the master's LangChainGo tools.
//
// After an edit, subscribers (every engine on the store) are called before the edit
// returns. On PostgreSQL a trigger on stream_rules NOTIFYs the channel
// stream_rules_changed for every change, from any process or from psql; each store
// LISTENs with lib/pq's reconnecting listener and tells its subscribers, so every replica
// reloads within moments. Every Config.ReloadInterval (30s) subscribers are called
// anyway, a backstop for a notification lost while the listener reconnected; on SQLite,
// which has no NOTIFY, this is how another process's edit arrives.
//
// # Seeding and calibration
//
// A database is seeded once per life: Open seeds Config.Seed when it is set, or call
// [Store.Seed]. Under a lock, if the stored seed version is the set's version or newer
// nothing happens, so replicas starting at once seed exactly once. A set with a higher
// version is a calibration wave: rules never seeded are added, seeded rules nobody edited
// since (updated_at = seeded_updated_at) are rewritten, rules the master edited are kept,
// and seeded rules he deleted are not brought back. The [SeedReport] lists what was
// added, updated, kept and left deleted.
//
// # Stats
//
// Every firing is a row in stream_rule_stat, with its outcome (corrected, missed_again,
// kept, complied, repeated, shadow …), and the same SaveMove statement adds it to the
// per-rule counters of stream_rule_counter, one row per rule and outcome.
// [Store.RuleCounters] reads those, so the stats cost a few rows per rule however many
// firings there were. Mount the engine's handler (package statshttp) to serve the summary, every loaded rule
// listed, zero included:
//
//	http.Handle("/v1/stats", statshttp.Handler(eng))
//
//	GET /v1/stats
//	{"rules":[{"rule":"local_shell_for_his_machine","fired":3,"outcomes":{"complied":2,"repeated":1},"shadow":0,"last_fired_at":"…"}, …]}
//
// Deleting a rule does not delete its history: its rows and counters stay, and
// [Store.Firings] returns the rows.
//
// # Retention
//
// Raw rows are kept forever unless [Config.StatRetention] says otherwise
// (STREAMRULES_STAT_RETENTION=90d): the store then deletes older rows at Open and hourly,
// in batches of 10,000, and [Store.PruneStats] does it on demand. The counters are never
// pruned: /v1/stats still counts what the rows no longer hold.
//
// # Configuration from the environment
//
// Config's fields carry github.com/caarlos0/env tags (STREAMRULES_SQLITE_PATH,
// STREAMRULES_ENVIRONMENTS, STREAMRULES_RELOAD_INTERVAL, STREAMRULES_MAX_OPEN_CONNS,
// STREAMRULES_STAT_RETENTION, STREAMRULES_QUEUE_SIZE, STREAMRULES_WRITE_TIMEOUT,
// STREAMRULES_FLUSH_TIMEOUT), and
// EnvDSN names the conventional STREAMRULES_DSN:
//
//	cfg, err := env.ParseAs[rulesdb.Config]()
//	store, err := rulesdb.Open(ctx, os.Getenv(rulesdb.EnvDSN), &cfg)
package rulesdb
