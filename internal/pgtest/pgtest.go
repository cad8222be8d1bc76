package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lib/pq"
	"go.uber.org/goleak"
)

// EnvDSN names the environment variable that points the tests at an existing
// server instead of a throw-away cluster.
const EnvDSN = "STREAMRULES_TEST_DSN"

// envCI names the environment variable that, when true, turns "no PostgreSQL
// found" from a skip into a test failure.
const envCI = "CI"

const (
	dbPrefix      = "t_"
	ddlTimeout    = 2 * time.Minute
	logTailBytes  = 4096
	startAttempts = 3
)

var (
	once     sync.Once
	srv      *server // set by setup when it succeeded
	srvErr   error   // set by setup when it failed
	announce sync.Once

	errFinished = errors.New("DSN called after pgtest.Main finished")
)

// server is the PostgreSQL server the per-test databases are created on.
type server struct {
	admin   *sql.DB                // connection for CREATE/DROP DATABASE
	dsnFor  func(db string) string // DSN of database db on this server
	about   string                 // for the log
	cluster *cluster               // nil when using STREAMRULES_TEST_DSN
}

// cluster is a throw-away cluster started by this test binary.
type cluster struct {
	binDir  string
	tmpDir  string // everything lives in here ...
	sockDir string // ... except, with a long $TMPDIR, the socket directory
	dataDir string
	logFile string
	port    int
	cred    *syscall.Credential // run the server as this user (when root)

	watchdog *exec.Cmd // cleans up when the test binary dies without Main
	lifeline *os.File  // write end of the watchdog's stdin; never written
}

// noPostgresError means there is no usable PostgreSQL installation: a reason
// to skip (or, on CI, to fail) rather than a broken setup.
type noPostgresError struct{ reason string }

func (e *noPostgresError) Error() string { return "no PostgreSQL found (" + e.reason + ")" }

// DSN returns a postgres:// DSN for a fresh, empty database on a real
// PostgreSQL server, for test t. Each call creates a new database
// (CREATE DATABASE t_<random>) on a server shared by the whole test binary,
// and drops it with DROP DATABASE ... WITH (FORCE) in t.Cleanup.
//
// With no PostgreSQL installed DSN skips t, or fails it if CI is true.
// See the package documentation for where the server comes from.
func DSN(t testing.TB) string {
	t.Helper()
	once.Do(setup)
	if srvErr != nil {
		var np *noPostgresError
		if errors.As(srvErr, &np) {
			if inCI() {
				t.Fatalf("pgtest: no PostgreSQL found (%s) and %s=%s: FAILING instead of skipping; set %s or install postgresql",
					np.reason, envCI, os.Getenv(envCI), EnvDSN)
			}
			t.Skipf("pgtest: no PostgreSQL found (%s): SKIPPING tests that need a real server; set %s or install postgresql",
				np.reason, EnvDSN)
		}
		t.Fatalf("pgtest: %v", srvErr)
	}
	announce.Do(func() { t.Logf("pgtest: using %s", srv.about) })

	name, err := randomName()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	quoted := pq.QuoteIdentifier(name)
	ctx, cancel := context.WithTimeout(context.Background(), ddlTimeout)
	defer cancel()
	if _, err := srv.admin.ExecContext(ctx, "CREATE DATABASE "+quoted); err != nil {
		t.Fatalf("pgtest: CREATE DATABASE %s on %s: %v", quoted, srv.about, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), ddlTimeout)
		defer cancel()
		// FORCE terminates connections the test left open.
		if _, err := srv.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+quoted+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: DROP DATABASE %s: %v", quoted, err)
		}
	})
	return srv.dsnFor(name)
}

// Main runs the tests and then stops the throw-away cluster, if DSN started
// one, whether the tests passed or not. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	// Make DSN calls from goroutines that outlive the tests fail instead of
	// starting a new cluster that nobody would stop.
	once.Do(func() {})
	if srv != nil {
		if err := srv.close(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: WARNING: %v\n", err)
		}
	}
	srv, srvErr = nil, errFinished
	if code == 0 {
		// Only after a passing run: a failing test may leave goroutines behind on purpose
		// (t.Fatal in the middle of a wait), and its failure says more than the leak.
		if err := goleak.Find(leakIgnores...); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: goroutines leaked by the tests: %v\n", err)
			return 1
		}
	}
	return code
}

// leakIgnores are goroutines that outlive the tests for a reason, each with it.
var leakIgnores = []goleak.Option{
	// database/sql closes a pool's connection opener asynchronously after DB.Close.
	goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"),
	// The testing package's own goroutines.
	goleak.IgnoreTopFunction("testing.(*T).Run"),
	goleak.IgnoreTopFunction("testing.runFuzzTests"),
}

func inCI() bool {
	ci, _ := strconv.ParseBool(os.Getenv(envCI))
	return ci
}

func randomName() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random database name: %w", err)
	}
	return dbPrefix + hex.EncodeToString(b), nil
}

// setup runs once per test binary and sets srv or srvErr.
func setup() {
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		srv, srvErr = external(dsn)
		return
	}
	srv, srvErr = startCluster()
}

// external uses the server named by STREAMRULES_TEST_DSN.
func external(dsn string) (*server, error) {
	s, err := externalServer(dsn)
	if err != nil {
		return nil, err
	}
	db, err := openAdmin(dsn)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %v", s.about, err)
	}
	s.admin = db
	return s, nil
}

// externalServer describes the server of dsn, without connecting to it.
func externalServer(dsn string) (*server, error) {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		// key=value form: for repeated keys the last one wins.
		return &server{
			about:  EnvDSN + " server",
			dsnFor: func(db string) string { return dsn + " dbname=" + db },
		}, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("%s is not a valid URL: %v", EnvDSN, err)
	}
	return &server{
		about: fmt.Sprintf("%s server %s", EnvDSN, u.Redacted()),
		dsnFor: func(db string) string {
			v := *u
			v.Path, v.RawPath = "/"+db, ""
			return v.String()
		},
	}, nil
}

func openAdmin(dsn string) (*sql.DB, error) {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func (s *server) close() error {
	var errs []error
	if err := s.admin.Close(); err != nil {
		errs = append(errs, err)
	}
	if s.cluster != nil {
		if err := s.cluster.destroy(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// startCluster starts the throw-away cluster.
func startCluster() (_ *server, err error) {
	begin := time.Now()
	binDir, err := findBinDir()
	if err != nil {
		return nil, err
	}
	c := &cluster{binDir: binDir}
	uid, gid := -1, -1
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root.
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, &noPostgresError{fmt.Sprintf("running as root and there is no \"postgres\" user to run the server as: %v", err)}
		}
		uid, err = strconv.Atoi(u.Uid)
		if err != nil {
			return nil, fmt.Errorf("uid %q of user postgres: %v", u.Uid, err)
		}
		gid, err = strconv.Atoi(u.Gid)
		if err != nil {
			return nil, fmt.Errorf("gid %q of user postgres: %v", u.Gid, err)
		}
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}

	// Not t.TempDir: the cluster outlives the test that started it.
	if c.tmpDir, err = os.MkdirTemp("", "pgtest-"); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			c.destroy() // err already says what went wrong
		}
	}()
	c.dataDir = filepath.Join(c.tmpDir, "data")
	c.logFile = filepath.Join(c.tmpDir, "postgres.log")
	c.sockDir = filepath.Join(c.tmpDir, "sock")
	// A Unix socket path is limited to 107 bytes.
	if len(c.sockDir)+len("/.s.PGSQL.65535.lock") > 100 {
		if c.sockDir, err = os.MkdirTemp("/tmp", "pgtest-sock-"); err != nil {
			return nil, err
		}
	} else if err = os.Mkdir(c.sockDir, 0o700); err != nil {
		return nil, err
	}
	if c.cred != nil {
		for _, dir := range []string{c.tmpDir, c.sockDir} {
			if err := chownR(dir, uid, gid); err != nil {
				return nil, err
			}
		}
	}
	if err := c.startWatchdog(); err != nil {
		return nil, err
	}

	out, err := c.run("initdb", "-D", c.dataDir, "-A", "trust", "-U", "postgres",
		"--no-sync", "-E", "UTF8", "--locale=C")
	if err != nil {
		return nil, fmt.Errorf("initdb (%s) failed: %v\n%s%s", binDir, err, out, c.hint())
	}

	for attempt := 1; ; attempt++ {
		if c.port, err = freePort(); err != nil {
			return nil, err
		}
		out, err = c.start()
		if err == nil {
			break
		}
		tail := c.logTail()
		// Someone else may have taken the port between freePort and now.
		if attempt < startAttempts && strings.Contains(tail, "could not bind") {
			continue
		}
		return nil, fmt.Errorf("pg_ctl start (%s) failed: %v\n%s\n--- tail of %s ---\n%s", binDir, err, out, c.logFile, tail)
	}

	s := &server{
		cluster: c,
		dsnFor: func(db string) string {
			return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
		},
	}
	if s.admin, err = openAdmin(s.dsnFor("postgres")); err != nil {
		return nil, fmt.Errorf("connecting to the new cluster: %v\n--- tail of %s ---\n%s", err, c.logFile, c.logTail())
	}
	s.about = fmt.Sprintf("throw-away PostgreSQL cluster from %s on 127.0.0.1:%d in %s (started in %s)",
		binDir, c.port, c.tmpDir, time.Since(begin).Round(time.Millisecond))
	return s, nil
}

// start starts the server on c.port and waits until it accepts connections.
func (c *cluster) start() ([]byte, error) {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
		c.port, shellQuote(c.sockDir))
	return c.run("pg_ctl", "-w", "-D", c.dataDir, "-l", c.logFile, "-o", opts, "start")
}

// run runs the PostgreSQL program prog, as the postgres user when root.
func (c *cluster) run(prog string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(c.binDir, prog), args...)
	c.prepare(cmd)
	return cmd.CombinedOutput()
}

func (c *cluster) prepare(cmd *exec.Cmd) {
	cmd.Dir = c.tmpDir
	cmd.Env = cleanEnv()
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
}

// startWatchdog starts a shell that stops the cluster and removes its files
// as soon as its stdin reaches EOF, which happens when this process exits in
// whatever way and the kernel closes the pipe's write end (which only this
// process holds: os.Pipe is close-on-exec). It runs in its own process group,
// so a ^C aimed at "go test" does not take it down with the test binary.
func (c *cluster) startWatchdog() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	const script = `read _ ; "$1" stop -D "$2" -m immediate -w >/dev/null 2>&1 ; rm -rf "$3" "$4"`
	cmd := exec.Command("/bin/sh", "-c", script, "pgtest-watchdog",
		filepath.Join(c.binDir, "pg_ctl"), c.dataDir, c.tmpDir, c.sockDir)
	c.prepare(cmd)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Stdin = r // stdout, stderr: /dev/null, so "go test" never waits for it
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("starting the cleanup watchdog: %v", err)
	}
	c.watchdog, c.lifeline = cmd, w
	return nil
}

// destroy stops the server, if it runs, and removes the cluster's files.
func (c *cluster) destroy() error {
	var errs []error
	if _, err := os.Stat(filepath.Join(c.dataDir, "postmaster.pid")); err == nil {
		if out, err := c.run("pg_ctl", "stop", "-D", c.dataDir, "-m", "immediate", "-w"); err != nil {
			errs = append(errs, fmt.Errorf("pg_ctl stop: %v\n%s--- tail of %s ---\n%s", err, out, c.logFile, c.logTail()))
		}
	}
	for _, dir := range []string{c.tmpDir, c.sockDir} {
		if dir == "" {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
		}
	}
	if c.lifeline != nil {
		c.lifeline.Close() // the watchdog wakes up, finds nothing to do and exits
		c.watchdog.Wait()
		c.lifeline = nil
	}
	return errors.Join(errs...)
}

func (c *cluster) logTail() string {
	b, err := os.ReadFile(c.logFile)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	if len(b) > logTailBytes {
		b = b[len(b)-logTailBytes:]
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}

func (c *cluster) hint() string {
	if c.cred == nil {
		return ""
	}
	return fmt.Sprintf("(running as root: the server runs as user postgres, which must be able to reach %s)", c.tmpDir)
}

// findBinDir finds the directory with initdb, pg_ctl and postgres.
func findBinDir() (string, error) {
	var tried []string
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dir := strings.TrimSpace(string(out))
		if hasTools(dir) {
			return dir, nil
		}
		tried = append(tried, fmt.Sprintf("pg_config --bindir says %s, which lacks initdb/pg_ctl/postgres", dir))
	} else {
		tried = append(tried, fmt.Sprintf("pg_config --bindir: %v", err))
	}

	const pattern = "/usr/lib/postgresql/*/bin"
	dirs, _ := filepath.Glob(pattern)
	for _, dir := range newestFirst(dirs) {
		if hasTools(dir) {
			return dir, nil
		}
	}
	tried = append(tried, "nothing usable in "+pattern)

	if p, err := exec.LookPath("initdb"); err == nil && hasTools(filepath.Dir(p)) {
		return filepath.Dir(p), nil
	}
	tried = append(tried, "no initdb on $PATH")
	return "", &noPostgresError{strings.Join(tried, "; ")}
}

func hasTools(dir string) bool {
	for _, prog := range []string{"initdb", "pg_ctl", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, prog))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return false
		}
	}
	return true
}

// newestFirst sorts /usr/lib/postgresql/VERSION/bin directories by
// descending VERSION, numerically, and returns dirs.
func newestFirst(dirs []string) []string {
	slices.SortFunc(dirs, func(a, b string) int { return slices.Compare(versionOf(b), versionOf(a)) })
	return dirs
}

// versionOf returns the numeric parts of the version in /usr/lib/postgresql/VERSION/bin.
func versionOf(binDir string) []int {
	var v []int
	for _, part := range strings.Split(filepath.Base(filepath.Dir(binDir)), ".") {
		n, err := strconv.Atoi(part)
		if err != nil {
			n = -1
		}
		v = append(v, n)
	}
	return v
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func chownR(root string, uid, gid int) error {
	return filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
}

// cleanEnv is the environment without PG* variables, which could point
// initdb or pg_ctl elsewhere.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	return env
}

// shellQuote quotes s for /bin/sh, through which pg_ctl passes -o.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
