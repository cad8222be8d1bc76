// Package testlog is a goroutine-safe log sink for tests: give it to a slog handler and
// read back what was logged.
//
//	log, buf := testlog.New()
//	eng, _ := streamrules.New(ctx, store, &streamrules.Config{Logger: log})
//	…
//	lines := buf.Lines("stream rule fired", "rule=local_shell_for_his_machine")
package testlog
