package rulesdb

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"modernc.org/sqlite" // driver "sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"

	// Shell rules (Rule.Shell) are read as a shell reads them wherever this package runs.
	_ "github.com/streamrules/streamrules/shellcmd"
)

var (
	_ streamrules.Store          = (*Store)(nil)
	_ streamrules.RuleEditor     = (*Store)(nil)
	_ streamrules.FiringCounter  = (*Store)(nil)
	_ streamrules.ChangeNotifier = (*Store)(nil)
)

// EnvDSN is the environment variable hosts conventionally read the DSN from.
const EnvDSN = "STREAMRULES_DSN"

// ChangeChannel is the PostgreSQL NOTIFY channel a trigger on stream_rules fires on.
const ChangeChannel = "stream_rules_changed"

// Config tunes a Store. A nil *Config means all defaults. Open fills the zero fields with
// their defaults (WithDefaults) and refuses a negative size or duration with an error
// naming the field; negative ReloadInterval and BatchDelay mean off. The env tags let a
// host fill it with github.com/caarlos0/env/v11.
type Config struct {
	// DefaultSQLitePath is the SQLite file Open uses for an empty DSN.
	// Default "streamrules.db" in the working directory.
	DefaultSQLitePath string `env:"STREAMRULES_SQLITE_PATH"`
	// Environments are environment names a rule's `when` may use beside Seed's
	// (Seed.Environments: seeds.Environments() for the shipped set). The store lists
	// both to the engine (Store.Environments), so streamrules.Config.Environments need
	// not repeat them. Default none.
	Environments []string `env:"STREAMRULES_ENVIRONMENTS"`
	// ReloadInterval is how often subscribers are told to reload anyway, a backstop for
	// a missed notification (and, on SQLite, how edits by other processes arrive).
	// Default 0 means 30s; negative disables the backstop.
	ReloadInterval time.Duration `env:"STREAMRULES_RELOAD_INTERVAL"`
	// ReloadMode is how changes made by other processes arrive: "notify" (default) is a
	// LISTEN connection on PostgreSQL plus the ReloadInterval backstop; "poll" holds no
	// connection and reads one version row every ReloadInterval (default 1s in this
	// mode), reloading when it moved: for pgbouncer in transaction mode, where LISTEN
	// does not survive, and for many replicas (poll.go, docs/scale.md).
	ReloadMode string `env:"STREAMRULES_RELOAD_MODE"`
	// MaxOpenConns caps the connection pool. Default 0 means 10 for PostgreSQL and 4 for
	// a SQLite file (writers take turns anyway); SQLite in memory always uses 1.
	MaxOpenConns int `env:"STREAMRULES_MAX_OPEN_CONNS"`
	// StatRetention is how long raw stat rows are kept ("90d", "36h"); the store prunes
	// older ones at Open and then hourly (see Store.PruneStats). The per-rule counters are
	// never pruned. Default 0: keep forever.
	StatRetention Retention `env:"STREAMRULES_STAT_RETENTION"`
	// Seed, if set, is seeded by Open (see Store.Seed). Default nil: Open does not seed.
	Seed *seeds.Set `env:"-"`
	// Logger receives warnings (unreadable rows, listener trouble) and the seeding report.
	// Default slog.Default().
	Logger *slog.Logger `env:"-"`
	// QueueSize caps the move records kept in memory while the database does not take
	// them (see Store.SaveMove); when full, the oldest is dropped (Stats.DroppedMoves).
	// Default 0 means 10000.
	QueueSize int `env:"STREAMRULES_QUEUE_SIZE"`
	// WriteTimeout bounds one attempt of the write queue to write a record. Default 0
	// means 5s.
	WriteTimeout time.Duration `env:"STREAMRULES_WRITE_TIMEOUT"`
	// FlushTimeout bounds how long Close tries to write the records still queued; what is
	// left is logged and lost. Default 0 means 10s.
	FlushTimeout time.Duration `env:"STREAMRULES_FLUSH_TIMEOUT"`
	// BatchSize caps the move records the write queue writes in one statement (group
	// commit, batch.go): at most one per chat. Default 0 means 512.
	BatchSize int `env:"STREAMRULES_BATCH_SIZE"`
	// BatchDelay is how long the write queue waits for more records before it writes a
	// batch that is not full. Default 0 means 2ms; negative: no wait.
	BatchDelay time.Duration `env:"STREAMRULES_BATCH_DELAY"`
	// ChatCacheTTL lets LoadChat answer from this process's memory for a chat it read
	// less than this long ago (with its own moves since applied), sending no statement.
	// Repeat limits stay exact across replicas (claims, claim.go); what a cached read can
	// miss is other replicas' moves of the chat, so move numbers (and after:N, which counts
	// them) may lag while another replica serves the same chat. Hosts that route a chat
	// to one replica lose nothing. Default 0: every LoadChat reads the database.
	ChatCacheTTL time.Duration `env:"STREAMRULES_CHAT_CACHE_TTL"`

	dialer    pq.Dialer              // tests: count the PostgreSQL wire traffic
	pruneTick <-chan time.Time       // tests: drive the pruning; default an hourly ticker
	onPrune   func(n int64, e error) // tests: told after each prune
	migrateTo int                    // tests: stop migrating after this version (an older database)
}

// Store keeps stream rules, chat state and firings in PostgreSQL or SQLite. It implements
// streamrules.Store, RuleEditor, FiringCounter and ChangeNotifier. It is safe for
// concurrent use; Close it when done.
type Store struct {
	db      *sqlx.DB
	dialect dialect
	target  target
	log     *slog.Logger
	known   []string
	now     func() time.Time
	trips   atomic.Int64
	warned  sync.Map   // unreadable row versions already logged
	wmu     sync.Mutex // SQLite: this process's writers take turns here, not in the busy handler
	onPrune func(int64, error)

	q queries

	wq      writeQueue // move records not written yet, and the flushers that write them (queue.go)
	rmu     sync.Mutex // guards reads (readbatch.go)
	reads   readQueue
	writer  string             // this Store's id in stream_chat_writer: random, one per Open
	wtrips  atomic.Int64       // statements of the write path (WriteStatements)
	chatTTL time.Duration      // Config.ChatCacheTTL
	conns   *conns             // PostgreSQL: every connection, to cut them (dial.go)
	maxIdle int                // PostgreSQL: the pool's idle connections (see dropIdle)
	life    context.Context    // ends when Close begins: polls, prunes and rule reads stop
	endLife context.CancelFunc // ends life

	seedHook func()                                         // tests: called inside Seed's transaction once the seed state is read
	trace    atomic.Pointer[func(query string, args []any)] // tests: every statement sent (scale_test.go)
	// tests: readHook is called before a shared read is sent, readJoined when a LoadChat
	// joined the open read without sending it (readbatch.go).
	readHook   func(chats []string)
	readJoined func()

	subMu   sync.Mutex
	subs    map[int]func()
	nextSub int

	listener  *pq.Listener
	done      chan struct{}
	wg        sync.WaitGroup
	closers   []func() // run by Close after the goroutines stopped
	closeOnce sync.Once
	closeErr  error
}

// Open connects to the database dsn names, applies the embedded migrations and, if
// cfg.Seed is set, seeds it. The DSN forms:
//
//	postgres://user:pass@host:5432/db?sslmode=disable   PostgreSQL (also postgresql://)
//	""                                                  SQLite file cfg.DefaultSQLitePath
//	sqlite:/var/lib/agent/rules.db                      SQLite file (sqlite:rel.db is relative)
//	file:rules.db?cache=shared                          SQLite URI
//
// On PostgreSQL, Open also starts a listener on ChangeChannel; Close stops it.
// A connection error names the host and database (or the file), never the password.
func Open(ctx context.Context, dsn string, cfg *Config) (*Store, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	t, err := parseDSN(dsn, cfg.DefaultSQLitePath)
	if err != nil {
		return nil, err
	}
	writer, err := newWriterID()
	if err != nil {
		return nil, err
	}
	s := &Store{
		dialect: t.dialect,
		target:  t,
		log:     cfg.Logger,
		known:   storeEnvironments(cfg),
		now:     func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) },
		subs:    map[int]func(){},
		done:    make(chan struct{}),

		writer:  writer,
		chatTTL: cfg.ChatCacheTTL,
	}
	s.wq.init(s, cfg)
	s.life, s.endLife = context.WithCancel(context.Background())
	var db *sql.DB
	switch t.dialect {
	case dialectPostgres:
		conn, err := pq.NewConnector(t.driver)
		if err != nil {
			return nil, t.connectErr("bad DSN", err)
		}
		s.conns = newConns(cfg.dialer)
		conn.Dialer(s.conns)
		db = sql.OpenDB(conn)
		s.maxIdle = cmp.Or(cfg.MaxOpenConns, defaultPostgresConns)
		db.SetMaxOpenConns(s.maxIdle)
		db.SetMaxIdleConns(s.maxIdle)
		s.db = sqlx.NewDb(db, "postgres")
	case dialectSQLite:
		db, err = sql.Open("sqlite", t.driver)
		if err != nil {
			return nil, t.connectErr("open", err)
		}
		if t.memory {
			db.SetMaxOpenConns(1)
			db.SetMaxIdleConns(1)
			db.SetConnMaxLifetime(0)
			db.SetConnMaxIdleTime(0)
		} else {
			db.SetMaxOpenConns(cmp.Or(cfg.MaxOpenConns, defaultSQLiteConns))
			db.SetMaxIdleConns(cmp.Or(cfg.MaxOpenConns, defaultSQLiteConns))
		}
		s.db = sqlx.NewDb(db, "sqlite")
	}
	s.q = buildQueries(s.db, t.dialect)
	if err := s.start(ctx, cfg); err != nil {
		if s.listener != nil {
			_ = s.listener.Close()
		}
		db.Close()
		if s.conns != nil {
			s.conns.cutAll(errClosed)
		}
		s.endLife()
		s.wq.endLife() // never started: nothing queued, no flusher to stop
		return nil, err
	}
	interval := cfg.ReloadInterval // negative: no backstop, no polling
	if cfg.ReloadMode == ReloadPoll {
		if interval > 0 {
			v, err := s.RulesVersion(ctx)
			if errors.Is(err, errNoVersion) {
				v, err = s.restoreVersion(ctx, 0) // the load below reads every rule anyway
			}
			if err != nil {
				s.Close()
				return nil, err
			}
			s.wg.Add(1)
			go s.poll(interval, v)
		}
	} else if s.listener != nil || interval > 0 {
		s.wg.Add(1)
		go s.watch(interval)
	}
	if keep := time.Duration(cfg.StatRetention); keep > 0 {
		tick := cfg.pruneTick
		if tick == nil {
			t := time.NewTicker(time.Hour)
			s.closers = append(s.closers, t.Stop)
			tick = t.C
		}
		s.onPrune = cfg.onPrune
		s.wg.Add(1)
		go s.pruneLoop(keep, tick)
	}
	s.wq.Start()
	return s, nil
}

var errClosed = errors.New("rulesdb: store closed")

// start connects, migrates, seeds and listens. On PostgreSQL it returns as soon as ctx
// ends, whatever the server does: the connections are cut then (see conns).
func (s *Store) start(ctx context.Context, cfg *Config) (err error) {
	if s.conns != nil {
		stop := context.AfterFunc(ctx, func() { s.conns.cutAll(context.Cause(ctx)) })
		defer func() {
			if !stop() && ctx.Err() != nil {
				// ctx ended while Open ran: whatever failed, that is why.
				err = s.target.connectErr("connect", fmt.Errorf("gave up: %w", context.Cause(ctx)))
			}
		}()
	}
	if err := s.ping(ctx); err != nil {
		return s.target.connectErr("connect", err)
	}
	if err := s.migrate(ctx, cfg.migrateTo); err != nil {
		return err
	}
	if cfg.Seed != nil {
		rep, err := s.Seed(ctx, *cfg.Seed)
		if err != nil {
			return err
		}
		s.log.Info("stream rules seeded", rep.LogAttrs()...)
	}
	if s.dialect == dialectPostgres && cfg.ReloadMode != ReloadPoll {
		return s.listen(ctx, s.conns)
	}
	return nil
}

// ping opens the first connection. SQLite applies the DSN's pragmas there, and switching a
// new file to WAL takes a lock without waiting for busy_timeout: several processes (or
// Opens) starting on one new file at once can get SQLITE_BUSY. That is retried, briefly,
// with a growing pause; anything else is returned at once.
func (s *Store) ping(ctx context.Context) error {
	delay := 5 * time.Millisecond
	for {
		err := s.db.PingContext(ctx)
		var se *sqlite.Error
		if err == nil || s.dialect != dialectSQLite || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || delay > 2*time.Second {
			return err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		delay *= 2
	}
}

// newWriterID is a Store's name in stream_chat_writer: 64 random bits, so two processes
// (or two Opens in one) never share one.
func newWriterID() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("rulesdb: writer id: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// Environments implements streamrules.EnvironmentLister: the names a rule's `when` may
// use here, Config.Seed's then Config.Environments, each once. An engine on the store
// knows them.
func (s *Store) Environments() []string { return slices.Clone(s.known) }

// storeEnvironments is the store's known list: cfg.Seed's environments, then
// cfg.Environments, each once.
func storeEnvironments(cfg *Config) []string {
	var out []string
	if cfg.Seed != nil {
		out = slices.Clone(cfg.Seed.Environments)
	}
	for _, name := range cfg.Environments {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// Close stops the listener and the reload backstop, writes the move records still queued
// (waiting at most Config.FlushTimeout, and logging what it could not write), and closes
// the database. Subscribers are not called after Close returns. Safe to call twice.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.done)
		s.endLife()
		if s.listener != nil {
			_ = s.listener.Close()
		}
		// The queue first: its flushers stop now, as the other goroutines do, and its
		// final flush need not wait for the listener to go.
		s.wq.Close()
		s.wg.Wait()
		if s.listener != nil {
			s.awaitListener(11 * time.Second)
		}
		for _, c := range s.closers {
			c()
		}
		s.dropWriterRows()
		s.closeErr = s.db.Close()
		if s.conns != nil {
			// Reads stuck on a server that stopped answering (see bounded) end here.
			s.conns.cutAll(errClosed)
		}
	})
	return s.closeErr
}

// dropWriterRows deletes this Store's idempotency rows: nothing of it is retried after
// Close. If records are still queued (lost), a write attempt is still running (one its
// caller stopped waiting for: it may commit after Close, and without its row it would
// count a second time) or the database does not answer, they stay: harmless, one row per
// chat.
func (s *Store) dropWriterRows() {
	s.lockQueue()
	left, taken := s.wq.fifo.Len(), s.wq.nextSeq
	s.wq.mu.Unlock()
	if left > 0 || taken == 0 || s.wq.inflight.Load() > 0 {
		return // records lost, none ever taken, or a write may still land: no delete
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.wq.writeTimeout)
	defer cancel()
	_, _ = bounded(s, ctx, func() (struct{}, error) {
		unlock := s.lockWrites()
		defer unlock()
		_, err := s.exec(ctx, s.db, s.q.dropWriter, s.writer)
		return struct{}{}, err
	})
}

// DB returns the underlying database handle, for the host's own queries and for tests.
func (s *Store) DB() *sqlx.DB { return s.db }

// Driver returns "postgres" or "sqlite".
func (s *Store) Driver() string { return s.dialect.String() }

// ---- counted database access: every statement the store sends goes through these ----

type runner interface {
	sqlx.ExecerContext
	sqlx.QueryerContext
}

func (s *Store) exec(ctx context.Context, r runner, query string, args ...any) (sql.Result, error) {
	if t := s.trace.Load(); t != nil {
		(*t)(query, args)
	}
	s.trips.Add(1)
	return r.ExecContext(ctx, query, args...)
}

func (s *Store) get(ctx context.Context, r runner, dest any, query string, args ...any) error {
	if t := s.trace.Load(); t != nil {
		(*t)(query, args)
	}
	s.trips.Add(1)
	return sqlx.GetContext(ctx, r, dest, query, args...)
}

func (s *Store) sel(ctx context.Context, r runner, dest any, query string, args ...any) error {
	if t := s.trace.Load(); t != nil {
		(*t)(query, args)
	}
	s.trips.Add(1)
	return sqlx.SelectContext(ctx, r, dest, query, args...)
}

func (s *Store) query(ctx context.Context, r runner, query string, args ...any) (*sqlx.Rows, error) {
	if t := s.trace.Load(); t != nil {
		(*t)(query, args)
	}
	s.trips.Add(1)
	return r.QueryxContext(ctx, query, args...)
}

// lockWrites serializes this process's SQLite writers; PostgreSQL needs no such thing.
func (s *Store) lockWrites() func() {
	if s.dialect != dialectSQLite {
		return func() {}
	}
	s.wmu.Lock()
	return s.wmu.Unlock
}

// withTx runs fn in a transaction, committed when fn returns nil. On SQLite the
// transaction begins IMMEDIATE: it holds the write lock from its first statement.
// On PostgreSQL it is READ COMMITTED.
func (s *Store) withTx(ctx context.Context, fn func(tx *sqlx.Tx) error) (err error) {
	defer s.lockWrites()()
	var opts *sql.TxOptions
	if s.dialect == dialectPostgres {
		// Explicit: the seeding and migration locks rely on each statement seeing what
		// was committed before it, whatever the server's default isolation is.
		opts = &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	}
	s.trips.Add(1)
	tx, err := s.db.BeginTxx(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		s.trips.Add(1)
		if rbErr := tx.Rollback(); rbErr != nil && !errors.Is(rbErr, sql.ErrTxDone) {
			return errors.Join(err, rbErr)
		}
		return err
	}
	s.trips.Add(1)
	return tx.Commit()
}
