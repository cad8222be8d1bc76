package rulesdb

import (
	"context"
	"time"

	"github.com/lib/pq"

	"github.com/streamrules/streamrules"
)

// WritesInFlight returns the write attempts still running.
func WritesInFlight(s *Store) int64 { return s.wq.inflight.Load() }

// Closing reports whether Close has begun.
func Closing(s *Store) bool {
	s.wq.mu.Lock() // bare: reads a flag only
	defer s.wq.mu.Unlock()
	return s.wq.closed
}

// SetDialer makes the store dial PostgreSQL through d (tests count the wire traffic).
func SetDialer(cfg *Config, d pq.Dialer) { cfg.dialer = d }

// ParseDSN exposes the DSN parsing for tests: the driver DSN and the description.
func ParseDSN(dsn, defaultSQLitePath string) (driver, about string, err error) {
	t, err := parseDSN(dsn, defaultSQLitePath)
	return t.driver, t.about, err
}

// SetPruning drives the stat pruning from tick and reports each prune to done.
func SetPruning(cfg *Config, tick <-chan time.Time, done func(n int64, err error)) {
	cfg.pruneTick, cfg.onPrune = tick, done
}

// SetMigrateTo stops Open's migrations after version v: a database as an older release left it.
func SetMigrateTo(cfg *Config, v int) { cfg.migrateTo = v }

// UseUncountedSaveMove makes s write moves with the statement from before migration 0004:
// no outcome column and no per-rule counters. A benchmark baseline for the counter upkeep,
// on a database migrated to 3.
func UseUncountedSaveMove(s *Store) {
	s.q.saveMovePG = `WITH chat AS (
	INSERT INTO stream_chat (chat_id, moves, updated_at) VALUES ($1, $2, $3)
	ON CONFLICT (chat_id) DO UPDATE SET moves = stream_chat.moves + EXCLUDED.moves, updated_at = EXCLUDED.updated_at
), fired AS (
	INSERT INTO stream_chat_rule (chat_id, rule, last_fired_move)
	SELECT $1, f.rule, MAX(f.move) FROM unnest($4::text[], $5::bigint[]) AS f(rule, move)
	GROUP BY f.rule ORDER BY f.rule
	ON CONFLICT (chat_id, rule) DO UPDATE SET last_fired_move = GREATEST(stream_chat_rule.last_fired_move, EXCLUDED.last_fired_move)
), stat AS (
	INSERT INTO stream_rule_stat (rule, chat_id, move, mode, retry, tool, fired_at)
	SELECT * FROM unnest($4::text[], $6::text[], $5::bigint[], $7::text[], $8::boolean[], $9::text[], $10::timestamptz[])
)
SELECT $11::text[], $12::text[], $13::boolean[], $14::bigint[], $15::text[], $16::text[], $17::bigint[], $18::text[], $19::text, $20::bigint,
	$21::text[], $22::boolean[], $23::text[], $24::text[], $25::bigint[], $26::bigint[] -- the parameters SaveMove passes now`
}

// WriteMoveAgain writes rec with seq as the write queue would on a retry: a test of the
// idempotency guard without cutting a connection at the right microsecond.
func WriteMoveAgain(ctx context.Context, s *Store, rec streamrules.MoveRecord, seq int64) error {
	return s.writeMove(ctx, s.stampMove(rec), seq, 0, nil)
}

// LastSeq returns the seq of the last record SaveMove took.
func LastSeq(s *Store) int64 {
	s.lockQueue()
	defer s.wq.mu.Unlock()
	return s.wq.nextSeq
}

// SetSeedHook makes Seed call fn inside its transaction, once it has read the seed state.
func SetSeedHook(s *Store, fn func()) { s.seedHook = fn }

// SetTrace has s call fn with every statement it sends, before it sends it (nil: stop).
// Safe while the store is in use (its reload goroutine may be querying).
func SetTrace(s *Store, fn func(query string, args []any)) {
	if fn == nil {
		s.trace.Store(nil)
		return
	}
	s.trace.Store(&fn)
}

// HotStatements is the registry of the statements a move sends (docs/scale.md),
// by name: the test checks each against what the store really sends.
func HotStatements(s *Store) map[string]string {
	return map[string]string{
		"loadChat": s.q.loadChat, "loadChats": loadChatsPG, "saveMovePG": s.q.saveMovePG, "saveBatchPG": saveBatchPG,
		"claimOnce": s.db.Rebind(claimOnce), "claimAfter": s.db.Rebind(claimAfter), "rulesVersion": versionQuery,
		"allRules": s.q.allRules, // a reload: reference data only
	}
}

// SetReadHooks has s call hook before each shared read is sent (with its chats), and
// joined when a LoadChat joined the open read without sending it (readbatch.go). Set
// them before the store is used concurrently.
func SetReadHooks(s *Store, hook func(chats []string), joined func()) {
	s.readHook, s.readJoined = hook, joined
}

// MaxReads is how many shared reads run at once on PostgreSQL.
const MaxReads = maxReads

// CountStatRows returns how many firing rows stream_rule_stat holds: a benchmark's check
// that its writes reached the table.
func CountStatRows(ctx context.Context, s *Store) (int, error) {
	var n int
	err := s.db.GetContext(ctx, &n, `SELECT count(*) FROM stream_rule_stat`)
	return n, err
}
