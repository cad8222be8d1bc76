package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/streamrules/streamrules/internal/openaitest"
	"github.com/streamrules/streamrules/internal/scripted"
)

// lineWatch is a stderr that reports the address serve prints once it listens.
type lineWatch struct {
	mu   sync.Mutex
	buf  strings.Builder
	addr chan string
	sent bool
}

var listeningRE = regexp.MustCompile(`listening on http://(\S+)`)

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := listeningRE.FindStringSubmatch(w.buf.String()); m != nil && !w.sent {
		w.sent = true
		w.addr <- m[1]
	}
	return len(p), nil
}

func (w *lineWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// startServe seeds a SQLite database and runs serve on it until the test ends.
func startServe(t *testing.T, environ map[string]string, args ...string) (addr string, stderr *lineWatch) {
	t.Helper()
	must(t, cli(t, environ, "", "seed"), "seed")
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &lineWatch{addr: make(chan string, 1)}
	code := make(chan int, 1)
	getenv := func(k string) string { return environ[k] }
	go func() {
		code <- run(ctx, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...), getenv, strings.NewReader(""), io.Discard, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		if c := <-code; c != 0 {
			t.Errorf("serve exited %d: %s", c, stderr)
		}
	})
	select {
	case addr = <-stderr.addr:
	case c := <-code:
		code <- c
		t.Fatalf("serve exited %d before listening: %s", c, stderr)
	}
	return addr, stderr
}

func post(t *testing.T, url, key, body string, hdr ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for _, kv := range hdr {
		k, v, _ := strings.Cut(kv, ":")
		req.Header.Set(k, strings.TrimSpace(v))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServe: serve runs the gateway on the database's seeds, with the upstream from its
// environment variable, and serves the stats and the metrics beside it.
func TestServe(t *testing.T) {
	t.Parallel()
	up := openaitest.New(t, scripted.Reply{Text: "👍"}, scripted.Reply{Text: "Glad to help. ↩ #1"})
	environ := sqliteEnv(t)
	environ["STREAMRULES_UPSTREAM"] = up.URL + "/v1"
	addr, stderr := startServe(t, environ)
	if !strings.Contains(stderr.String(), "no gateway keys: listening on loopback only") {
		t.Errorf("start message: %s", stderr)
	}
	status, body := post(t, "http://"+addr+"/v1/chat/completions", "sk-client", `{"model":"m","messages":[{"role":"user","content":"thanks"}]}`,
		"X-Streamrules-Chat: c1", "X-Streamrules-Env: telegram")
	if status != 200 || !strings.Contains(body, "Glad to help. ↩ #1") {
		t.Fatalf("%d %s", status, body)
	}
	reqs := up.Requests()
	if len(reqs) != 2 || reqs[0].Header.Get("Authorization") != "Bearer sk-client" {
		t.Fatalf("upstream: %d requests, auth %q", len(reqs), reqs[0].Header.Get("Authorization"))
	}
	for _, path := range []string{"/v1/stats", "/metrics"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(b) == 0 {
			t.Errorf("%s: %d %s", path, resp.StatusCode, b)
		}
	}
}

// TestServeKeys: with --keys, a request needs a gateway key, may claim only the key's
// environments, and goes upstream with --upstream-key.
func TestServeKeys(t *testing.T) {
	t.Parallel()
	up := openaitest.New(t, scripted.Reply{Text: "hello"})
	environ := sqliteEnv(t)
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte("# name key envs\nbot sk-gw-1 telegram\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	environ["STREAMRULES_UPSTREAM_KEY"] = "sk-upstream"
	addr, _ := startServe(t, environ, "--upstream", up.URL+"/v1", "--keys", keys)
	url := "http://" + addr + "/v1/chat/completions"
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	if s, b := post(t, url, "wrong", body); s != 401 {
		t.Errorf("unknown key: %d %s", s, b)
	}
	if s, b := post(t, url, "sk-gw-1", body, "X-Streamrules-Env: client_ops"); s != 403 || !strings.Contains(b, "client_ops") {
		t.Errorf("env beyond the key: %d %s", s, b)
	}
	if s, b := post(t, url, "sk-gw-1", body, "X-Streamrules-Env: telegram", "X-Streamrules-Vars: message_id=5"); s != 200 || !strings.Contains(b, "hello\\n\\n↩ #5") {
		t.Fatalf("%d %s", s, b)
	}
	if got := up.Requests()[0].Header.Get("Authorization"); got != "Bearer sk-upstream" {
		t.Fatalf("upstream Authorization %q", got)
	}
}

// TestServeRefusesOpenListen: without keys, a non-loopback address is refused at start.
func TestServeRefusesOpenListen(t *testing.T) {
	t.Parallel()
	r := cli(t, sqliteEnv(t), "", "serve", "--upstream", "http://127.0.0.1:1/v1", "--listen", "0.0.0.0:8080")
	if r.code != 2 || !strings.Contains(r.stderr, "not a loopback address") || !strings.Contains(r.stderr, "--keys") {
		t.Fatalf("%+v", r)
	}
	r = cli(t, sqliteEnv(t), "", "serve")
	if r.code != 2 || !strings.Contains(r.stderr, "--upstream") {
		t.Fatalf("%+v", r)
	}
}
