//go:build !race

package streamrules

// raceEnabled: the race detector instruments allocations, so allocation counts are
// checked only without it.
const raceEnabled = false
