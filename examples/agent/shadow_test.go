package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
)

// TestOfflineShadow: STREAMRULES_SHADOW=true puts every seeded rule in shadow. Nothing is
// discarded or reminded; each miss is one would-fire, and the closing table shows them.
func TestOfflineShadow(t *testing.T) {
	t.Parallel()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "demo.db")
	cfg, err := parseConfig(environ("STREAMRULES_DSN", dsn, "STREAMRULES_SHADOW", "true"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := runOffline(context.Background(), cfg, "demo", quietLog(), &out); err != nil {
		t.Fatalf("offline session: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, never := range []string{"discarded answer, never shown", "<system-reminder"} {
		if strings.Contains(text, never) {
			t.Errorf("shadow mode still acted (%q):\n%s", never, text)
		}
	}
	db := readDB(t, dsn)
	byRule := map[string]int{}
	for _, f := range db.firings {
		if f.Outcome != streamrules.OutcomeShadow {
			t.Errorf("firing %+v in shadow mode", f)
		}
		byRule[f.Rule]++
	}
	_, table, _ := strings.Cut(text, "stream rule stats")
	for _, name := range seededNames(t) {
		if byRule[name] != 1 {
			t.Errorf("%s: %d would-fires, want 1 (one miss each)", name, byRule[name])
		}
		if !strings.Contains(text, "shadow: "+name+" would have fired here") {
			t.Errorf("no would-fire note for %s", name)
		}
		// fired 0, then the outcome columns, then would-fire 1.
		if !regexp.MustCompile(`(?m)^\s+` + name + `\s+0\s.*\s1\s+\d{4}-\d\d-\d\d `).MatchString(table) {
			t.Errorf("stats table lacks %s with one would-fire:\n%s", name, table)
		}
	}
}
