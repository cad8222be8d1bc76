package streamrules

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// EnvironmentError names environment names an engine does not know, and the ones it
// does. errors.Is(err, ErrUnknownEnvironment) holds for it.
type EnvironmentError struct {
	Unknown []string // in the order given, each once
	Known   []string // the engine's names: its store's, then Config.Environments
}

func (e *EnvironmentError) Error() string {
	quoted := make([]string, len(e.Unknown))
	for i, n := range e.Unknown {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	noun := "environment"
	if len(e.Unknown) > 1 {
		noun = "environments"
	}
	return fmt.Sprintf("streamrules: unknown %s %s (known: %s)", noun, strings.Join(quoted, ", "), strings.Join(e.Known, ", "))
}

// Is makes errors.Is(err, ErrUnknownEnvironment) hold.
func (e *EnvironmentError) Is(target error) bool { return target == ErrUnknownEnvironment }

// CheckEnvironments returns nil when the engine knows every name (Engine.Environments),
// else an *EnvironmentError naming the unknown ones and the known ones (here, an engine
// on a store seeded with seeds.MustDefault()):
//
//	streamrules: unknown environment "client-ops" (known: telegram, client_ops, master, picture)
//
// It scans the engine's few names once per name and allocates only on an error.
func (e *Engine) CheckEnvironments(names ...string) error {
	var unknown []string
	for _, n := range names {
		if !slices.Contains(e.environments, n) && !slices.Contains(unknown, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	return &EnvironmentError{Unknown: unknown, Known: slices.Clone(e.environments)}
}

// BeginMoveChecked is BeginMove for a host that wants a typo in an environment name to
// fail the move instead of being logged and ignored: with an unknown name it returns
// CheckEnvironments' error, ctx as given and a nil move, before the chat's state is read.
// The middleware's Guard.Run and Guard.Call check the same way.
func (e *Engine) BeginMoveChecked(ctx context.Context, chatID string, env ...string) (context.Context, *Move, error) {
	if err := e.CheckEnvironments(env...); err != nil {
		return ctx, nil, err
	}
	ctx, m := e.BeginMove(ctx, chatID, env...)
	return ctx, m, nil
}

// Vars returns a copy of the variables set on the move (SetVar), nil when none was set:
// what a transcript records, so a backtest's templated fixes repair as they did live.
func (m *Move) Vars() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.vars) == 0 {
		return nil
	}
	return maps.Clone(m.vars)
}
