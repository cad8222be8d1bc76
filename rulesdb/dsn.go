package rulesdb

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/lib/pq"
)

// dialect is the SQL flavour of the database behind a Store.
type dialect int

const (
	dialectPostgres dialect = iota + 1
	dialectSQLite
)

func (d dialect) String() string {
	switch d {
	case dialectPostgres:
		return "postgres"
	case dialectSQLite:
		return "sqlite"
	}
	return "unknown"
}

// target is a parsed DSN: which driver, what to hand it, and how to name it in errors.
type target struct {
	dialect dialect
	driver  string // the DSN given to the driver
	about   string // "PostgreSQL host H database D" / "SQLite file F": never a password
	secrets []string
	memory  bool // SQLite in memory: one connection, kept forever
}

// DefaultConnectTimeout is the connect_timeout, in seconds, a PostgreSQL DSN gets unless it
// sets one.
const DefaultConnectTimeout = "5"

// ErrUnknownScheme is wrapped by Open's error for a DSN it cannot place.
var ErrUnknownScheme = errors.New(`rulesdb: unknown DSN scheme: use "postgres://…", "postgresql://…", "sqlite:PATH", "file:PATH" or "" for the default SQLite file`)

// schemeError names the scheme Open cannot place and wraps ErrUnknownScheme, saying
// "rulesdb:" once.
type schemeError struct{ scheme string }

func (e *schemeError) Error() string {
	return fmt.Sprintf("rulesdb: scheme %q: %s", e.scheme, strings.TrimPrefix(ErrUnknownScheme.Error(), "rulesdb: "))
}

func (e *schemeError) Unwrap() error { return ErrUnknownScheme }

// ErrBadDSN is wrapped by the error of Describe and Open for a DSN that is malformed: not
// a URL, a port that is not a number, a value the driver does not take (sslmode=bogus),
// a query that does not decode (%zz). Nothing was dialled; the DSN must change.
var ErrBadDSN = errors.New("rulesdb: invalid DSN")

// dsnError is a malformed DSN: its message (never the password) and ErrBadDSN.
type dsnError struct{ msg string }

func (e *dsnError) Error() string { return e.msg }
func (e *dsnError) Unwrap() error { return ErrBadDSN }

func badDSN(format string, args ...any) error {
	return &dsnError{fmt.Sprintf(format, args...)}
}

// Describe checks a DSN as Open would, without connecting, and names the store it points
// at ("PostgreSQL host H database D", "SQLite file F"): never its password. A host uses
// it to reject a bad DSN up front, naming its own configuration variable.
func Describe(dsn, defaultSQLitePath string) (string, error) {
	t, err := parseDSN(dsn, defaultSQLitePath)
	return t.about, err
}

func parseDSN(dsn, defaultSQLitePath string) (target, error) {
	switch {
	case dsn == "":
		return sqliteTarget(defaultSQLitePath, "")
	case hasPrefixFold(dsn, "postgres://"), hasPrefixFold(dsn, "postgresql://"):
		return postgresTarget(dsn)
	case hasPrefixFold(dsn, "sqlite:"):
		rest := dsn[len("sqlite:"):]
		rest = strings.TrimPrefix(rest, "//") // sqlite:///abs/path.db and sqlite://rel.db
		path, query, _ := strings.Cut(rest, "?")
		return sqliteTarget(path, query)
	case hasPrefixFold(dsn, "file:"):
		path, query, _ := strings.Cut(dsn, "?")
		return sqliteTarget(path, query)
	}
	scheme, _, ok := strings.Cut(dsn, ":")
	if !ok || strings.ContainsAny(scheme, " =/") {
		scheme = "(none)"
	}
	return target{}, &schemeError{scheme}
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func postgresTarget(dsn string) (target, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		// url.Error quotes the whole DSN, password included: keep only its reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return target{}, badDSN("rulesdb: PostgreSQL DSN is not a valid URL: %v", err)
	}
	// Not u.Query(): it drops a pair that does not decode, so "sslmode=disable%zz" would
	// connect without the sslmode the user wrote.
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return target{}, badDSN("rulesdb: PostgreSQL DSN query: %v", err)
	}
	host := u.Host
	if host == "" {
		host = q.Get("host")
	}
	if host == "" {
		host = "localhost"
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" {
		db = q.Get("dbname")
	}
	if db == "" && u.User != nil {
		db = u.User.Username()
	}
	t := target{
		dialect: dialectPostgres,
		about:   fmt.Sprintf("PostgreSQL host %s database %s", host, db),
	}
	if u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			t.secrets = append(t.secrets, pw, url.QueryEscape(pw), url.PathEscape(pw))
		}
	}
	if pw := q.Get("password"); pw != "" {
		t.secrets = append(t.secrets, pw, url.QueryEscape(pw))
	}
	// One network round trip per statement: Parse, Bind and Execute go out together.
	// Without it lib/pq waits for Parse's answer before it binds.
	if !q.Has("binary_parameters") {
		q.Set("binary_parameters", "yes")
	}
	// Without connect_timeout lib/pq waits forever on a server that accepts the TCP
	// connection and never answers (a hung host, a half-open firewall): Open, every new
	// pool connection and the listener's reconnects would hang.
	if !q.Has("connect_timeout") {
		q.Set("connect_timeout", DefaultConnectTimeout)
	}
	u.RawQuery = q.Encode()
	t.driver = u.String()
	// The driver's own reading of every option (sslmode, port, connect_timeout, …), so a
	// value it refuses is a bad DSN here, before anything is dialled.
	if _, err := pq.NewConfig(t.driver); err != nil {
		return target{}, badDSN("rulesdb: %s: bad DSN: %s", t.about, t.scrub(err))
	}
	return t, nil
}

// sqliteTarget builds a DSN for modernc.org/sqlite: WAL, a busy timeout, write
// transactions that take the write lock up front, and a time format that reads back.
func sqliteTarget(path, query string) (target, error) {
	if path == "" || path == "file:" {
		return target{}, badDSN("rulesdb: SQLite DSN without a file path")
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return target{}, badDSN("rulesdb: SQLite DSN query %q: %v", query, err)
	}
	t := target{dialect: dialectSQLite, about: "SQLite file " + path}
	mem := strings.Contains(path, ":memory:") || q.Get("mode") == "memory"
	if mem {
		t.memory, t.about = true, "SQLite in memory"
	}
	if !hasPragma(q, "busy_timeout", "_busy_timeout", "_timeout") {
		q.Add("_pragma", "busy_timeout(10000)")
	}
	if !hasPragma(q, "journal_mode", "_journal_mode", "_journal") && !mem {
		q.Add("_pragma", "journal_mode(WAL)")
	}
	if !hasPragma(q, "synchronous", "_synchronous", "_sync") {
		q.Add("_pragma", "synchronous(NORMAL)")
	}
	// Not negotiable: seeding and migrations rely on BEGIN IMMEDIATE, and the store reads
	// back the times it writes.
	q.Set("_txlock", "immediate")
	q.Set("_time_format", "sqlite")
	t.driver = path + "?" + q.Encode()
	return t, nil
}

func hasPragma(q url.Values, pragma string, keys ...string) bool {
	for _, k := range keys {
		if q.Has(k) {
			return true
		}
	}
	for _, p := range q["_pragma"] {
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(p)), pragma) {
			return true
		}
	}
	return false
}

// connectError is a failure to reach or open the database. Its message names the host
// and database (or the file), never a password.
type connectError struct {
	about string
	msg   string
	err   error
}

func (e *connectError) Error() string {
	msg := "rulesdb: " + e.about + ": " + e.msg
	if h := hint(e.err); h != "" {
		msg += " (" + h + ")"
	}
	return msg
}

// hint says what to do about a connection error, where the driver's message does not.
func hint(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "SSL is not enabled on the server"):
		return "the server does not speak TLS: add sslmode=disable to the DSN, or enable ssl on the server"
	case strings.Contains(msg, "connection refused"):
		return "nothing listens there: is PostgreSQL running, and on that host and port?"
	case strings.Contains(msg, "i/o timeout"), strings.Contains(msg, "deadline exceeded"):
		return "no answer within connect_timeout (default " + DefaultConnectTimeout + "s): check the host, the port and the firewall, or raise connect_timeout in the DSN"
	case strings.Contains(msg, "password authentication failed"):
		return "check the user and password in the DSN"
	case strings.Contains(msg, "does not exist") && strings.Contains(msg, "database"):
		return "create the database first (createdb), or fix its name in the DSN"
	case strings.Contains(msg, "no such host"):
		return "the host name does not resolve: check the DSN's host"
	}
	return ""
}
func (e *connectError) Unwrap() error { return e.err }

func (t target) connectErr(step string, err error) error {
	return &connectError{about: t.about, msg: step + ": " + t.scrub(err), err: err}
}

// scrub returns err's message without the DSN's password.
func (t target) scrub(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	for _, s := range t.secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	return msg
}
