package main

import (
	"strings"
	"testing"

	"github.com/streamrules/streamrules/rulesdb"
)

// TestBadDSNExit2: a DSN that is malformed is bad usage, exit 2 with one line naming
// where it came from, whatever command opens the store; before, these exited 1 as if
// the database were down, and "sslmode=disable%zz" connected without its sslmode.
func TestBadDSNExit2(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, dsn, want string }{
		{"port not a number", "postgres://bob:hunter2@db:notaport/rules", `invalid port ":notaport"`},
		{"bad sslmode", "postgres://bob:hunter2@db/rules?sslmode=bogus", `"sslmode": "bogus" is not supported`},
		{"unclosed bracket", "postgres://bob:hunter2@[::1/rules", "missing ']'"},
		{"undecodable query", "postgres://bob:hunter2@db/rules?sslmode=disable%zz", `invalid URL escape "%zz"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, args := range [][]string{{"rules", "list", "--dsn", tt.dsn}, {"stats", "--dsn", tt.dsn}} {
				r := cli(t, nil, "", args...)
				if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "--dsn: ") || !strings.Contains(r.stderr, tt.want) || strings.Count(r.stderr, "\n") != 1 {
					t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", args, r.code, r.stderr, tt.want)
				}
				if strings.Contains(r.stderr, "hunter2") {
					t.Errorf("the password is printed: %s", r.stderr)
				}
			}
			r := cli(t, map[string]string{rulesdb.EnvDSN: tt.dsn}, "", "rules", "list")
			if r.code != 2 || !strings.Contains(r.stderr, rulesdb.EnvDSN+": ") {
				t.Errorf("from the environment: exit %d, stderr %q", r.code, r.stderr)
			}
		})
	}
}

// TestInputsStrict: a BOM is skipped; a padded name is refused naming "name", from a
// file and from flags; a transcript's duplicate key and invalid UTF-8 are exit 2 naming
// the file and line, as a rule file's are.
func TestInputsStrict(t *testing.T) {
	t.Parallel()
	env := sqliteEnv(t)
	bom := writeTemp(t, "bom.yaml", "\xEF\xBB\xBFversion: 1\nrules:\n  - name: a\n    scope: text\n    text: t\n")
	if r := cli(t, env, "", "validate", bom); r.code != 0 || !strings.Contains(r.stdout, "ok, 1 rule") {
		t.Errorf("validate a file with a BOM: %+v", r)
	}
	padded := writeTemp(t, "padded.yaml", "version: 1\nrules:\n  - name: \"ab\\n\"\n    scope: text\n    text: t\n")
	if r := cli(t, env, "", "validate", padded); r.code != 2 || !strings.Contains(r.stderr, padded+`:3: rule #1 "ab\n": streamrules: invalid name:`) {
		t.Errorf("validate a padded name: %+v", r)
	}
	if r := cli(t, env, "", "rules", "create", "--name", "ab ", "--scope", "text", "--text", "t"); r.code != 2 || !strings.Contains(r.stderr, "invalid name") {
		t.Errorf("rules create --name 'ab ': %+v", r)
	}
	for name, line := range map[string]string{
		"dup.jsonl":  `{"chat":"c","answer":"a","answer":"b"}`,
		"utf8.jsonl": "{\"chat\":\"c\",\"answer\":\"a\xffb\"}",
	} {
		path := writeTemp(t, name, `{"chat":"c","answer":"ok"}`+"\n"+line+"\n")
		r := cli(t, env, "", "replay", "--rules", "../../seeds/seeds.json", path)
		if r.code != 2 || !strings.Contains(r.stderr, path+":2: ") {
			t.Errorf("replay %s: exit %d, stderr %q; want exit 2 naming %s:2", name, r.code, r.stderr, path)
		}
	}
}
