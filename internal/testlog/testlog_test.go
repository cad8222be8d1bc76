package testlog_test

import (
	"sync"
	"testing"

	"github.com/streamrules/streamrules/internal/testlog"
)

func TestBufferLines(t *testing.T) {
	log, buf := testlog.New()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); log.Info("fired", "rule", "a") }()
	}
	wg.Wait()
	log.Warn("skipped", "rule", "b")
	if n := len(buf.Lines("fired", "rule=a")); n != 8 {
		t.Errorf("%d lines, want 8", n)
	}
	if got := buf.Lines("level=WARN"); len(got) != 1 {
		t.Errorf("warn lines %q", got)
	}
}
