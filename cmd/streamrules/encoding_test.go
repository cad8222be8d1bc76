package main

import (
	"strings"
	"testing"

	"github.com/streamrules/streamrules/internal/pgtest"
)

// TestImportRefusesNUL: a rule file whose hint, explanation or fix holds a NUL (written
// \0 in YAML, \u0000 in JSON) is refused by validate and by import with the rule and
// field named, exit 2, on SQLite and on PostgreSQL, and nothing is written: PostgreSQL
// would otherwise refuse it with a raw "invalid byte sequence" that names no field.
func TestImportRefusesNUL(t *testing.T) {
	t.Parallel()
	files := []struct{ name, data, field string }{
		{"hint.yaml", "version: 1\nrules:\n  - name: no_lorem\n    scope: text\n    condition: lorem\n    text: No placeholder text.\n    hint: \"a\\0b\"\n", "hint"},
		{"explanation.json", `{"version":1,"rules":[{"name":"no_lorem","scope":"text","condition":"lorem","text":"No placeholder text.","explanation":"a\u0000b"}]}`, "explanation"},
		{"fix.yaml", "version: 1\nrules:\n  - name: no_lorem\n    scope: text\n    condition: lorem\n    text: No placeholder text.\n    fix: {append_if_missing: \"a\\x00b\"}\n", "fix.append_if_missing"},
		{"tree.json", `{"version":1,"rules":[{"name":"no_lorem","scope":"text","predicate":{"any_of":[{"contains_regex":"lorem"},{"contains_regex":"ipsum\u0000"}]},"text":"No placeholder text."}]}`, "predicate.any_of[1].contains_regex"},
	}
	backends := map[string]func(t *testing.T) map[string]string{
		"sqlite":   sqliteEnv,
		"postgres": func(t *testing.T) map[string]string { return map[string]string{"STREAMRULES_DSN": pgtest.DSN(t)} },
	}
	for name, env := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := env(t)
			must(t, cli(t, env, "", "seed"))
			before := listJSON(t, env)
			for _, f := range files {
				path := writeTemp(t, f.name, f.data)
				for _, args := range [][]string{{"validate", path}, {"import", path}} {
					r := cli(t, env, "", args...)
					if r.code != 2 || !strings.Contains(r.stderr, `"no_lorem"`) || !strings.Contains(r.stderr, "invalid "+f.field+":") || strings.Contains(r.stderr, "pq:") {
						t.Errorf("%s %s: exit %d, stderr %q; want 2, the rule and %s named", args[0], f.name, r.code, r.stderr, f.field)
					}
				}
			}
			if after := listJSON(t, env); len(after) != len(before) {
				t.Errorf("import wrote something: %d rules, were %d", len(after), len(before))
			}
		})
	}
}
