package streamrules

import (
	"fmt"
	"slices"
)

// knownEnvironments is the list an engine on store knows: the store's names
// (EnvironmentLister), then host's (Config.Environments), each once. A store's name that
// is not a valid name, or more than maxEnvironments names in all, is an error.
func knownEnvironments(store Store, host []string) ([]string, error) {
	var out []string
	if l, ok := store.(EnvironmentLister); ok {
		for _, name := range l.Environments() {
			if !ValidName(name) {
				return nil, fmt.Errorf("streamrules: store environment %q must match [a-z][a-z0-9_]*", name)
			}
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	for _, name := range host {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if len(out) > maxEnvironments {
		return nil, fmt.Errorf("streamrules: Environments: %d environments with the store's, at most %d", len(out), maxEnvironments)
	}
	return out, nil
}

// The environment of a move can change between its tours: a picture arrives through a
// tool in the middle of a move, a master joins the chat. A change is staged, and the
// next tour takes it up when it begins (BeginTour): a tour is judged in the environment
// it started in, so a change made while a model call runs never half-applies to it
// (armed at the start under one environment, judged at the end under another).

// SetEnvironment replaces the move's environment with names, from the next tour on.
// Unknown names are logged (once per name) and ignored, as in BeginMove.
// Safe for concurrent use, e.g. from a tool running in the middle of the move.
func (m *Move) SetEnvironment(names ...string) {
	bits := m.eng.envBits(m.chatID, names)
	m.mu.Lock()
	m.nextEnv = bits
	m.mu.Unlock()
}

// AddEnvironment adds names to the move's environment, from the next tour on: an image
// tool calls AddEnvironment("picture") once the picture is in the model's context.
// Unknown names are logged and ignored. Safe for concurrent use.
func (m *Move) AddEnvironment(names ...string) {
	bits := m.eng.envBits(m.chatID, names)
	m.mu.Lock()
	m.nextEnv |= bits
	m.mu.Unlock()
}

// RemoveEnvironment removes names from the move's environment, from the next tour on.
// Unknown names are logged and ignored. Safe for concurrent use.
func (m *Move) RemoveEnvironment(names ...string) {
	bits := m.eng.envBits(m.chatID, names)
	m.mu.Lock()
	m.nextEnv &^= bits
	m.mu.Unlock()
}

// BeginTour starts a tour (one model call): the environment set since the last tour
// takes effect, and arming (Armed), `when` and the verdicts (CheckAnswer, tool
// reminders) follow it until the next BeginTour. The middleware's model wrapper calls
// it before every model call it judges; a host running its own agent loop calls it
// before each model call. A move whose environment never changes needs no call.
func (m *Move) BeginTour() {
	m.mu.Lock()
	m.env = m.nextEnv
	m.spent = 0 // a new tour, a new reminder budget (delivery.go)
	m.mu.Unlock()
}

// envBits maps environment names to bits; unknown names are logged once each and ignored.
func (e *Engine) envBits(chatID string, names []string) uint64 {
	var bits uint64
	for _, name := range names {
		i := slices.Index(e.environments, name)
		if i < 0 {
			if _, seen := e.unknownEnv.LoadOrStore(name, true); !seen { // once per name, not per move
				e.log.Warn("stream rules: unknown environment ignored", "env", name, "chat", chatID)
			}
			continue
		}
		bits |= 1 << uint(i)
	}
	return bits
}
