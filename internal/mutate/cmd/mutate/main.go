// Command mutate measures how many one-line changes to a Go file the package's tests
// catch. From the module root:
//
//	go run ./internal/mutate/cmd/mutate -file judge.go
//	go run ./internal/mutate/cmd/mutate -file middleware/model.go -run 'Guard|Held' -lines 100-200
//	go run ./internal/mutate/cmd/mutate -file rulesdb/queue.go -list
//
// Each mutant (see [mutate.Mutants] for the operators) is built through go test's -overlay,
// so the file on disk is never written and an interrupted run leaves nothing behind. The
// unmutated package is tested first; a run whose baseline fails stops there. Output is one
// line per mutant, survivors in capitals, then "file: caught C/T (P%), I invalid": a mutant
// that does not build is left out of T.
//
// The run costs one package test per mutant, minutes to an hour: it is not part of
// go test ./... and not of .ci/run. Narrow it with -run, -lines or -only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streamrules/streamrules/internal/mutate"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	file, pkg, run, skip, lines, only string
	timeout                           time.Duration
	list, verbose                     bool
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.file, "file", "", "the Go file to mutate (required), relative to the module root")
	fs.StringVar(&o.pkg, "pkg", "", "the package to test (default: the file's directory)")
	fs.StringVar(&o.run, "run", "", "go test -run for every mutant")
	fs.StringVar(&o.skip, "skip", "", "go test -skip for every mutant")
	fs.StringVar(&o.lines, "lines", "", "only mutants on these lines, e.g. 120-180")
	fs.StringVar(&o.only, "only", "", "only these mutant IDs, comma-separated (see -list)")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "go test -timeout per mutant")
	fs.BoolVar(&o.list, "list", false, "list the mutants and stop")
	fs.BoolVar(&o.verbose, "v", false, "print go test's output for survivors")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ms, src, err := o.mutants()
	if err != nil {
		fmt.Fprintln(stderr, "mutate:", err)
		return 2
	}
	if o.list {
		for _, m := range ms {
			fmt.Fprintf(stdout, "%s\t%s\n", m, lineOf(src, m.Line))
		}
		return 0
	}
	cfg := mutate.Config{Dir: ".", Pkg: o.pkg, Run: o.run, Skip: o.skip, Timeout: o.timeout}
	if out, out2, err := mutate.Test(ctx, cfg, o.file, src); err != nil || out != mutate.Survived {
		fmt.Fprintf(stderr, "mutate: the unmutated package does not pass (%s %v):\n%s", out, err, out2)
		return 1
	}
	var caught, total, invalid int
	for _, m := range ms {
		out, log, err := mutate.Test(ctx, cfg, o.file, m.Apply(src))
		if err != nil {
			fmt.Fprintln(stderr, "mutate:", err)
			return 1
		}
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "mutate: interrupted")
			return 1
		}
		switch out {
		case mutate.Invalid:
			invalid++
		case mutate.Caught:
			caught++
			total++
		case mutate.Survived:
			total++
		}
		fmt.Fprintf(stdout, "%-8s %s:%d %s\t%s\n", out, o.file, m.Line, m.Op, lineOf(src, m.Line))
		if out == mutate.Survived && o.verbose {
			fmt.Fprint(stdout, log)
		}
	}
	pct := 0.0
	if total > 0 {
		pct = 100 * float64(caught) / float64(total)
	}
	fmt.Fprintf(stdout, "%s: caught %d/%d (%.0f%%), %d invalid\n", o.file, caught, total, pct, invalid)
	return 0
}

// mutants reads the file and selects its mutants as the flags say.
func (o *options) mutants() ([]mutate.Mutant, []byte, error) {
	if o.file == "" {
		return nil, nil, errors.New("-file is required")
	}
	if strings.HasSuffix(o.file, "_test.go") {
		return nil, nil, fmt.Errorf("-file %s: mutate production code, not tests", o.file)
	}
	if o.pkg == "" {
		o.pkg = "./" + filepath.Dir(o.file)
	}
	src, err := os.ReadFile(o.file)
	if err != nil {
		return nil, nil, err
	}
	ms, err := mutate.Mutants(o.file, src)
	if err != nil {
		return nil, nil, err
	}
	lo, hi := 0, int(^uint(0)>>1)
	if o.lines != "" {
		a, b, ok := strings.Cut(o.lines, "-")
		var e1, e2 error
		lo, e1 = strconv.Atoi(a)
		hi, e2 = strconv.Atoi(b)
		if !ok || e1 != nil || e2 != nil {
			return nil, nil, fmt.Errorf("-lines %q: want FROM-TO", o.lines)
		}
	}
	var ids []int
	if o.only != "" {
		for s := range strings.SplitSeq(o.only, ",") {
			id, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return nil, nil, fmt.Errorf("-only %q: want IDs separated by commas", o.only)
			}
			ids = append(ids, id)
		}
	}
	ms = slices.DeleteFunc(ms, func(m mutate.Mutant) bool {
		return m.Line < lo || m.Line > hi || (ids != nil && !slices.Contains(ids, m.ID))
	})
	return ms, src, nil
}

func lineOf(src []byte, n int) string {
	lines := strings.Split(string(src), "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	return strings.TrimSpace(lines[n-1])
}
