package rulesdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/streamrules/streamrules"
)

// ruleColumns is the column list every rule read selects, in readRule's order.
const ruleColumns = `id, name, scope, condition, negate, "when", text, mode, repeat, enabled, created_at, updated_at, shadow, early, ` + predicateColumns + `, ` + deliveryColumns + `, ` + testsColumns

// readRule converts one row of ruleColumns. It is lenient where a hand edit in a loosely
// typed SQLite column could leave garbage, and reports what it could not read.
func readRule(rows *sqlx.Rows) (streamrules.Rule, error) {
	var (
		id, name, scope, cond, negate, when, text, mode, repeat, enabled, created, updated any
		shadow, early                                                                      any // migration 0004
		predicate, applies, field, fix, severity, explanation                              any // migration 0005
		shell                                                                              any // migration 0007
		delivery, hint                                                                     any // migration 0008
		tests                                                                              any // migration 0010
	)
	if err := rows.Scan(&id, &name, &scope, &cond, &negate, &when, &text, &mode, &repeat, &enabled, &created, &updated,
		&shadow, &early, &predicate, &applies, &field, &fix, &severity, &explanation, &shell,
		&delivery, &hint, &tests); err != nil {
		return streamrules.Rule{}, err
	}
	r := streamrules.Rule{
		Name: asString(name), Scope: asString(scope), Condition: asString(cond),
		When: splitWhen(asString(when)), Text: asString(text), Mode: streamrules.Mode(asString(mode)),
		Repeat: asString(repeat),
	}
	var errs []error
	var err error
	if r.ID, err = asInt64(id); err != nil {
		errs = append(errs, fmt.Errorf("id: %w", err))
	}
	if r.Negate, err = asBool(negate); err != nil {
		errs = append(errs, fmt.Errorf("negate: %w", err))
	}
	if r.Shadow, err = asBool(shadow); err != nil {
		errs = append(errs, fmt.Errorf("shadow: %w", err))
	}
	if r.Early, err = asBool(early); err != nil {
		errs = append(errs, fmt.Errorf("early: %w", err))
	}
	if on, err := asBool(enabled); err != nil {
		errs = append(errs, fmt.Errorf("enabled: %w", err))
	} else {
		r.Disabled = !on
	}
	if err := readPredicates(&r, predicate, applies, field, fix, severity, explanation, shell); err != nil {
		errs = append(errs, err)
	}
	readDelivery(&r, delivery, hint) // delivery.go

	if err := readTests(&r, tests); err != nil { // ruletests.go
		errs = append(errs, err)
	}
	// Unreadable times are not fatal: the rule works without them.
	r.CreatedAt, _ = asTime(created)
	r.UpdatedAt, _ = asTime(updated)
	return r, errors.Join(errs...)
}

// readRules reads every row; rows it cannot read are logged and skipped.
func (s *Store) readRules(rows *sqlx.Rows) ([]streamrules.Rule, error) {
	defer rows.Close()
	var out []streamrules.Rule
	for rows.Next() {
		r, err := readRule(rows)
		if err != nil {
			// Once per row version: every reload (notification, backstop tick) reads it again.
			key := fmt.Sprintf("%d/%s/%d", r.ID, r.Name, r.UpdatedAt.UnixNano())
			if _, seen := s.warned.LoadOrStore(key, true); !seen {
				s.log.Warn("stream rule skipped: unreadable row in store", "rule", r.Name, "id", r.ID, "err", err)
			}
			continue
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// joinWhen is how `when` is stored: environment names, comma-separated.
func joinWhen(when []string) string { return strings.Join(when, ",") }

// splitWhen reads `when` as stored, or as a JSON array typed in by hand.
func splitWhen(s string) []string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") {
		var list []string
		if json.Unmarshal([]byte(s), &list) == nil {
			return list
		}
	}
	var out []string
	for _, w := range strings.Split(s, ",") {
		if w = strings.TrimSpace(w); w != "" {
			out = append(out, w)
		}
	}
	return out
}

func asString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

func asInt64(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case int:
		return int64(x), nil
	case float64:
		return int64(x), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case string, []byte:
		return strconv.ParseInt(strings.TrimSpace(asString(x)), 10, 64)
	case nil:
		return 0, nil
	}
	return 0, fmt.Errorf("%T is not an integer", v)
}

func asBool(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case int64:
		return x != 0, nil
	case float64:
		return x != 0, nil
	case string, []byte:
		switch strings.ToLower(strings.TrimSpace(asString(x))) {
		case "1", "t", "true", "y", "yes", "on":
			return true, nil
		case "0", "f", "false", "n", "no", "off", "":
			return false, nil
		}
		return false, fmt.Errorf("%q is not a boolean", asString(x))
	case nil:
		return false, nil
	}
	return false, fmt.Errorf("%T is not a boolean", v)
}

var timeLayouts = []string{
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02T15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
}

func asTime(v any) (time.Time, error) {
	switch x := v.(type) {
	case time.Time:
		return x.UTC(), nil
	case nil:
		return time.Time{}, nil
	case string, []byte:
		str := strings.TrimSpace(asString(x))
		for _, layout := range timeLayouts {
			if t, err := time.Parse(layout, str); err == nil {
				return t.UTC(), nil
			}
		}
		return time.Time{}, fmt.Errorf("%q is not a time", str)
	}
	return time.Time{}, fmt.Errorf("%T is not a time", v)
}

// mapError is the one place that turns driver errors into the sentinels callers check:
// a unique violation (PostgreSQL 23505, SQLite SQLITE_CONSTRAINT_UNIQUE/PRIMARYKEY)
// becomes streamrules.ErrExists, sql.ErrNoRows becomes streamrules.ErrNotFound.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return streamrules.ErrNotFound
	}
	if pq.As(err, pqerror.UniqueViolation) != nil {
		return fmt.Errorf("%w (%v)", streamrules.ErrExists, err)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w (%v)", streamrules.ErrExists, err)
		case sqlite3.SQLITE_CONSTRAINT:
			if strings.Contains(se.Error(), "UNIQUE constraint failed") {
				return fmt.Errorf("%w (%v)", streamrules.ErrExists, err)
			}
		}
	}
	return err
}

// validate is the editor's check: the engine's own normalization and validation, with the
// store's environments.
func (s *Store) validate(r *streamrules.Rule) error {
	r.Normalize() // builds a new When: the caller's slice is not touched
	return streamrules.Validate(r, s.known)
}

// LoadRules implements streamrules.Store: every rule, by name. A row with a bad
// condition or scope is returned as it is (the engine skips it with a warning); a row
// whose columns cannot be read at all is skipped here with a warning.
//
// Disabled rules are returned too, marked: the engine counts them in its load summary.
// It returns when ctx is done or Close begins, whatever the server does: a reload on a
// black-holed database must not keep Close waiting.
func (s *Store) LoadRules(ctx context.Context) ([]streamrules.Rule, error) {
	return s.allRules(ctx, "load rules")
}

// ListRules implements streamrules.RuleEditor: every rule, disabled included, by name,
// read as LoadRules reads them.
func (s *Store) ListRules(ctx context.Context) ([]streamrules.Rule, error) {
	return s.allRules(ctx, "list rules")
}

// allRules reads every rule, by name, within ctx and until Close begins; what names the
// call in its error.
func (s *Store) allRules(ctx context.Context, what string) ([]streamrules.Rule, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.life, cancel)
	defer stop()
	all, err := bounded(s, ctx, func() ([]streamrules.Rule, error) {
		rows, err := s.query(ctx, s.db, s.q.allRules)
		if err != nil {
			return nil, err
		}
		return s.readRules(rows)
	})
	if err != nil {
		return nil, fmt.Errorf("rulesdb: %s: %w", what, err)
	}
	return all, nil
}

// GetRule implements streamrules.RuleEditor.
func (s *Store) GetRule(ctx context.Context, name string) (streamrules.Rule, error) {
	return s.getRule(ctx, s.db, name)
}

func (s *Store) getRule(ctx context.Context, r runner, name string) (streamrules.Rule, error) {
	if err := missingName(name); err != nil {
		return streamrules.Rule{}, err
	}
	rows, err := s.query(ctx, r, s.q.ruleByName, name)
	if err != nil {
		return streamrules.Rule{}, fmt.Errorf("rulesdb: get rule %q: %w", name, err)
	}
	list, err := s.readRules(rows)
	if err != nil {
		return streamrules.Rule{}, fmt.Errorf("rulesdb: get rule %q: %w", name, err)
	}
	if len(list) == 0 {
		return streamrules.Rule{}, fmt.Errorf("rulesdb: rule %q: %w", name, streamrules.ErrNotFound)
	}
	return list[0], nil
}

// CreateRule implements streamrules.RuleEditor. The rule is normalized and validated
// (a *streamrules.ValidationError names the bad field and nothing is written); a taken
// name is streamrules.ErrExists. The rule is stored as given, Disabled included.
func (s *Store) CreateRule(ctx context.Context, r streamrules.Rule) (streamrules.Rule, error) {
	if err := s.validate(&r); err != nil {
		return streamrules.Rule{}, err
	}
	ts := s.now()
	r.CreatedAt, r.UpdatedAt = ts, ts
	unlock := s.lockWrites()
	err := s.get(ctx, s.db, &r.ID, s.q.insertRule, append([]any{
		r.Name, r.Scope, r.Condition, r.Negate, joinWhen(r.When), r.Text, string(r.Mode), r.Repeat, !r.Disabled, ts, ts, r.Shadow, r.Early},
		tailValues(r)...)...)
	unlock()
	if err != nil {
		err = mapError(err)
		if errors.Is(err, streamrules.ErrExists) {
			err = streamrules.ErrNameTaken // the field too, as every store says it
		}
		return streamrules.Rule{}, fmt.Errorf("rulesdb: create rule %q: %w", r.Name, err)
	}
	s.notify()
	return r, nil
}

// UpdateRule implements streamrules.RuleEditor: the rule named name is replaced by r,
// which may rename it. updated_at grows strictly, which marks the rule as edited by the
// master: a calibration wave leaves it alone.
func (s *Store) UpdateRule(ctx context.Context, name string, r streamrules.Rule) (streamrules.Rule, error) {
	if err := missingName(name); err != nil {
		return streamrules.Rule{}, err
	}
	keep := r.Name == name
	if err := s.validate(&r); err != nil {
		return streamrules.Rule{}, err
	}
	if keep {
		// Not a rename: the row keeps its name exactly as stored, even one typed in by hand
		// that Normalize would change (" good_tool"). Trimmed, it would be a rename onto
		// the real good_tool, refused as taken, and the row could only be deleted.
		r.Name = name
	}
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		var old struct {
			ID        int64 `db:"id"`
			CreatedAt any   `db:"created_at"`
			UpdatedAt any   `db:"updated_at"`
		}
		if err := s.get(ctx, tx, &old, s.q.lockRule, name); err != nil {
			return err
		}
		r.ID = old.ID
		r.CreatedAt, _ = asTime(old.CreatedAt)
		prev, _ := asTime(old.UpdatedAt)
		r.UpdatedAt = s.now()
		if !r.UpdatedAt.After(prev) {
			r.UpdatedAt = prev.Add(time.Microsecond)
		}
		_, err := s.exec(ctx, tx, s.q.updateRule, append([]any{
			r.Name, r.Scope, r.Condition, r.Negate, joinWhen(r.When), r.Text, string(r.Mode), r.Repeat, !r.Disabled, r.UpdatedAt, r.Shadow, r.Early},
			append(tailValues(r), r.ID)...)...)
		return err
	})
	if err != nil {
		err = mapError(err)
		if errors.Is(err, streamrules.ErrNotFound) {
			return streamrules.Rule{}, fmt.Errorf("rulesdb: rule %q: %w", name, err)
		}
		if errors.Is(err, streamrules.ErrExists) {
			err = streamrules.ErrNameTaken
		}
		return streamrules.Rule{}, fmt.Errorf("rulesdb: update rule %q: %w", name, err)
	}
	s.notify()
	return r, nil
}

// DeleteRule implements streamrules.RuleEditor. The rule's firings stay in
// stream_rule_stat; a seeded rule stays deleted through later calibration waves.
func (s *Store) DeleteRule(ctx context.Context, name string) error {
	if err := missingName(name); err != nil {
		return err
	}
	unlock := s.lockWrites()
	res, err := s.exec(ctx, s.db, s.q.deleteRule, name)
	unlock()
	if err != nil {
		return fmt.Errorf("rulesdb: delete rule %q: %w", name, mapError(err))
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("rulesdb: rule %q: %w", name, streamrules.ErrNotFound)
	}
	s.notify()
	return nil
}
