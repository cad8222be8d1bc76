//go:build !race

package multimatch

const raceEnabled = false
