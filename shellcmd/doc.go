// Package shellcmd reads a shell command line as a shell would, for stream rules with
// `shell: true`: each simple command the script would run comes out as one line of its
// words, so one rule condition catches `rm -rf x` however it is written.
//
//	cmds, err := shellcmd.Commands(`sudo bash -c '\rm -fr /srv' && echo "rm -rf x"`)
//	// cmds: ["rm -f -r /srv", "echo rm\u00a0-rf\u00a0x"]
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
//   - a word's own whitespace is rendered as U+00A0, so a rendered command holds ASCII
//     whitespace only between words: a rule's \s-f\s is the flag -f, never the -f inside
//     a quoted operand ("wip -f flag" is wip\u00a0-f\u00a0flag);
//   - the program is its base name: /bin/rm and ./rm are rm;
//   - combined short flags are split up to a "--": -rf is -r -f (find's words are kept);
//   - assignments before the program are dropped: FOO=1 rm;
//   - brace expansion is done ({rm,-rf,x} is rm -rf x, touch f{1..100} its 100 words);
//   - wrappers are unwrapped to the command they run, each with its option grammar as
//     getopt_long reads it (an unambiguous prefix of a long option is that option;
//     an option the grammar does not know is read both ways): sudo, doas, env (-S's
//     string read as a script), nice, nohup, time, command (not -v), builtin, exec,
//     xargs, timeout, stdbuf, setsid, su and runuser (-c read as a script), chroot,
//     flock (-c too), ionice, chrt, taskset, unshare, watch (its words run by sh -c),
//     script -c, busybox, toybox;
//   - scripts run by a script are read too: -c of sh, bash, dash, zsh, ksh, mksh, fish
//     (options such as -o posix and --rcfile F skipped; $1…$9 and "$@" are the operands
//     after the script), eval, trap, a script a shell reads on its standard input (a
//     pipe from echo or printf, a here-doc, a here-string, sudo -s), source, . and bash
//     of <(echo …), ssh HOST CMD, docker/podman exec and run, kubectl exec -- CMD, git -c
//     alias.x='!…' and the -c settings git runs, a function's body at each call (with its
//     arguments), $(…), backquotes, <(…), subshells, { …; }, pipelines, && || ; lists,
//     if, case, for, while and until bodies, find -exec … ;
//   - a git alias given with -c is expanded: git -c alias.p='push --force' p is
//     git … push --force;
//   - data stays data: heredoc bodies given to other programs, comments, and the
//     arguments of other programs (echo "rm -rf x" is the command echo rm\u00a0-rf\u00a0x,
//     whose program is echo).
//
// # What cannot be read
//
// Commands returns an error when it cannot read the script completely, and a gate (a
// shell rule in mode interrupt) then refuses the call: a parse error (bash runs the lines
// before it), a bound passed ([MaxScriptBytes], [MaxDepth], [MaxCommands], the work and
// rendering budget: [ErrTooLarge]), and a command known only at run time
// ([ErrNotStatic]): an unquoted expansion or glob as the program ($CMD -rf x, $(curl …),
// /bin/r?), a script piped or redirected into a shell from anything but echo, printf or
// a here-doc (curl … | sh, sh < file), source of a <(…) that is not echo or printf. A
// quoted expansion as the program ("$CMD" -rf x) is one word: the command is returned
// with it as written, and the engine tries it as each program the rule's regexes name.
//
// Out of reach, rendered as written: the values of variables in arguments ($DIR stays
// $DIR), aliases, a script file run by name (bash clean.sh, source venv/bin/activate),
// other interpreters (python -c), and what a cd before a command changes.
//
// # Bounds and cost
//
// The cost is linear in the script: one parse, then walks whose nodes, option scans and
// brace words come from one work budget of three times the script plus 4 KiB, and
// rendered bytes from one of four times the script plus 4 KiB, for the whole script and
// every script read inside it. The allocations are at most two per byte plus 512
// (FuzzCommands). A line of plain words (no quote, expansion or operator) is split
// without the parser, in about a microsecond. BenchmarkCommands and BenchmarkHostileGate
// give the figures (docs/performance.md).
package shellcmd
