package streamrules

import (
	"testing"

	"github.com/streamrules/streamrules/internal/streamrulestest"
)

// TestTestSupportCopies: the copies tests outside the package assert against are the
// values the package runs with.
func TestTestSupportCopies(t *testing.T) {
	if streamrulestest.EarlyBatchBytes != earlyBatchBytes || streamrulestest.ReleaseBatchBytes != releaseBatchBytes ||
		streamrulestest.InterruptFooter != interruptFooter || streamrulestest.RefusalLead != refusalLead {
		t.Fatal("internal/streamrulestest differs from the root package: copy the new values there")
	}
}
