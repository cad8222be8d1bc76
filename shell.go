package streamrules

import (
	"context"
	"log/slog"
	"sync/atomic"
)

// ShellReader reads a shell script into the simple commands it would run, one string per
// command (the program's base name and its words after quote removal), for rules with
// Rule.Shell. An error means the script could not be read: the rule then judges the raw
// value, and the engine logs one debug line. It must be safe for concurrent use and cost
// about what a regular expression does per byte (see the cost bound in cost.go).
//
// The root package stays free of a shell parser: the shellcmd package holds one and
// registers it (RegisterShellReader) when imported.
type ShellReader func(script string) ([]string, error)

// registeredShell is the reader engines use when Config.ShellReader is nil.
var registeredShell atomic.Pointer[ShellReader]

// RegisterShellReader sets the reader engines and judges use for `shell: true` rules
// when Config.ShellReader is nil. The shellcmd package calls it from its init, and the
// middleware, rulesdb, replay, rulefile and the CLI import shellcmd, so a host that uses
// any of them needs nothing more. Why not a silent default: a shell rule matched raw
// would look enforced and miss `rm -r -f`; without a reader it is skipped and named in
// the load summary instead.
func RegisterShellReader(r ShellReader) {
	if r == nil {
		registeredShell.Store(nil)
		return
	}
	registeredShell.Store(&r)
}

// shell returns the engine's shell reader, or nil when there is none.
func (e *Engine) shell() ShellReader {
	if e.shellReader != nil {
		return e.shellReader
	}
	return registeredReader()
}

func registeredReader() ShellReader {
	if p := registeredShell.Load(); p != nil {
		return *p
	}
	return nil
}

func errNoShellReader() error {
	return invalid("shell", "no shell reader: import github.com/streamrules/streamrules/shellcmd (the middleware, rulesdb and replay do) or set Config.ShellReader")
}

// shellValues returns what a shell rule judges in one value: the commands the reader
// finds, or the value itself when it cannot read it (logged once per value at debug).
func (c *compiledRule) shellValues(args *callArgs, v string) []string {
	for _, r := range args.shellRead {
		if r.value == v {
			return r.cmds
		}
	}
	cmds, err := c.shell(v)
	if err != nil {
		if c.log != nil {
			c.log.Log(context.Background(), slog.LevelDebug, "stream rule: shell value not readable, matched raw", "rule", c.Name, "err", err)
		}
		cmds = []string{v}
	}
	args.shellRead = append(args.shellRead, shellReading{value: v, cmds: cmds})
	return cmds
}

// shellReading is one value read as a shell script, kept for the other shell rules of the call.
type shellReading struct {
	value string
	cmds  []string
}
