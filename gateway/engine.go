package gateway

import "github.com/streamrules/streamrules"

// The engine calls whose names are in flux (Splice and SpliceOptions, TextArmed and
// GateArmed), in one place.

// splice is the upstream copy of a tool result with its reminders on top, as the engine
// lays it (streamrules.Splice with the engine's options).
func (g *Gateway) splice(output string, reminders []streamrules.Reminder) string {
	return streamrules.Splice(output, reminders, g.eng.SpliceOptions())
}

// mustHold reports whether a rule could discard or repair this tour's answer (a text rule
// or a gate is armed): its text then waits for the release, as the middleware's held
// speech does. Tool calls are held whatever it says.
func mustHold(m *streamrules.Move) bool {
	return m.TextArmed() || m.GateArmed()
}
