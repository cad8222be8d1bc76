// Command mutate measures how many one-line changes to a Go file the package's tests
// catch. From the module root:
//
//	go run ./internal/mutate/cmd/mutate -file judge.go
//	go run ./internal/mutate/cmd/mutate -file middleware/model.go -run 'Guard|Held' -lines 100-200
//	go run ./internal/mutate/cmd/mutate -file rulesdb/queue.go -list
//	go run ./internal/mutate/cmd/mutate -table internal/mutate/testdata/regressions.tsv -name queue
//
// Each mutant (see [mutate.Mutants] for the operators) is built through go test's -overlay,
// so the file on disk is never written and an interrupted run leaves nothing behind. The
// unmutated package is tested first; a run whose baseline fails stops there. Output is one
// line per mutant, survivors in capitals, then "file: caught C/T (P%), I invalid": a mutant
// that does not build is left out of T. With -table, the mutants are the rows of a table
// (see [mutate.ParseTable]), each tested on its own file's package.
//
// The run costs one package test per mutant, minutes to hours: it is not part of
// go test ./... and not of .ci/run. Narrow it with -run, -skip, -lines, -only or -sample.
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
	"regexp"
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
	table, name                       string
	sample                            int
	timeout                           time.Duration
	list, verbose                     bool
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.file, "file", "", "the Go file to mutate, relative to the module root")
	fs.StringVar(&o.table, "table", "", "a table of hand-written mutants, instead of -file")
	fs.StringVar(&o.name, "name", "", "with -table: only rows whose name matches this regexp")
	fs.StringVar(&o.pkg, "pkg", "", "the package to test (default: the file's directory)")
	fs.StringVar(&o.run, "run", "", "go test -run for every mutant")
	fs.StringVar(&o.skip, "skip", "", "go test -skip for every mutant")
	fs.StringVar(&o.lines, "lines", "", "only mutants on these lines, e.g. 120-180")
	fs.StringVar(&o.only, "only", "", "only these mutant IDs, comma-separated (see -list)")
	fs.IntVar(&o.sample, "sample", 0, "test about this many mutants, evenly spread over the file (0: all)")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "go test -timeout per mutant")
	fs.BoolVar(&o.list, "list", false, "list the mutants and stop")
	fs.BoolVar(&o.verbose, "v", false, "print go test's output for survivors")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	jobs, err := o.jobs()
	if err != nil {
		fmt.Fprintln(stderr, "mutate:", err)
		return 2
	}
	if o.list {
		for _, j := range jobs {
			fmt.Fprintf(stdout, "#%d %s:%d %s\t%s\n", j.m.ID, j.file, j.m.Line, j.m.Op, lineOf(j.src, j.m.Line))
		}
		return 0
	}
	passed := map[string]bool{}
	var caught, total, invalid int
	for _, j := range jobs {
		cfg := mutate.Config{Dir: ".", Pkg: j.pkg, Run: o.run, Skip: o.skip, Timeout: o.timeout}
		if !passed[j.pkg] {
			if out, log, err := mutate.Test(ctx, cfg, j.file, j.src); err != nil || out != mutate.Survived {
				fmt.Fprintf(stderr, "mutate: %s does not pass unmutated (%s %v):\n%s", j.pkg, out, err, log)
				return 1
			}
			passed[j.pkg] = true
		}
		m := j.m
		out, log, err := mutate.Test(ctx, cfg, j.file, m.Apply(j.src))
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
		fmt.Fprintf(stdout, "%-8s %s:%d %s\t%s\n", out, j.file, m.Line, m.Op, lineOf(j.src, m.Line))
		if out == mutate.Survived && o.verbose {
			fmt.Fprint(stdout, log)
		}
	}
	pct := 0.0
	if total > 0 {
		pct = 100 * float64(caught) / float64(total)
	}
	what := o.file
	if o.table != "" {
		what = o.table
	}
	fmt.Fprintf(stdout, "%s: caught %d/%d (%.0f%%), %d invalid\n", what, caught, total, pct, invalid)
	return 0
}

// job is one mutant to test: of file, whose text is src, on the package pkg.
type job struct {
	file, pkg string
	src       []byte
	m         mutate.Mutant
}

// jobs returns the mutants the flags select.
func (o *options) jobs() ([]job, error) {
	if (o.file == "") == (o.table == "") {
		return nil, errors.New("give -file or -table")
	}
	if o.table != "" {
		return o.tableJobs()
	}
	ms, src, err := o.mutants()
	if err != nil {
		return nil, err
	}
	jobs := make([]job, len(ms))
	for i, m := range ms {
		jobs[i] = job{o.file, o.pkg, src, m}
	}
	return jobs, nil
}

func (o *options) tableJobs() ([]job, error) {
	f, err := os.Open(o.table)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := mutate.ParseTable(f)
	if err != nil {
		return nil, err
	}
	name, err := regexp.Compile(o.name)
	if err != nil {
		return nil, fmt.Errorf("-name: %w", err)
	}
	var jobs []job
	for i, r := range rows {
		if !name.MatchString(r.Name) {
			continue
		}
		src, err := os.ReadFile(r.File)
		if err != nil {
			return nil, err
		}
		m, err := r.Mutant(src)
		if err != nil {
			return nil, err
		}
		m.ID = i + 1
		pkg := o.pkg
		if pkg == "" {
			pkg = "./" + filepath.Dir(r.File)
		}
		jobs = append(jobs, job{r.File, pkg, src, m})
	}
	return jobs, nil
}

// mutants reads the file and selects its mutants as the flags say.
func (o *options) mutants() ([]mutate.Mutant, []byte, error) {
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
	if o.sample > 0 && len(ms) > o.sample {
		// Every k-th, from a fixed start: the same sample on every run of an unchanged file.
		k := (len(ms) + o.sample - 1) / o.sample
		var picked []mutate.Mutant
		for i := k / 2; i < len(ms); i += k {
			picked = append(picked, ms[i])
		}
		ms = picked
	}
	return ms, src, nil
}

func lineOf(src []byte, n int) string {
	lines := strings.Split(string(src), "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	return strings.TrimSpace(lines[n-1])
}
