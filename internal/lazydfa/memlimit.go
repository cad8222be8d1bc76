package lazydfa

import (
	"sync/atomic"
)

// Memory. All DFAs of the process together keep at most the memory limit in states
// (estimated: a state's struct, its table and its key), besides each DFA's four base
// states, which are part of it like its program. A DFA that needs a state past
// the limit first drops its own states; if that is not enough, the run gives up and
// the caller asks regexp. A DFA's states are released when it is dropped.
var (
	memLimit atomic.Int64
	memHeld  atomic.Int64
)

// DefaultMemoryLimit is the memory limit until SetMemoryLimit changes it.
const DefaultMemoryLimit = 64 << 20

func init() { memLimit.Store(DefaultMemoryLimit) }

// SetMemoryLimit sets how many bytes all DFAs together may keep in states, and returns
// the previous limit.
func SetMemoryLimit(bytes int64) int64 { return memLimit.Swap(bytes) }

// MemoryHeld returns the bytes all live DFAs keep in states (estimated).
func MemoryHeld() int64 { return memHeld.Load() }

// stateOverhead is a state's memory besides its table and key: the struct, its slices'
// backing arrays and the map entry, roughly.
const stateOverhead = 160
