package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/rulesdb"
)

func TestSandboxTools(t *testing.T) {
	t.Parallel()
	box, err := newSandbox()
	if err != nil {
		t.Fatal(err)
	}
	dir := box.dir
	defer func() {
		if err := box.Close(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("sandbox %s not removed", dir)
		}
	}()
	// A file outside the sandbox, next to it, that no tool may reach.
	outside := filepath.Join(filepath.Dir(dir), filepath.Base(dir)+"-outside.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(outside)
	if err := os.Symlink(outside, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	byName := map[string]func(string) string{}
	for _, tool := range box.Tools() {
		byName[tool.Name()] = func(in string) string {
			out, err := tool.Call(context.Background(), in)
			if err != nil {
				t.Fatalf("%s returned a Go error: %v", tool.Name(), err)
			}
			return out
		}
	}
	cases := []struct {
		tool, input, want string
	}{
		{"read_file", `{"path":"notes.md"}`, "recieve"},
		{"read_file", "notes.md", "recieve"},
		{"read_file", `{"path":"../` + filepath.Base(outside) + `"}`, "error:"},
		{"read_file", `{"path":"` + outside + `"}`, "error:"},
		{"read_file", `{"path":"link.txt"}`, "error:"},
		{"read_file", `{"path":`, "not valid JSON"},
		{"write_diff", `{"path":"notes.md","old":"teh","new":"the"}`, `replaced "teh" with "the"`},
		{"write_diff", `{"path":"notes.md","old":"teh","new":"the"}`, "not found"},
		{"read_file", `{"path":"notes.md"}`, "Call the plumber"},
		{"write_file", `{"path":"new.txt","content":"hello"}`, "wrote 5 bytes to new.txt"},
		{"write_file", `{"path":"new.txt"}`, "error:"},
		{"write_file", `{"path":"../escape.txt","content":"x"}`, "wrote 1 bytes to escape.txt"},
		{"shell", `{"cmd":"cat new.txt"}`, "hello"},
		{"shell", `{"cmd":"ls -la"}`, "new.txt\nnotes.md\ntodo.txt"},
		{"shell", "pwd", dir},
		{"shell", `{"cmd":"du -sh ."}`, "\t."},
		{"shell", `{"cmd":"rm -rf /"}`, "command not found"},
		{"shell", `{"cmd":"cat notes.md; rm notes.md"}`, "not available"},
		{"shell", `{"cmd":"cat ../../../etc/passwd"}`, "cat: etc/passwd"},
		{"telegram_send_photo", `{"photo":"https://example.org/cat.jpg"}`, "photo sent"},
		{"telegram_react", `{"emoji":"👍","message_id":7}`, "reacted 👍 to message #7"},
		{"telegram_react", `{"emoji":"👍"}`, "error:"},
	}
	for _, c := range cases {
		if got := byName[c.tool](c.input); !strings.Contains(got, c.want) {
			t.Errorf("%s %s = %q, want it to contain %q", c.tool, c.input, got, c.want)
		}
	}
	if data, _ := os.ReadFile(outside); string(data) != "secret" {
		t.Errorf("the file outside the sandbox changed: %q", data)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape.txt")); err == nil {
		t.Errorf("write_file escaped the sandbox")
	}
	if got := box.Outbox(); len(got) != 2 {
		t.Errorf("outbox %q", got)
	}
}

func TestHuman(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0B", 1023: "1023B", 1024: "1.0K", 15 * 1024: "15K", 3 << 20: "3.0M"} {
		if got := human(n); got != want {
			t.Errorf("human(%d) = %q, want %q", n, got, want)
		}
	}
}

// FuzzCheckDSN: the demo accepts exactly the DSNs rulesdb does, and a refusal never
// quotes the DSN, which may hold a password.
func FuzzCheckDSN(f *testing.F) {
	for _, s := range []string{"", "postgres://u:pw@h/db", "sqlite:x.db", "file:x.db?a=b", "mysql://u:pw@h/db", "postgres://u:pw@h:port/db", "sqlite:", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		err := checkDSN(dsn, "x.db")
		if _, derr := rulesdb.Describe(dsn, "x.db"); (err == nil) != (derr == nil) {
			t.Errorf("checkDSN says %v, rulesdb.Describe says %v", err, derr)
		}
		if err != nil && len(dsn) > 12 && strings.Contains(err.Error(), dsn) {
			t.Errorf("the error quotes the DSN: %v", err)
		}
	})
}
