package rulesdb

import "github.com/jmoiron/sqlx"

// queries are the store's statements, rebound once for the dialect at Open.
type queries struct {
	allRules   string
	ruleByName string
	lockRule   string
	insertRule string
	updateRule string
	deleteRule string

	loadChat      string
	saveMovePG    string // PostgreSQL: the whole move in one statement
	upsertChat    string // SQLite: the chat's counter, in the move's transaction (saveMoveSQLite)
	upsertFired   string // SQLite: prefix; "(?, ?, ?)" groups follow, then saveMoveSQLite's ON CONFLICT
	insertStatPre string // SQLite: prefix; "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" groups follow
	upsertCounter string // SQLite: prefix; "(?, ?, ?, ?)" groups follow, then counterUpsert's ON CONFLICT
	guardMove     string // SQLite: the idempotency guard, first in the move's transaction
	dropWriter    string // this Store's guard rows, deleted at Close
	claimOnce     string // claim.go
	claimAfter    string
	countFirings  string
	ruleCounters  string
	pruneStats    string
}

func buildQueries(db *sqlx.DB, d dialect) queries {
	q := queries{
		allRules:   `SELECT ` + ruleColumns + ` FROM stream_rules ORDER BY name`,
		ruleByName: `SELECT ` + ruleColumns + ` FROM stream_rules WHERE name = ?`,
		lockRule:   `SELECT id, created_at, updated_at FROM stream_rules WHERE name = ?`,
		insertRule: `INSERT INTO stream_rules (name, scope, condition, negate, "when", text, mode, repeat, enabled, created_at, updated_at, shadow, early, ` + predicateColumns + `, ` + deliveryColumns + `, ` + testsColumns + `)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
?, ?, ?) RETURNING id`,
		updateRule: `UPDATE stream_rules SET name = ?, scope = ?, condition = ?, negate = ?, "when" = ?, text = ?, mode = ?, repeat = ?, enabled = ?, updated_at = ?, shadow = ?, early = ?,
predicate = ?, applies_when = ?, field = ?, fix = ?, severity = ?, explanation = ?, shell = ?,
delivery = ?, hint = ?, tests = ?
WHERE id = ?`,
		deleteRule: `DELETE FROM stream_rules WHERE name = ?`,

		// One row at least: the chat's move counter (NULL for a chat never seen), joined with
		// each rule's last-fired move, and the last move record this Store wrote for the
		// chat (its write queue adds the ones after it).
		loadChat: `SELECT c.moves, r.rule, r.last_fired_move, w.seq
FROM (SELECT CAST(? AS TEXT) AS chat_id) k
LEFT JOIN stream_chat c ON c.chat_id = k.chat_id
LEFT JOIN stream_chat_rule r ON r.chat_id = k.chat_id
LEFT JOIN stream_chat_writer w ON w.chat_id = k.chat_id AND w.writer = ?`,
		// The stats read the counters (a few rows per rule), never count(*) over the raw rows.
		countFirings: `SELECT rule, SUM(fired) FROM stream_rule_counter WHERE outcome <> 'shadow' GROUP BY rule`,
		ruleCounters: `SELECT rule, outcome, fired, last_fired_at FROM stream_rule_counter`,
		// In batches, so a first prune of a large table holds no long lock (retention.go).
		pruneStats: `DELETE FROM stream_rule_stat WHERE id IN (SELECT id FROM stream_rule_stat WHERE fired_at < ? LIMIT ?)`,

		upsertChat: `INSERT INTO stream_chat (chat_id, moves, updated_at) VALUES (?, ?, ?)
ON CONFLICT (chat_id) DO UPDATE SET moves = stream_chat.moves + excluded.moves, updated_at = excluded.updated_at`,
		upsertFired:   `INSERT INTO stream_chat_rule (chat_id, rule, last_fired_move) VALUES `,
		insertStatPre: `INSERT INTO stream_rule_stat (rule, chat_id, move, mode, retry, tool, fired_at, outcome, diff, early, cut_at_bytes, delivery, manifest_read) VALUES `,
		upsertCounter: `INSERT INTO stream_rule_counter (rule, outcome, fired, last_fired_at) VALUES `,
		// Idempotency (migration 0003): the row moves only forward; no row changed means
		// this record was written before (a retry after an unknown outcome).
		guardMove: `INSERT INTO stream_chat_writer (chat_id, writer, seq, updated_at) VALUES (?, ?, ?, ?)
ON CONFLICT (chat_id, writer) DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at
WHERE stream_chat_writer.seq < excluded.seq`,
		dropWriter: `DELETE FROM stream_chat_writer WHERE writer = ?`,
		claimOnce:  claimOnce,
		claimAfter: claimAfter,
	}
	if d == dialectPostgres {
		q.lockRule += ` FOR UPDATE`
	}
	for _, p := range []*string{&q.allRules, &q.ruleByName, &q.lockRule, &q.insertRule, &q.updateRule, &q.deleteRule, &q.loadChat, &q.upsertChat, &q.pruneStats, &q.guardMove, &q.dropWriter, &q.claimOnce, &q.claimAfter} {
		*p = db.Rebind(*p)
	}
	// A move in one statement: the data-modifying CTEs all run, in one snapshot, in one
	// round trip. Counter incremented (not overwritten) and last-fired kept at its maximum,
	// both by ON CONFLICT, so concurrent moves of one chat add up. Rules are upserted in
	// name order, so two moves of one chat cannot deadlock on stream_chat_rule.
	// The stat rows carry their outcome ($11), and the "counted" CTE adds the
	// move's firings, aggregated per (rule, outcome) in Go ($15-$18, stats.go), to the
	// per-rule counters. In (rule, outcome) order for the same reason as above: two moves
	// firing the same rules lock their counter rows in one order. Aggregated in Go rather
	// than from "stat"'s RETURNING: 8% less server CPU per move (BenchmarkSaveMove).
	// A fix's diff is $12; an early cut and where it fell, $13 and $14.
	//
	// Migration 0008: a firing's delivery and manifest read ($21, $22), and the
	// "delivered" CTE adds the move's firings per (rule, delivery) to the delivery
	// counters ($23-$26, delivery.go), in that order for the same reason.
	//
	// Idempotency (migration 0003): the guard CTE raises this Store's last written
	// seq for the chat ($19 writer, $20 seq) and returns a row only if the record is new;
	// every other CTE takes its rows FROM guard (or checks EXISTS), so a record written
	// before, whose answer was lost, changes nothing the second time. Keep the guard in any
	// new CTE that writes ("counted" included).
	//
	// The counters come first in the list: PostgreSQL runs the writing CTEs that nothing
	// reads last to first, so their rows (shared by every move) are locked last, held
	// briefly, and in the same table order as saveBatchPG's (batch.go).
	q.saveMovePG = `WITH guard AS (
	INSERT INTO stream_chat_writer (chat_id, writer, seq, updated_at) VALUES ($1, $19, $20, $3)
	ON CONFLICT (chat_id, writer) DO UPDATE SET seq = EXCLUDED.seq, updated_at = EXCLUDED.updated_at
	WHERE stream_chat_writer.seq < EXCLUDED.seq
	RETURNING 1
), counted AS (
	INSERT INTO stream_rule_counter (rule, outcome, fired, last_fired_at)
	SELECT * FROM unnest($15::text[], $16::text[], $17::bigint[], $18::timestamptz[])
	WHERE EXISTS (SELECT 1 FROM guard)
	ON CONFLICT (rule, outcome) DO UPDATE SET fired = stream_rule_counter.fired + EXCLUDED.fired,
		last_fired_at = GREATEST(stream_rule_counter.last_fired_at, EXCLUDED.last_fired_at)
), delivered AS (
	INSERT INTO stream_rule_delivery_counter (rule, delivery, fired, manifest_read)
	SELECT * FROM unnest($23::text[], $24::text[], $25::bigint[], $26::bigint[])
	WHERE EXISTS (SELECT 1 FROM guard)
	ON CONFLICT (rule, delivery) DO UPDATE SET fired = stream_rule_delivery_counter.fired + EXCLUDED.fired,
		manifest_read = stream_rule_delivery_counter.manifest_read + EXCLUDED.manifest_read
), chat AS (
	INSERT INTO stream_chat (chat_id, moves, updated_at) SELECT $1, $2, $3 FROM guard
	ON CONFLICT (chat_id) DO UPDATE SET moves = stream_chat.moves + EXCLUDED.moves, updated_at = EXCLUDED.updated_at
), fired AS (
	INSERT INTO stream_chat_rule (chat_id, rule, last_fired_move)
	SELECT $1, f.rule, MAX(f.move) FROM unnest($4::text[], $5::bigint[]) AS f(rule, move)
	WHERE EXISTS (SELECT 1 FROM guard)
	GROUP BY f.rule ORDER BY f.rule
	ON CONFLICT (chat_id, rule) DO UPDATE SET last_fired_move = GREATEST(stream_chat_rule.last_fired_move, EXCLUDED.last_fired_move)
), stat AS (
	INSERT INTO stream_rule_stat (rule, chat_id, move, mode, retry, tool, fired_at, outcome, diff, early, cut_at_bytes, delivery, manifest_read)
	SELECT * FROM unnest($4::text[], $6::text[], $5::bigint[], $7::text[], $8::boolean[], $9::text[], $10::timestamptz[], $11::text[], $12::text[], $13::boolean[], $14::bigint[],
		$21::text[], $22::boolean[])
	WHERE EXISTS (SELECT 1 FROM guard)
)
SELECT 1`
	return q
}
