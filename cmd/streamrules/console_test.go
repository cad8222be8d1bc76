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
