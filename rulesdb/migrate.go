package rulesdb

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"
)

//go:embed migrations
var migrationFS embed.FS

// migration is one embedded SQL file, migrations/<dialect>/NNNN_name.sql, the same
// version and name in both dialects. Name a new one after the schema change it makes
// (0007_tool_shell, 0009_rules_version), never after when it was written. A file that
// shipped keeps its name and its text, even where the name says little (0003_faults,
// 0004_rollout): every deployed database holds a stream_rules_migration row with that
// version and name, and what was applied there must stay what the file says.
type migration struct {
	version int
	name    string
	sql     string
}

// Advisory lock keys (PostgreSQL): one for migrations, one for seeding.
const (
	lockMigrate int64 = 0x73725f6d69677261 // "sr_migra"
	lockSeed    int64 = 0x73725f7365656473 // "sr_seeds"
)

func loadMigrations(d dialect) ([]migration, error) {
	dir := path.Join("migrations", d.String())
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration file %s: want NNNN_name.sql", e.Name())
		}
		body, err := fs.ReadFile(migrationFS, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: name, sql: string(body)})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	// Versions grow; a gap is allowed (branches number their migrations ahead of
	// others not merged yet), a duplicate is not. migrate applies each version not
	// applied, so a gap filled later is applied then.
	for i, m := range out {
		if i > 0 && m.version <= out[i-1].version {
			return nil, fmt.Errorf("migrations for %s: version %d twice", d, m.version)
		}
	}
	return out, nil
}

const createMigrationTable = `CREATE TABLE IF NOT EXISTS stream_rules_migration (
	version    INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL,
	applied_at TIMESTAMP NOT NULL
)`

// migrate applies the embedded migrations not applied yet, each in its own transaction
// together with its version row. Concurrent callers (several replicas starting at once)
// are serialized: an advisory transaction lock on PostgreSQL, BEGIN IMMEDIATE on SQLite.
func (s *Store) migrate(ctx context.Context, upTo int) error {
	all, err := loadMigrations(s.dialect)
	if err != nil {
		return fmt.Errorf("rulesdb: %w", err)
	}
	if upTo > 0 {
		all = slices.DeleteFunc(all, func(m migration) bool { return m.version > upTo })
	}
	// Fast path: everything applied already (the table may not exist yet: then migrate).
	var applied int
	if err := s.get(ctx, s.db, &applied, `SELECT COUNT(*) FROM stream_rules_migration`); err == nil && applied >= len(all) {
		return nil
	}
	for _, m := range all {
		err := s.withTx(ctx, func(tx *sqlx.Tx) error {
			if s.dialect == dialectPostgres {
				if _, err := s.exec(ctx, tx, `SELECT pg_advisory_xact_lock($1)`, lockMigrate); err != nil {
					return err
				}
			}
			if _, err := s.exec(ctx, tx, createMigrationTable); err != nil {
				return err
			}
			var n int
			if err := s.get(ctx, tx, &n, s.db.Rebind(`SELECT COUNT(*) FROM stream_rules_migration WHERE version = ?`), m.version); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := s.exec(ctx, tx, m.sql); err != nil {
				return err
			}
			_, err := s.exec(ctx, tx, s.db.Rebind(`INSERT INTO stream_rules_migration (version, name, applied_at) VALUES (?, ?, ?)`),
				m.version, m.name, s.now())
			return err
		})
		if err != nil {
			return fmt.Errorf("rulesdb: migration %d (%s) on %s: %w", m.version, m.name, s.target.about, err)
		}
	}
	return nil
}
