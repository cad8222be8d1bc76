//go:build race

package streamrules

const raceEnabled = true
