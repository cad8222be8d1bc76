package pgtest

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Bouncer starts Debian's pgbouncer in transaction pooling mode in front of the server
// dsn points at (a DSN from DSN or Cluster.DSN) and returns a DSN of the same database
// through it. It is stopped in t's Cleanup. Where pgbouncer is not installed the test is
// skipped with a loud message, and under CI=true it fails (.ci/run installs it).
func Bouncer(t testing.TB, dsn string) string {
	t.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/pgbouncer"); serr == nil {
			bin, err = "/usr/sbin/pgbouncer", nil
		}
	}
	if err != nil {
		if inCI() {
			t.Fatalf("pgtest: pgbouncer not found and %s is true (.ci/run installs it)", envCI)
		}
		t.Skipf("pgtest: pgbouncer not found: SKIPPING a pgbouncer test; install it: apt-get install -y pgbouncer")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
max_client_conn = 200
default_pool_size = 20
ignore_startup_parameters = extra_float_digits
logfile = %s
`, u.Hostname(), u.Port(), port, filepath.Join(dir, "users.txt"), filepath.Join(dir, "pgbouncer.log"))
	files := map[string]string{"pgbouncer.ini": ini, "users.txt": `"postgres" ""` + "\n", "pgbouncer.log": ""}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	cmd.Dir = dir
	cmd.Env = cleanEnv()
	if os.Geteuid() == 0 {
		// pgbouncer refuses to run as root.
		pu, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("pgtest: running as root without a postgres user: SKIPPING a pgbouncer test")
		}
		uid, _ := strconv.Atoi(pu.Uid)
		gid, _ := strconv.Atoi(pu.Gid)
		if err := chownR(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("pgtest: starting pgbouncer: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			t.Fatalf("pgtest: pgbouncer exited: %v\n%s", err, log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgtest: pgbouncer not listening on %s after 30 s", addr)
		}
		time.Sleep(20 * time.Millisecond) // a port coming up: no signal to wait on
	}
	u.Host = addr
	t.Logf("pgtest: pgbouncer (transaction mode) on %s in front of %s", addr, u.Hostname())
	return u.String()
}
