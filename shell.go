package streamrules

import (
	"context"
	"log/slog"
	"regexp/syntax"
	"slices"
	"strings"
	"sync/atomic"
)

// ShellReader reads a shell script into the simple commands it would run, one string per
// command (the program's base name and its words after quote removal), for rules with
// Rule.Shell. An error means the script could not be read completely: a gate (a shell
// rule in mode interrupt) then refuses the call, a reminder judges the raw value, and the
// engine logs one debug line. A command whose program word is an expansion the reader
// could not resolve is returned with that word as written (it holds $ or a backquote). It must be safe for concurrent use and cost
// about what a regular expression does per byte (see the cost bound Validate applies).
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
// err is the reader's: a gate refuses what it could not read (shellVerdict).
func (c *compiledRule) shellValues(args *callArgs, v string) ([]string, error) {
	for _, r := range args.shellRead {
		if r.value == v {
			return r.cmds, r.err
		}
	}
	cmds, err := c.shell(v)
	if err != nil {
		if c.log != nil {
			msg := "stream rule: shell value not readable, matched raw"
			if c.failsClosed() {
				msg = "stream rule: shell value not readable, refused"
			}
			c.log.Log(context.Background(), slog.LevelDebug, msg, "rule", c.Name, "err", err)
		}
		cmds = []string{v}
	}
	args.shellRead = append(args.shellRead, shellReading{value: v, cmds: cmds, err: err})
	return cmds, err
}

// shellReading is one value read as a shell script, kept for the other shell rules of the call.
type shellReading struct {
	value string
	cmds  []string
	err   error
}

// UnreadableLead opens the block of a gate that fired because the call's command could
// not be read as a shell would read it (see failsClosed).
const UnreadableLead = "The gate could not read this command as a shell would, so it counts as a match. "

// failsClosed reports whether the rule refuses what its reader cannot read: a shell
// rule in mode interrupt (a gate). Its promise is that a matching command never runs; a
// command it cannot read might be one. A reminder judges the raw text instead.
func (c *compiledRule) failsClosed() bool { return c.shell != nil && c.Mode == ModeInterrupt }

// shellVerdict judges a shell gate's arguments: fires, and unreadable when it fires
// because something could not be read. That is: a value the reader refused (a parse
// error, a passed bound, a program known only at run time that could carry its
// arguments), or a command whose program word is an expansion ("$CMD" -rf x) that the
// rule would stop were the program one the rule names (shellPrograms).
func (c *compiledRule) shellVerdict(group *target, args *callArgs) (fires, unreadable bool) {
	var buf [16]int
	judge := func(cmd string) bool {
		t := target{text: cmd, matched: c.own.Match(cmd, buf[:0]), facts: group.facts}
		return c.fires(&t)
	}
	for _, v := range c.shellInputs(args) {
		cmds, err := c.shellValues(args, v)
		if err != nil {
			return true, true
		}
		for _, cmd := range cmds {
			if judge(cmd) {
				return true, false
			}
			prog, rest, _ := strings.Cut(cmd, " ")
			if !strings.ContainsAny(prog, "$`") {
				continue
			}
			progs := c.progs
			if len(progs) == 0 {
				return true, true // no program the rule names: any could be one it stops
			}
			for _, p := range progs {
				if judge(strings.TrimSpace(p + " " + rest)) {
					return true, true
				}
			}
		}
	}
	return false, false
}

// shellInputs are the values a shell rule reads: its field's values, keys matched as
// encoding/json matches them (a Go tool decoding {"CMD": …} into a Cmd field runs it;
// with duplicate keys, every one is read). Arguments that are not a JSON object are
// read whole, as the command line a tool taking a bare line runs; a JSON string also
// decoded, as a tool unquoting it would run it.
func (c *compiledRule) shellInputs(args *callArgs) []string {
	if c.path == nil {
		return []string{args.text}
	}
	if !args.valid() {
		return []string{args.text}
	}
	top := trimJSONSpace(args.text)
	if top != "" && top[0] == '{' {
		return args.valuesOf(c.path, true)
	}
	out := []string{args.text}
	if top != "" && top[0] == '"' {
		if s := unquoteJSON(top); s != args.text {
			out = append(out, s)
		}
	}
	return append(out, args.valuesOf(c.path, true)...)
}

// shellPrograms are the program names a shell rule's regexes start with (rm in
// `^rm\s`, git in `git\s.*push`): what a command word known only at run time is tried
// as. Computed when the rule is compiled (compiledRule.progs).
func shellPrograms(r *Rule) []string {
	var progs []string
	var pats []string
	var walk func(p *Predicate)
	walk = func(p *Predicate) {
		if p == nil {
			return
		}
		pats = append(pats, p.ContainsRegex, p.StartsWithRegex)
		for i := range p.AllOf {
			walk(&p.AllOf[i])
		}
		for i := range p.AnyOf {
			walk(&p.AnyOf[i])
		}
		walk(p.Not)
	}
	walk(r.Predicate)
	pats = append(pats, r.Condition)
	seen := map[string]bool{}
	for _, pat := range pats {
		for _, name := range leadingLiterals(pat) {
			if !seen[name] {
				seen[name] = true
				progs = append(progs, name)
			}
		}
	}
	slices.Sort(progs)
	return progs
}

// leadingLiterals returns the program-like literals a regex starts with: the names
// (letters, digits, . _ + -) its alternatives begin with, past anchors and groups.
func leadingLiterals(pattern string) []string {
	if pattern == "" {
		return nil
	}
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	var out []string
	var lead func(re *syntax.Regexp)
	lead = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpLiteral:
			n := 0
			for n < len(re.Rune) && isNameRune(re.Rune[n]) {
				n++
			}
			if n > 0 {
				out = append(out, string(re.Rune[:n]))
			}
		case syntax.OpCapture:
			lead(re.Sub[0])
		case syntax.OpAlternate:
			for _, s := range re.Sub {
				lead(s)
			}
		case syntax.OpConcat:
			for _, s := range re.Sub {
				switch s.Op {
				case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpWordBoundary:
					continue
				}
				lead(s)
				return
			}
		}
	}
	lead(re)
	return out
}

func isNameRune(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '.' || r == '_' || r == '+' || r == '-'
}
