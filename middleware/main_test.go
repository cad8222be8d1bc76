package middleware_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a goroutine the middleware started (a held stream's
// release, a boundary's watchdog, a tool call's) outlives the tests that passed.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
