package streamrules_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a goroutine the engine started (a reload backstop, a held
// stream's release, a claim) outlives the tests that passed.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
