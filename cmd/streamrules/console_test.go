package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/streamrules/streamrules/console"
)

// Without a password the console will not listen where other machines reach it.
func TestConsoleRefusesOpenAddress(t *testing.T) {
	for _, args := range [][]string{{"console", "--listen", ":8080"}, {"console", "--listen", "0.0.0.0:9"}} {
		r := cli(t, sqliteEnv(t), "", args...)
		if r.code != 2 || !strings.Contains(r.stderr, console.EnvPassword) {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	env := sqliteEnv(t)
	env[envConsoleListen] = ":8080"
	if r := cli(t, env, "", "console"); r.code != 2 {
		t.Errorf("$%s=:8080: exit %d", envConsoleListen, r.code)
	}
	// Keys none of which may claim master are no login either.
	env["STREAMRULES_KEYS"] = writeTemp(t, "keys", "bot sk-bot telegram\n")
	if r := cli(t, env, "", "console"); r.code != 2 || !strings.Contains(r.stderr, "no gateway key may claim master") {
		t.Errorf("$STREAMRULES_KEYS without a master key: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := cli(t, env, "", "console", "--keys", "/nonexistent/keys"); r.code != 2 || !strings.Contains(r.stderr, "console: --keys") {
		t.Errorf("a missing keys file: exit %d, stderr %q", r.code, r.stderr)
	}
}

// With --keys, the console alone takes a key that may claim master at its login.
func TestConsoleKeys(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := sqliteEnv(t)
	keys := writeTemp(t, "keys", "boss sk-boss master\nbot sk-bot telegram\n")
	pr, pw := io.Pipe()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"console", "--listen", "127.0.0.1:0", "--keys", keys}, func(k string) string { return env[k] }, strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	var addr string
	for lines.Scan() {
		if u, ok := strings.CutPrefix(lines.Text(), "console: serving http://"); ok {
			addr, _, _ = strings.Cut(u, "/")
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if addr == "" {
		t.Fatal("the console never said where it serves")
	}
	if resp, body := newBrowser(t, addr).login("sk-bot"); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "a non-master key cannot edit") {
		t.Errorf("the bot's key: %d", resp.StatusCode)
	}
	if resp, body := newBrowser(t, addr).login("sk-boss"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the master's key: %d\n%s", resp.StatusCode, body)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("exit %d", c)
	}
}

// The command serves the pages until its context ends, then exits 0.
func TestConsoleServes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := sqliteEnv(t)
	env[console.EnvPassword] = "pw"
	pr, pw := io.Pipe()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"console", "--listen", "127.0.0.1:0"}, func(k string) string { return env[k] }, strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	var url string
	for lines.Scan() {
		if u, ok := strings.CutPrefix(lines.Text(), "console: serving "); ok {
			url, _, _ = strings.Cut(u, " ")
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }() // the log goes on
	if url == "" {
		t.Fatal("the console never said where it serves")
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("GET %s: %d", url, resp.StatusCode)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("exit %d", c)
	}
}
