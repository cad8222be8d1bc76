package metrics_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamrules/streamrules/metrics"
)

// Every metric the collector describes is listed in the package doc and in
// docs/operations.md (there, a family may share a row: `_held_bytes_total`).
func TestDocsListEveryMetric(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	ops, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan *prometheus.Desc, 64)
	metrics.NewCollector(nil).Describe(ch)
	close(ch)
	name := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	n := 0
	for d := range ch {
		m := name.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %s", d)
		}
		n++
		if !regexp.MustCompile(`(?m)^//\s+` + m[1] + `\b`).Match(doc) {
			t.Errorf("the package doc does not list %s", m[1])
		}
		sub, rest, _ := strings.Cut(strings.TrimPrefix(m[1], "streamrules_"), "_")
		if !strings.Contains(string(ops), "`"+m[1]+"`") && !strings.Contains(string(ops), "`_"+rest+"`") {
			t.Errorf("docs/operations.md does not list %s (%s)", m[1], sub)
		}
	}
	if n < 10 {
		t.Fatalf("only %d metrics described", n)
	}
}
