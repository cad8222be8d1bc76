// Package shellcmd reads a shell command line as a shell would, for stream rules with
// `shell: true`: each simple command the script would run comes out as one line of its
// words, so one rule condition catches `rm -rf x` however it is written.
//
//	cmds, err := shellcmd.Commands(`sudo bash -c '\rm -fr /srv' && echo "rm -rf x"`)
//	// cmds: ["rm -f -r /srv", "echo rm -rf x"]
//
// Importing the package registers Commands with the engine
// (streamrules.RegisterShellReader); the middleware, rulesdb, replay, rulefile, ruletools
// and the CLI import it, so a host using any of them has shell rules read. An engine with
// no reader skips shell rules and names them in its load summary: a shell rule is never
// silently matched raw.
//
// # What a command looks like
//
// The script is parsed with mvdan.cc/sh/v3/syntax (bash dialect). Every simple command
// is rendered as its words, one space apart:
//
//   - quotes are removed and escapes undone: "rm", 'rm', r"m", \rm and $'\x72m' are rm;
//   - the program is its base name: /bin/rm and ./rm are rm;
//   - combined short flags are split up to a "--": -rf is -r -f (find's words are kept);
//   - assignments before the program are dropped: FOO=1 rm;
//   - brace expansion is done ({rm,-rf,x} is rm -rf x), up to 64 words per expansion
//     and 8 plus one per 16 bytes of the script in all: past that, braces stay as written;
//   - wrappers are unwrapped to the command they run: sudo and doas (with their
//     options), env (options, assignments, and -S's string read as a script), nice,
//     nohup, time, command (not command -v), exec, xargs, timeout DURATION, stdbuf,
//     busybox;
//   - scripts run by a script are read too: bash/sh/zsh/dash/ksh -c, eval with literal
//     words, $(…), backquotes, <(…), subshells, { …; }, pipelines, && || ; lists, if,
//     case, for, while and until bodies, function bodies, find -exec … ;
//   - data stays data: heredoc bodies, comments, and the arguments of other programs
//     (echo "rm -rf x" is the command echo rm -rf x, whose program is echo).
//
// # Out of reach
//
// What only the running shell knows is rendered as written, not expanded: $VAR and
// ${…} ($DIR stays $DIR), $(…) used as a word (its commands are read, its output is not
// known), globs (/bin/r? is not rm), aliases, and commands built at run time: eval
// "$VAR", bash -c "$CMD", a script file run by name (bash clean.sh), a program reached
// through a variable ($RM -rf x). A rule that must stop those needs a condition on them
// (for example, any eval of a variable).
//
// # Bounds and cost
//
// A script longer than [MaxScriptBytes], nested deeper than [MaxDepth] or yielding more
// than [MaxCommands] commands is not read: [Commands] returns an error and the engine
// matches the raw value instead, with one debug log line (so is any script the parser
// rejects). The rendering is bounded by four times the script plus 4 KiB, the
// allocations by one per byte plus 256 (FuzzCommands). A line of plain words (no quote,
// expansion or operator) is split without the parser, in about a microsecond; a 200-byte
// line with quotes, operators and bash -c took 16–18 µs of CPU on the project's loaded
// 2-core machine (BenchmarkCommands), about the per-byte cost bound the engine sets for a
// rule's regular expressions on tool arguments.
package shellcmd
