package rulesdb

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

// SeedReport says what a Seed call did.
type SeedReport struct {
	Version       int  // the set's version
	StoredVersion int  // the seed version the database had before (0: never seeded)
	Applied       bool // false: the database had this version or a newer one, nothing changed
	// Added are rules inserted: never seeded before and no rule of that name.
	Added []string
	// Updated are seeded rules rewritten with the set's version: nobody had edited them.
	Updated []string
	// Kept are rules left as they are: edited by the master since they were seeded, or
	// created by the master under a name the set uses.
	Kept []string
	// Deleted are seeded rules the master deleted: not brought back.
	Deleted []string
}

// LogAttrs returns the report as slog attributes.
func (r SeedReport) LogAttrs() []any {
	return []any{"version", r.Version, "stored_version", r.StoredVersion, "applied", r.Applied,
		"added", r.Added, "updated", r.Updated, "kept", r.Kept, "deleted", r.Deleted}
}

// Seed seeds the database with set, once per database life. Under a lock (PostgreSQL:
// an advisory transaction lock; SQLite: an IMMEDIATE transaction), in one transaction:
//
//   - if the database's seed version is set.Version or newer, nothing happens: many
//     replicas starting at once seed exactly once;
//   - otherwise (the first seed, or a calibration wave with a higher version) a rule
//     never seeded before is added; a seeded rule nobody edited since it was seeded
//     (updated_at = seeded_updated_at) is rewritten; a rule edited since is kept; a
//     seeded rule that was deleted stays deleted (stream_rule_seed remembers every name
//     ever seeded); and the version is recorded.
//
// Rules of earlier waves missing from set are left alone. Every rule is validated first,
// against the store's environments (Store.Environments: Config.Seed's and
// Config.Environments), not set.Environments: a set naming others is refused, since an
// engine on the store would not know them. On an error nothing is written.
func (s *Store) Seed(ctx context.Context, set seeds.Set) (SeedReport, error) {
	rep := SeedReport{Version: set.Version}
	if set.Version < 1 {
		return rep, fmt.Errorf("rulesdb: seed: version %d, must be 1 or more", set.Version)
	}
	rules := make([]streamrules.Rule, len(set.Rules))
	seen := map[string]bool{}
	for i, r := range set.Rules {
		if err := s.validate(&r); err != nil {
			return rep, fmt.Errorf("rulesdb: seed rule %q: %w", r.Name, err)
		}
		if seen[r.Name] {
			return rep, fmt.Errorf("rulesdb: seed rule %q: %w", r.Name, &streamrules.ValidationError{Field: "name", Reason: "twice in the seed set"})
		}
		seen[r.Name] = true
		rules[i] = r
	}
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		if s.dialect == dialectPostgres {
			if _, err := s.exec(ctx, tx, `SELECT pg_advisory_xact_lock($1)`, lockSeed); err != nil {
				return err
			}
		}
		var stored []int
		if err := s.sel(ctx, tx, &stored, `SELECT version FROM stream_seed_state WHERE id = 1`); err != nil {
			return err
		}
		if len(stored) > 0 {
			rep.StoredVersion = stored[0]
		}
		if s.seedHook != nil {
			s.seedHook() // tests: the state is read, nothing written yet
		}
		if rep.StoredVersion >= set.Version {
			return nil
		}
		rep.Applied = true

		var names []string
		if err := s.sel(ctx, tx, &names, `SELECT name FROM stream_rule_seed`); err != nil {
			return err
		}
		everSeeded := map[string]bool{}
		for _, n := range names {
			everSeeded[n] = true
		}
		type existing struct {
			ID       int64 `db:"id"`
			Name     string
			Seeded   any `db:"seeded"`
			Updated  any `db:"updated_at"`
			SeededAt any `db:"seeded_updated_at"`
		}
		q := `SELECT id, name, seeded, updated_at, seeded_updated_at FROM stream_rules`
		if s.dialect == dialectPostgres {
			q += ` FOR UPDATE` // an edit racing the seed waits, and is then kept as an edit
		}
		var rows []existing
		if err := s.sel(ctx, tx, &rows, q); err != nil {
			return err
		}
		// The seed's timestamp is later than every updated_at, so a rewritten row's
		// updated_at changes (the touch trigger leaves it alone) and equals seeded_updated_at.
		ts := s.now()
		byName := map[string]existing{}
		for _, r := range rows {
			byName[r.Name] = r
			if u, err := asTime(r.Updated); err == nil && !ts.After(u) {
				ts = u.Add(time.Microsecond)
			}
		}
		for _, r := range rules {
			row, exists := byName[r.Name]
			switch {
			case !exists && everSeeded[r.Name]:
				rep.Deleted = append(rep.Deleted, r.Name)
				continue
			case !exists:
				res, err := s.exec(ctx, tx, s.db.Rebind(`INSERT INTO stream_rules
(name, scope, condition, negate, "when", text, mode, repeat, enabled, created_at, updated_at, seeded, seed_version, seeded_updated_at, shadow, early, `+predicateColumns+`, `+deliveryColumns+`, `+testsColumns+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, TRUE, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
?, ?, ?) ON CONFLICT (name) DO NOTHING`),
					append([]any{r.Name, r.Scope, r.Condition, r.Negate, joinWhen(r.When), r.Text, string(r.Mode), r.Repeat, !r.Disabled, ts, ts, set.Version, ts, r.Shadow, r.Early},
						tailValues(r)...)...)
				if err != nil {
					return err
				}
				if n, _ := res.RowsAffected(); n == 1 {
					rep.Added = append(rep.Added, r.Name)
				} else {
					rep.Kept = append(rep.Kept, r.Name)
				}
			default:
				seeded, _ := asBool(row.Seeded)
				updated, err1 := asTime(row.Updated)
				seededAt, err2 := asTime(row.SeededAt)
				untouched := seeded && err1 == nil && err2 == nil && !seededAt.IsZero() && updated.Equal(seededAt)
				if !untouched {
					rep.Kept = append(rep.Kept, r.Name)
					break
				}
				if _, err := s.exec(ctx, tx, s.db.Rebind(`UPDATE stream_rules
SET scope = ?, condition = ?, negate = ?, "when" = ?, text = ?, mode = ?, repeat = ?, enabled = ?,
    updated_at = ?, seed_version = ?, seeded_updated_at = ?, shadow = ?, early = ?,
    predicate = ?, applies_when = ?, field = ?, fix = ?, severity = ?, explanation = ?, shell = ?,
    delivery = ?, hint = ?, tests = ?
WHERE id = ?`),
					append([]any{r.Scope, r.Condition, r.Negate, joinWhen(r.When), r.Text, string(r.Mode), r.Repeat, !r.Disabled,
						ts, set.Version, ts, r.Shadow, r.Early}, append(tailValues(r), row.ID)...)...); err != nil {
					return err
				}
				rep.Updated = append(rep.Updated, r.Name)
			}
			if _, err := s.exec(ctx, tx, s.db.Rebind(`INSERT INTO stream_rule_seed (name, first_version, seeded_at) VALUES (?, ?, ?)
ON CONFLICT (name) DO NOTHING`), r.Name, set.Version, ts); err != nil {
				return err
			}
		}
		_, err := s.exec(ctx, tx, s.db.Rebind(`INSERT INTO stream_seed_state (id, version, applied_at) VALUES (1, ?, ?)
ON CONFLICT (id) DO UPDATE SET version = excluded.version, applied_at = excluded.applied_at`), set.Version, ts)
		return err
	})
	if err != nil {
		return SeedReport{Version: set.Version}, fmt.Errorf("rulesdb: seed version %d on %s: %w", set.Version, s.target.about, mapError(err))
	}
	if len(rep.Added)+len(rep.Updated) > 0 {
		s.notify()
	}
	return rep, nil
}

// SeedVersion returns the seed version the database was last seeded with (0: never).
func (s *Store) SeedVersion(ctx context.Context) (int, error) {
	var v []int
	if err := s.sel(ctx, s.db, &v, `SELECT version FROM stream_seed_state WHERE id = 1`); err != nil {
		return 0, fmt.Errorf("rulesdb: seed version: %w", err)
	}
	if len(v) == 0 {
		return 0, nil
	}
	return v[0], nil
}
