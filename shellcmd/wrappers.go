package shellcmd

import (
	"strings"
)

// opts is a program's option grammar, as its getopt_long reads it: the short options
// that take an argument and those that do not, the long ones likewise. A long option is
// also met by any unambiguous prefix (--sig is --signal), as GNU getopt_long allows.
type opts struct {
	shortArg, shortFlag string
	longArg, longFlag   []string
	// digits: -5 is an option (nice -5, the obsolete form).
	digits bool
	// plus: +o is an option too (the shells' set +o).
	plus bool
}

// scan reads options from the front of args and returns the words after them: after a
// "--", or from the first operand on. An option the grammar does not know (a newer
// version's, or a typo the program refuses) is read both ways: as a flag, and as one
// taking the next word; alt holds the second reading's rest.
func (o *opts) scan(args []word) (rest []word, alt [][]word, set map[string]string) {
	if len(args) == 0 || len(args[0].s) < 2 || args[0].s[0] != '-' && args[0].s[0] != '+' {
		return args, nil, nil // no option: the common case costs no map
	}
	set = map[string]string{}
	for len(args) > 0 {
		w := args[0].s
		switch {
		case w == "--":
			return args[1:], alt, set
		case strings.HasPrefix(w, "--"):
			name, val, hasVal := strings.Cut(w[2:], "=")
			full, takes, known := o.long(name)
			args = args[1:]
			switch {
			case hasVal:
				set[full] = val
			case takes && len(args) > 0:
				set[full] = args[0].s
				args = args[1:]
			case !known && len(args) > 0 && len(alt) < 4:
				set[full] = ""
				r, a, _ := o.scan(args[1:])
				alt = append(append(alt, r), a...)
			default:
				set[full] = ""
			}
		case len(w) > 1 && (w[0] == '-' || w[0] == '+' && o.plus):
			args = args[1:]
			for i := 1; i < len(w); i++ {
				c := w[i]
				switch {
				case strings.IndexByte(o.shortArg, c) >= 0:
					v := w[i+1:]
					if v == "" && len(args) > 0 {
						v = args[0].s
						args = args[1:]
					}
					set[string(c)] = v
					i = len(w)
				case strings.IndexByte(o.shortFlag, c) >= 0 || o.digits && '0' <= c && c <= '9':
					set[string(c)] = ""
				default:
					set[string(c)] = ""
					if i == len(w)-1 && len(args) > 0 && len(alt) < 4 {
						r, a, _ := o.scan(args[1:])
						alt = append(append(alt, r), a...)
					}
				}
			}
		default:
			return args, alt, set
		}
	}
	return args, alt, set
}

// long resolves a long option's name or prefix: its full name, whether it takes an
// argument, whether it is known. An ambiguous prefix whose options agree on taking an
// argument is read so; otherwise the program refuses it (known, taking none).
func (o *opts) long(name string) (full string, takes, known bool) {
	for _, l := range o.longArg {
		if l == name {
			return l, true, true
		}
	}
	for _, l := range o.longFlag {
		if l == name {
			return l, false, true
		}
	}
	var arg, flag []string
	for _, l := range o.longArg {
		if strings.HasPrefix(l, name) {
			arg = append(arg, l)
		}
	}
	for _, l := range o.longFlag {
		if strings.HasPrefix(l, name) {
			flag = append(flag, l)
		}
	}
	switch {
	case len(arg) == 0 && len(flag) == 0:
		return name, false, false
	case len(flag) == 0:
		return arg[0], true, true
	case len(arg) == 0:
		return flag[0], false, true
	}
	return name, true, true // ambiguous: getopt refuses it; the next word is not run either way
}

func has(set map[string]string, keys ...string) (string, bool) {
	for _, k := range keys {
		if v, ok := set[k]; ok {
			return v, true
		}
	}
	return "", false
}

// The grammars of the wrappers, from their manuals (coreutils, util-linux, sudo, procps,
// OpenSSH, docker, kubectl).
var (
	sudoOpts = &opts{shortArg: "CDghpRrtTUu", shortFlag: "AbEeHiKklnPSsVvN",
		longArg:  []string{"chdir", "close-from", "group", "host", "prompt", "chroot", "role", "type", "command-timeout", "other-user", "user"},
		longFlag: []string{"askpass", "background", "bell", "preserve-env", "edit", "help", "set-home", "login", "remove-timestamp", "reset-timestamp", "list", "non-interactive", "preserve-groups", "stdin", "shell", "version", "validate"}}
	doasOpts  = &opts{shortArg: "Cu", shortFlag: "nsL"}
	envOpts   = &opts{shortArg: "uCS", shortFlag: "i0v", longArg: []string{"unset", "chdir", "split-string"}, longFlag: []string{"ignore-environment", "null", "debug", "list-signal-handling", "help", "version", "block-signal", "default-signal", "ignore-signal"}}
	niceOpts  = &opts{shortArg: "n", longArg: []string{"adjustment"}, longFlag: []string{"help", "version"}, digits: true}
	nohupOpts = &opts{longFlag: []string{"help", "version"}}
	stdbuf    = &opts{shortArg: "ioe", longArg: []string{"input", "output", "error"}, longFlag: []string{"help", "version"}}
	timeout   = &opts{shortArg: "sk", shortFlag: "fpv", longArg: []string{"signal", "kill-after"}, longFlag: []string{"foreground", "preserve-status", "verbose", "help", "version"}}
	timeOpts  = &opts{shortArg: "fo", shortFlag: "apqvV", longArg: []string{"format", "output"}, longFlag: []string{"append", "portability", "quiet", "verbose", "version", "help"}}
	xargsOpts = &opts{shortArg: "adEILnPs", shortFlag: "0oprtxeil",
		longArg:  []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"},
		longFlag: []string{"null", "interactive", "no-run-if-empty", "verbose", "exit", "open-tty", "show-limits", "eof", "replace", "max-lines", "help", "version"}}
	setsid    = &opts{shortFlag: "cfwhV", longFlag: []string{"ctty", "fork", "wait", "help", "version"}}
	unshare   = &opts{shortArg: "SGRwt", shortFlag: "muinpUCTfrclhV", longArg: []string{"setuid", "setgid", "root", "wd", "propagation", "setgroups", "map-user", "map-users", "map-group", "map-groups", "monotonic", "boottime", "load-interp"}, longFlag: []string{"mount", "uts", "ipc", "net", "pid", "user", "cgroup", "time", "fork", "kill-child", "mount-proc", "mount-binfmt", "keep-caps", "map-root-user", "map-current-user", "map-auto", "help", "version"}}
	ionice    = &opts{shortArg: "cnpPu", shortFlag: "thV", longArg: []string{"class", "classdata", "pid", "pgid", "uid"}, longFlag: []string{"ignore", "help", "version"}}
	chrt      = &opts{shortArg: "TPD", shortFlag: "bdfioramRpvhVe", longArg: []string{"sched-runtime", "sched-period", "sched-deadline"}, longFlag: []string{"batch", "deadline", "fifo", "idle", "other", "rr", "ext", "all-tasks", "max", "pid", "reset-on-fork", "verbose", "help", "version"}}
	taskset   = &opts{shortFlag: "acphV", longFlag: []string{"all-tasks", "cpu-list", "pid", "help", "version"}}
	chroot    = &opts{longArg: []string{"userspec", "groups"}, longFlag: []string{"skip-chdir", "help", "version"}}
	flock     = &opts{shortArg: "wEc", shortFlag: "sxenuoFvhV", longArg: []string{"timeout", "wait", "conflict-exit-code", "command"}, longFlag: []string{"shared", "exclusive", "nonblock", "nb", "unlock", "close", "no-fork", "verbose", "help", "version"}}
	watch     = &opts{shortArg: "nq", shortFlag: "bcCdegprtwxhv", longArg: []string{"interval", "equexit", "shotsdir"}, longFlag: []string{"beep", "color", "no-color", "differences", "errexit", "chgexit", "precise", "no-rerun", "no-title", "no-wrap", "exec", "help", "version"}}
	scriptOps = &opts{shortArg: "cEIOBTmo", shortFlag: "aefqthV", longArg: []string{"command", "echo", "log-in", "log-out", "log-io", "log-timing", "logging-format", "output-limit"}, longFlag: []string{"append", "return", "flush", "force", "quiet", "timing", "help", "version"}}
	suOpts    = &opts{shortArg: "cgGswC", shortFlag: "flmpPhV", longArg: []string{"command", "session-command", "group", "supp-group", "shell", "whitelist-environment"}, longFlag: []string{"fast", "login", "preserve-environment", "pty", "help", "version"}}
	runuser   = &opts{shortArg: "cgGswCu", shortFlag: "flmpPhV", longArg: []string{"command", "session-command", "group", "supp-group", "shell", "whitelist-environment", "user"}, longFlag: []string{"fast", "login", "preserve-environment", "pty", "help", "version"}}
	execOpts  = &opts{shortArg: "a", shortFlag: "cl"}
	command   = &opts{shortFlag: "pvV"}
	sshOpts   = &opts{shortArg: "BbcDEeFIiJLlmOopQRSWw", shortFlag: "46AaCfGgKkMNnqsTtVvXxYy"}
	dockerTop = &opts{shortArg: "cHl", shortFlag: "Dv", longArg: []string{"config", "context", "host", "log-level", "tlscacert", "tlscert", "tlskey", "url", "connection", "identity", "root", "runroot", "storage-driver", "cgroup-manager", "events-backend", "hooks-dir", "imagestore", "module", "network-cmd-path", "network-config-dir", "out", "registries-conf", "runtime", "runtime-flag", "ssh", "storage-opt", "tmpdir", "volumepath"}, longFlag: []string{"debug", "tls", "tlsverify", "remote", "help", "version"}}
	dockerExc = &opts{shortArg: "euw", shortFlag: "ditl", longArg: []string{"env", "env-file", "user", "workdir", "detach-keys", "preserve-fd", "preserve-fds", "cidfile"}, longFlag: []string{"detach", "interactive", "tty", "privileged", "latest", "help"}}
	dockerRun = &opts{shortArg: "acehlmpuvw", shortFlag: "diPqt",
		longArg:  []string{"add-host", "annotation", "attach", "blkio-weight", "cap-add", "cap-drop", "cgroup-parent", "cgroupns", "cidfile", "cpu-period", "cpu-quota", "cpu-shares", "cpus", "cpuset-cpus", "cpuset-mems", "device", "dns", "dns-option", "dns-search", "domainname", "entrypoint", "env", "env-file", "expose", "gpus", "group-add", "health-cmd", "health-interval", "health-retries", "hostname", "ip", "ip6", "ipc", "isolation", "label", "label-file", "link", "log-driver", "log-opt", "mac-address", "memory", "memory-reservation", "memory-swap", "mount", "name", "network", "network-alias", "pid", "platform", "publish", "pull", "restart", "runtime", "security-opt", "shm-size", "stop-signal", "stop-timeout", "storage-opt", "sysctl", "tmpfs", "ulimit", "user", "userns", "uts", "volume", "volumes-from", "workdir"},
		longFlag: []string{"detach", "init", "interactive", "no-healthcheck", "oom-kill-disable", "privileged", "publish-all", "quiet", "read-only", "rm", "sig-proxy", "tty", "help"}}
	kubectlEx = &opts{shortArg: "cnf", shortFlag: "itq", longArg: []string{"container", "namespace", "filename", "context", "kubeconfig", "cluster", "user", "pod-running-timeout", "server", "token", "as", "as-group"}, longFlag: []string{"stdin", "tty", "quiet", "help"}}
	gitOpts   = &opts{shortArg: "Cc", shortFlag: "pPhv", longArg: []string{"git-dir", "work-tree", "namespace", "config-env", "super-prefix", "list-cmds", "attr-source"}, longFlag: []string{"paginate", "no-pager", "bare", "no-replace-objects", "literal-pathspecs", "glob-pathspecs", "noglob-pathspecs", "icase-pathspecs", "no-optional-locks", "no-advice", "exec-path", "html-path", "man-path", "info-path", "version", "help"}}
	bashOpts  = &opts{plus: true, shortArg: "oO", shortFlag: "abcefhiklmnprstuvxBCEHPTDsl", longArg: []string{"rcfile", "init-file"}, longFlag: []string{"debug", "debugger", "dump-po-strings", "dump-strings", "help", "login", "noediting", "noprofile", "norc", "posix", "pretty-print", "protected", "restricted", "verbose", "version"}}
	fishOpts  = &opts{shortArg: "cCdo", shortFlag: "ilnNPvhp", longArg: []string{"command", "init-command", "debug", "debug-output", "features", "profile", "profile-startup"}, longFlag: []string{"interactive", "login", "no-execute", "no-config", "private", "print-rusage-self", "print-debug-categories", "version", "help", "no-indent"}}
)

// shells are the programs whose -c runs a script.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true, "rbash": true, "yash": true, "posh": true, "ksh93": true, "oksh": true}

// configRuns are the git config keys whose value git runs as a command.
var configRuns = []string{"core.sshcommand", "core.pager", "core.editor", "core.fsmonitor", "sequence.editor", "diff.external", "gpg.program", "credential.helper", "core.askpass", "uploadpack.packobjectshook"}

// unwrap reads one program's grammar. next: the words it runs, to be read as a command
// in turn; done: what it runs is read already (a script) or it runs nothing; neither:
// the command is recorded as it is.
func (r *reader) unwrap(sc *scope, prog string, args []word, depth int) (next []word, done bool, err error) {
	alts := func(as [][]word) error { return r.alts(sc, as, depth) }
	switch prog {
	case "sudo", "doas":
		o := sudoOpts
		if prog == "doas" {
			o = doasOpts
		}
		rest, alt, set := o.scan(args)
		if err := alts(alt); err != nil {
			return nil, false, err
		}
		if _, edit := has(set, "e", "edit"); edit && prog == "sudo" {
			return nil, true, nil // sudoedit: edits files, runs nothing
		}
		if _, sh := has(set, "s", "i", "shell", "login"); sh && len(rest) == 0 {
			return []word{{s: "sh"}}, false, nil // an interactive shell: reads its input
		}
		return nonNil(rest), false, nil
	case "env":
		rest, alt, set := envOpts.scan(args)
		if err := alts(alt); err != nil {
			return nil, false, err
		}
		if s, ok := has(set, "S", "split-string"); ok {
			parts := []string{s}
			for _, w := range rest {
				parts = append(parts, w.s)
			}
			return nil, true, r.readScript(sc, strings.Join(parts, " "), depth, nil)
		}
		return nonNil(rest), false, nil
	case "nice":
		return r.plain(sc, niceOpts, args, depth)
	case "nohup":
		return r.plain(sc, nohupOpts, args, depth)
	case "stdbuf":
		return r.plain(sc, stdbuf, args, depth)
	case "setsid":
		return r.plain(sc, setsid, args, depth)
	case "unshare":
		rest, alt, _ := unshare.scan(args)
		if len(rest) == 0 {
			rest = []word{{s: "sh"}} // the default program is a shell
		}
		return rest, false, alts(alt)
	case "ionice":
		return r.plain(sc, ionice, args, depth)
	case "time":
		return r.plain(sc, timeOpts, args, depth)
	case "exec":
		return r.plain(sc, execOpts, args, depth)
	case "builtin":
		return nonNil(args), false, nil
	case "busybox", "toybox":
		if len(args) > 0 && strings.HasPrefix(args[0].s, "-") {
			return nil, false, nil // --list, --help
		}
		return nonNil(args), false, nil
	case "command":
		rest, _, set := command.scan(args)
		if _, look := has(set, "v", "V"); look {
			return nil, false, nil // command -v only looks the name up
		}
		return nonNil(rest), false, nil
	case "xargs":
		rest, alt, _ := xargsOpts.scan(args)
		if len(rest) == 0 {
			rest = []word{{s: "echo"}}
		}
		return rest, false, alts(alt)
	case "timeout":
		rest, alt, _ := timeout.scan(args)
		if err := alts(dropFirst(alt)); err != nil {
			return nil, false, err
		}
		return nonNil(dropOne(rest)), false, nil // the duration
	case "chrt":
		rest, alt, _ := chrt.scan(args)
		if err := alts(dropFirst(alt)); err != nil {
			return nil, false, err
		}
		return nonNil(dropOne(rest)), false, nil // the priority
	case "taskset":
		rest, alt, _ := taskset.scan(args)
		if err := alts(dropFirst(alt)); err != nil {
			return nil, false, err
		}
		return nonNil(dropOne(rest)), false, nil // the mask
	case "chroot":
		rest, alt, _ := chroot.scan(args)
		if err := alts(dropFirst(alt)); err != nil {
			return nil, false, err
		}
		rest = dropOne(rest) // the new root
		if len(rest) == 0 {
			rest = []word{{s: "sh"}}
		}
		return rest, false, nil
	case "flock":
		rest, alt, set := flock.scan(args)
		if err := alts(dropFirst(alt)); err != nil {
			return nil, false, err
		}
		if s, ok := has(set, "c", "command"); ok {
			return nil, true, r.readScript(sc, s, depth, nil)
		}
		rest = dropOne(rest) // the lock file
		if len(rest) > 1 && (rest[0].s == "-c" || rest[0].s == "--command" || strings.HasPrefix("--command", rest[0].s) && len(rest[0].s) > 3) {
			return nil, true, r.readScript(sc, rest[1].s, depth, nil)
		}
		return nonNil(rest), false, nil
	case "watch":
		rest, alt, set := watch.scan(args)
		if err := alts(alt); err != nil {
			return nil, false, err
		}
		if _, ex := has(set, "x", "exec"); ex {
			return nonNil(rest), false, nil
		}
		return nil, true, r.readScript(sc, joinWords(rest), depth, nil) // watch runs sh -c "ARGS"
	case "script":
		rest, alt, set := scriptOps.scan(args)
		if err := alts(alt); err != nil {
			return nil, false, err
		}
		if s, ok := has(set, "c", "command"); ok {
			return nil, true, r.readScript(sc, s, depth, nil)
		}
		_ = rest // the typescript file
		return []word{{s: "sh"}}, false, nil
	case "su", "runuser":
		o := suOpts
		if prog == "runuser" {
			o = runuser
		}
		rest, alt, set := o.scan(args)
		if err := alts(alt); err != nil {
			return nil, false, err
		}
		// getopt permutes: options may follow the user too.
		if n := len(args) - len(rest); n == 0 || args[n-1].s != "--" {
			if rest, set = r.permute(o, rest, set, alts); r.err != nil {
				return nil, false, r.err
			}
		}
		for _, k := range []string{"c", "command", "C", "session-command"} {
			if s, ok := set[k]; ok {
				if err := r.readScript(sc, s, depth, nil); err != nil {
					return nil, false, err
				}
			}
		}
		if _, ok := has(set, "u", "user"); ok && prog == "runuser" {
			return nonNil(rest), false, nil // runuser -u USER COMMAND: runs it directly
		}
		if len(rest) > 0 && rest[0].s == "-" {
			rest = rest[1:] // su - USER: a login shell
		}
		if _, ok := has(set, "c", "command", "C", "session-command"); ok {
			return nil, true, nil
		}
		// su USER ARGS: the shell gets ARGS (su root -- -c '…').
		return append([]word{{s: "sh"}}, dropOne(rest)...), false, nil
	case "ssh":
		rest, alt, _ := sshOpts.scan(args)
		for _, a := range alt {
			if err := r.remote(sc, a, depth); err != nil {
				return nil, false, err
			}
		}
		return nil, true, r.remote(sc, rest, depth)
	case "docker", "podman", "nerdctl":
		return r.container(sc, args, depth)
	case "kubectl", "oc":
		return r.kubectl(sc, args, depth)
	case "git":
		return r.git(sc, args, depth)
	case "fish":
		_, _, set := fishOpts.scan(args)
		ran := false
		for _, k := range []string{"c", "command", "C", "init-command"} {
			if s, ok := set[k]; ok {
				ran = true
				if err := r.readScript(sc, s, depth, nil); err != nil {
					return nil, false, err
				}
			}
		}
		if ran {
			return nil, true, nil
		}
		return nil, false, nil
	case "eval":
		return nil, true, r.readScript(sc, joinWords(args), depth, sc.params)
	case "trap":
		if len(args) > 0 && args[0].s == "--" {
			args = args[1:]
		}
		if len(args) == 0 || args[0].s == "-" || args[0].s == "-p" || args[0].s == "-l" || args[0].s == "-P" {
			return nil, false, nil
		}
		if err := r.readScript(sc, args[0].s, depth, nil); err != nil {
			return nil, false, err
		}
		return nil, false, nil
	case "source", ".":
		if len(args) == 0 {
			return nil, false, nil
		}
		if err := r.sourced(sc, args[0], depth, args[1:]); err != nil {
			return nil, false, err
		}
		return nil, false, nil
	}
	if shells[prog] {
		return r.shell(sc, args, depth)
	}
	return nil, false, nil
}

// alts reads the other readings of options a grammar does not know.
func (r *reader) alts(sc *scope, as [][]word, depth int) error {
	for _, a := range as {
		if err := r.command(sc, a, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// plain reads a wrapper whose command follows its options.
func (r *reader) plain(sc *scope, o *opts, args []word, depth int) ([]word, bool, error) {
	rest, alt, _ := o.scan(args)
	if len(alt) == 0 {
		return nonNil(rest), false, nil
	}
	return nonNil(rest), false, r.alts(sc, alt, depth)
}

// shell reads what a shell runs: the script of -c (its operands after it are $0 $1…),
// else a script on its standard input (-s, or no operand), else the file it is given
// (a process substitution or /dev/stdin is read; a file on disk is out of reach).
func (r *reader) shell(sc *scope, args []word, depth int) ([]word, bool, error) {
	rest, alt, set := bashOpts.scan(args)
	for _, a := range alt {
		if _, _, err := r.shellOperands(sc, a, set, depth); err != nil {
			return nil, false, err
		}
	}
	return r.shellOperands(sc, rest, set, depth)
}

func (r *reader) shellOperands(sc *scope, rest []word, set map[string]string, depth int) ([]word, bool, error) {
	_, c := set["c"]
	_, stdin := set["s"]
	switch {
	case c:
		if len(rest) == 0 {
			return nil, false, nil // bash -c with no script: an error; recorded as it is
		}
		var params []word
		if len(rest) > 1 {
			params = nonNil(rest[2:])
		} else {
			params = []word{}
		}
		return nil, true, r.readScript(sc, rest[0].s, depth, params)
	case stdin || len(rest) == 0:
		return nil, true, r.readStdin(sc, depth, nonNil(rest))
	}
	return nil, false, r.sourced(sc, rest[0], depth, rest[1:])
}

// permute reads options that follow operands too (getopt's default order): the
// operands come back, the options go into set.
func (r *reader) permute(o *opts, rest []word, set map[string]string, alts func([][]word) error) ([]word, map[string]string) {
	var operands []word
	for len(rest) > 0 {
		operands = append(operands, rest[0])
		more, alt, set2 := o.scan(rest[1:])
		if err := alts(alt); err != nil && r.err == nil {
			r.err = err
		}
		for k, v := range set2 {
			if set == nil {
				set = map[string]string{}
			}
			set[k] = v
		}
		if n := len(rest) - 1 - len(more); n > 0 && rest[n].s == "--" {
			return append(operands, more...), set
		}
		rest = more
	}
	return operands, set
}

// sourced reads the script a file operand names, when it is known: a process
// substitution whose output is static, or standard input. A file on disk is not read;
// its command (bash x.sh, source venv/bin/activate) is recorded.
func (r *reader) sourced(sc *scope, file word, depth int, params []word) error {
	switch {
	case file.proc != nil:
		ps := &scope{src: sc.src, params: sc.params, depth: sc.depth}
		text, ok := r.outputs(ps, file.proc.Stmts, 0)
		if !ok {
			// Its commands are read where they are (the walk visits them), but what they
			// print is run: only the shell knows it.
			return ErrNotStatic
		}
		return r.script(text, depth+1, params, nil)
	case file.s == "/dev/stdin" || file.s == "/proc/self/fd/0" || file.s == "/dev/fd/0" || file.s == "-":
		return r.readStdin(sc, depth, params)
	case file.dyn:
		return ErrNotStatic
	}
	return nil // a file on disk: out of reach; the command itself is recorded
}

// remote reads ssh's DESTINATION COMMAND…: the command words joined, run by the remote
// shell; none: the remote shell reads standard input.
func (r *reader) remote(sc *scope, rest []word, depth int) error {
	if len(rest) == 0 {
		return nil
	}
	if len(rest) == 1 {
		return r.readStdin(sc, depth, nil)
	}
	return r.readScript(sc, joinWords(rest[1:]), depth, nil)
}

// container reads docker|podman [globals] exec|run [options] CONTAINER|IMAGE COMMAND…,
// and compose's exec|run SERVICE COMMAND….
func (r *reader) container(sc *scope, args []word, depth int) ([]word, bool, error) {
	rest, _, _ := dockerTop.scan(args)
	if len(rest) > 0 && (rest[0].s == "container" || rest[0].s == "compose") {
		if rest[0].s == "compose" {
			rest, _, _ = (&opts{shortArg: "fp", longArg: []string{"file", "project-name", "profile", "env-file", "project-directory", "ansi", "parallel", "progress"}, longFlag: []string{"compatibility", "dry-run", "all-resources"}}).scan(rest[1:])
		} else {
			rest = rest[1:]
		}
	}
	if len(rest) == 0 {
		return nil, false, nil
	}
	sub := rest[0].s
	var o *opts
	switch sub {
	case "exec":
		o = dockerExc
	case "run":
		o = dockerRun
	default:
		return nil, false, nil
	}
	cmd, alt, set := o.scan(rest[1:])
	read := func(cmd []word) error {
		if _, latest := has(set, "l", "latest"); !(latest && sub == "exec") {
			cmd = dropOne(cmd) // the container, image or service
		}
		if ep, ok := has(set, "entrypoint"); ok && sub == "run" && ep != "" {
			cmd = append([]word{{s: ep}}, cmd...)
		}
		if len(cmd) == 0 {
			return nil
		}
		return r.command(sc, cmd, depth+1)
	}
	for _, a := range alt {
		if err := read(a); err != nil {
			return nil, false, err
		}
	}
	return nil, false, read(cmd)
}

// kubectl reads kubectl exec [POD] [flags] -- COMMAND… (and the old form without --).
func (r *reader) kubectl(sc *scope, args []word, depth int) ([]word, bool, error) {
	i := 0
	for i < len(args) && args[i].s != "exec" && args[i].s != "--" {
		i++
	}
	if i == len(args) || args[i].s != "exec" {
		return nil, false, nil
	}
	rest := args[i+1:]
	for j, w := range rest {
		if w.s == "--" {
			return nil, false, r.command(sc, nonNil(rest[j+1:]), depth+1)
		}
	}
	cmd, _, _ := kubectlEx.scan(rest)
	cmd = dropOne(cmd) // the pod
	cmd, _, _ = kubectlEx.scan(cmd)
	if len(cmd) == 0 {
		return nil, false, nil
	}
	return nil, false, r.command(sc, cmd, depth+1)
}

// git reads git's -c settings that run commands (alias.X=!…, core.sshCommand, …) and
// expands an alias the command calls: git -c alias.p='push --force' p is git push --force.
func (r *reader) git(sc *scope, args []word, depth int) ([]word, bool, error) {
	var aliases map[string]string
	i := 0
	for i < len(args) {
		w := args[i].s
		if w == "-c" && i+1 < len(args) || strings.HasPrefix(w, "-c") && len(w) > 2 {
			v := w[2:]
			if w == "-c" {
				v = args[i+1].s
				i++
			}
			key, val, _ := strings.Cut(v, "=")
			key = strings.ToLower(key)
			switch {
			case strings.HasPrefix(key, "alias."):
				if aliases == nil {
					aliases = map[string]string{}
				}
				aliases[key[len("alias."):]] = val
			case strings.HasPrefix(key, "pager.") || contains(configRuns, key):
				if err := r.readScript(sc, strings.TrimPrefix(val, "!"), depth, nil); err != nil {
					return nil, false, err
				}
			}
			i++
			continue
		}
		if !strings.HasPrefix(w, "-") {
			break
		}
		// Another global option: -C DIR and the long ones taking a word.
		if w == "-C" || (strings.HasPrefix(w, "--") && !strings.Contains(w, "=")) {
			if _, takes, _ := gitOpts.long(strings.TrimPrefix(w, "--")); w == "-C" || takes {
				i++
			}
		}
		i++
	}
	if i < len(args) && aliases != nil {
		if a, ok := aliases[args[i].s]; ok {
			if strings.HasPrefix(a, "!") {
				// git runs sh -c 'ALIAS "$@"' ALIAS ARGS…
				return nil, true, r.readScript(sc, a[1:]+` "$@"`, depth, nonNil(args[i+1:]))
			}
			expanded := append([]word{{s: "git"}}, args[:i]...)
			for _, f := range strings.Fields(a) {
				expanded = append(expanded, word{s: f})
			}
			expanded = append(expanded, args[i+1:]...)
			return nil, true, r.emit(expanded)
		}
	}
	// A shell alias defined but called under another name still runs: read it.
	for _, a := range aliases {
		if strings.HasPrefix(a, "!") {
			if err := r.readScript(sc, a[1:], depth, []word{}); err != nil {
				return nil, false, err
			}
		}
	}
	return nil, false, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func nonNil(ws []word) []word {
	if ws == nil {
		return []word{}
	}
	return ws
}

func dropOne(ws []word) []word {
	if len(ws) == 0 {
		return ws
	}
	return ws[1:]
}

func dropFirst(as [][]word) [][]word {
	out := make([][]word, len(as))
	for i, a := range as {
		out[i] = dropOne(a)
	}
	return out
}

func joinWords(ws []word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.s
	}
	return strings.Join(parts, " ")
}
