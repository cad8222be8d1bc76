package gateway

import "github.com/streamrules/streamrules"

// splice is the upstream copy of a tool result with its reminders on top, as the engine
// lays it.
func (g *Gateway) splice(output string, reminders []streamrules.Reminder) string {
	return g.eng.Splice(output, reminders)
}

// mustHold reports whether a rule could discard or repair this tour's answer (a text rule
// or a gate is armed): its text then waits for the release, as the middleware's held
// speech does. Tool calls are held whatever it says.
func mustHold(m *streamrules.Move) bool {
	return m.Armed()
}
