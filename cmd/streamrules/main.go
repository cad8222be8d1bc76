// Command streamrules manages stream rules from a shell: list and edit them in the
// database, keep them as files in a repository (export, import, validate), seed a fresh
// database, and read the stats.
//
//	go run ./cmd/streamrules rules list
//	go run ./cmd/streamrules export -o rules.yaml
//	go run ./cmd/streamrules validate rules.yaml
//	go run ./cmd/streamrules import --dry-run rules.yaml
//	go run ./cmd/streamrules serve --upstream https://api.openai.com/v1
//
// serve runs the OpenAI-compatible gateway (package gateway) on the database's rules.
//
// The database is --dsn, else STREAMRULES_DSN, else the SQLite file streamrules.db
// (STREAMRULES_SQLITE_PATH), in the forms package rulesdb reads. Exit codes: 0 done, 1 it
// ran and failed (the store is down, a rule is missing), 2 it never started or the input
// is invalid (a bad flag, DSN or rule file; the message names the file, rule and field).
// stdout carries the result; --json makes it one JSON document with Rule's field names.
// Everything else (warnings, progress, summaries) goes to stderr.
//
// streamrules --help lists the commands; streamrules COMMAND --help explains one.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"

	"golang.org/x/term"

	// Shell rules (Rule.Shell) are read as a shell reads them wherever this package runs.
	_ "github.com/streamrules/streamrules/shellcmd"
)

const progName = "streamrules"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	// Whether stdout and stderr are terminals is decided here, once, and travels with
	// the writers: tests pass plain buffers (or fake terminals) to run.
	stdout := terminal{os.Stdout, term.IsTerminal(int(os.Stdout.Fd()))}
	stderr := terminal{os.Stderr, term.IsTerminal(int(os.Stderr.Fd()))}
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, stdout, stderr)
	stop()
	os.Exit(code)
}

// terminal is a writer that knows whether it is a terminal.
type terminal struct {
	io.Writer
	tty bool
}

func (t terminal) IsTerminal() bool { return t.tty }

// isTerminal reports whether w said it is a terminal (main's terminal); anything else
// is a pipe.
func isTerminal(w io.Writer) bool {
	t, ok := w.(interface{ IsTerminal() bool })
	return ok && t.IsTerminal()
}

// proc is what every command gets: the process's streams and environment.
type proc struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// run is the whole program; it returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &proc{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	err := dispatch(ctx, e, args)
	code := exitCode(err)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case code == 2 && isUsage(err):
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", progName, err)
	default:
		fmt.Fprintf(stderr, "%s: %v\n", progName, err)
	}
	return code
}

// command is one command: its place in the tree, its usage line, and how it runs.
type command struct {
	path    string // "rules list"
	args    string // the usage after the path: "[--json]"
	summary string
	about   string // more lines for --help
	opts    func() opts
}

// opts is one command's options, as river's commands have them: flags declares them,
// validate checks them and the arguments before anything is opened (its errors are usage
// errors, exit 2), run does the work.
type opts interface {
	flags(fs *flag.FlagSet)
	validate(args []string) error
	run(ctx context.Context, e *proc) error
}

var commands []*command // filled by the files that define them, in init

func dispatch(ctx context.Context, e *proc, args []string) error {
	if len(args) == 0 {
		printUsage(e.stderr)
		return usagef("no command")
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help" {
		printUsage(e.stdout)
		return flag.ErrHelp
	}
	// The longest command path that args start with.
	var cmd *command
	n := 0
	for _, c := range commands {
		words := strings.Fields(c.path)
		if len(words) > n && len(args) >= len(words) && strings.Join(args[:len(words)], " ") == c.path {
			cmd, n = c, len(words)
		}
	}
	if cmd == nil {
		if args[0] == "rules" {
			if len(args) > 1 && (args[1] == "-h" || args[1] == "--help" || args[1] == "-help") {
				printGroup(e.stdout, "rules")
				return flag.ErrHelp
			}
			if len(args) == 1 {
				printGroup(e.stderr, "rules")
				return usagef("rules needs a verb")
			}
			return usagef("unknown command %q", "rules "+args[1])
		}
		return usagef("unknown command %q", args[0])
	}
	fs := newFlagSet(cmd.path)
	o := cmd.opts()
	o.flags(fs)
	pos, err := parseInterspersed(fs, args[n:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printCommand(e.stdout, cmd, fs)
			return flag.ErrHelp
		}
		return usagef("%s: %v", cmd.path, err)
	}
	if err := o.validate(pos); err != nil {
		return err
	}
	return o.run(ctx, e)
}

// parseInterspersed parses flags wherever they stand ("rules show NAME --json"), not only
// before the first argument as flag.Parse does; after "--" everything is an argument.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if len(args) > 0 && args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}

// newFlagSet returns a quiet flag set: run prints the errors, --help prints the usage.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// helpOrder is the order --help lists the commands in, by their first word: the files
// that define them register in file-name order.
var helpOrder = []string{"rules", "export", "import", "validate", "test", "replay", "stats", "seed", "serve"}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s COMMAND [flags] [arguments]\n\nStream rules from a shell: the rules in the database, rules as files, seeding and stats.\n\nCommands:\n", progName)
	sorted := slices.Clone(commands)
	slices.SortStableFunc(sorted, func(a, b *command) int {
		first := func(c *command) int { return slices.Index(helpOrder, strings.Fields(c.path)[0]) }
		return first(a) - first(b)
	})
	for _, c := range sorted {
		fmt.Fprintf(w, "  %-16s %s\n", c.path, c.summary)
	}
	fmt.Fprintf(w, `
The database: --dsn, else %s, else the SQLite file streamrules.db (STREAMRULES_SQLITE_PATH).
  postgres://user:pass@host:5432/db?sslmode=disable, sqlite:PATH, file:PATH?...
Rules may use the seeds' environments (telegram, client_ops, master, picture) and those STREAMRULES_ENVIRONMENTS names (comma-separated).

Exit codes: 0 done; 1 it ran and failed; 2 bad usage or invalid input (file, rule and field named).
Run "%s COMMAND --help" for a command's flags.
`, "STREAMRULES_DSN", progName)
}

func printGroup(w io.Writer, group string) {
	fmt.Fprintf(w, "Usage: %s %s VERB …\n\n", progName, group)
	for _, c := range commands {
		if strings.HasPrefix(c.path, group+" ") {
			fmt.Fprintf(w, "  %-16s %s\n", c.path, c.summary)
		}
	}
	fmt.Fprintln(w)
}

func printCommand(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: %s %s %s\n\n%s\n", progName, c.path, c.args, c.summary)
	if c.about != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.about))
	}
	has := false
	fs.VisitAll(func(*flag.Flag) { has = true })
	if has {
		fmt.Fprintf(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.VisitAll(func(f *flag.Flag) {
			name, usage := flag.UnquoteUsage(f)
			dash := "--"
			if len(f.Name) == 1 {
				dash = "-"
			}
			line := "  " + dash + f.Name
			if name != "" {
				line += " " + name
			}
			if f.DefValue != "" && f.DefValue != "false" {
				usage += fmt.Sprintf(" (default %q)", f.DefValue)
			}
			fmt.Fprintf(w, "%-24s %s\n", line, usage)
		})
		fs.SetOutput(io.Discard)
	}
}
