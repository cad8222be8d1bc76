package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/replay"
	"github.com/streamrules/streamrules/tracing"
)

func init() {
	commands = append(commands, &command{
		path:    "replay",
		args:    "--rules FILE | --from-db [--json] [--trace] TRANSCRIPT.jsonl…",
		summary: "backtest rules on past chats: how often each would have fired, and on what",
		about: `Each transcript is JSON Lines, one move per line (see package replay):

  {"chat":"tg-7","move":12,"env":["telegram"],"tools":[{"name":"shell","args":"{\"cmd\":\"df -h\"}"}],"answer":"…"}

The moves run through the real engine, in order per chat, so the repeat policies apply as
they would have. Every rule is replayed as if enabled and enforced. "-" reads stdin.
On a terminal a progress bar shows on stderr; a one-line summary always does.

--trace makes the OpenTelemetry spans the guard makes live: a span streamrules.move per
replayed move, with a gen_ai.guardrail.result event per would-fire, and a span
execute_tool NAME per tool call. OTEL_TRACES_EXPORTER=console (the default) writes each
span as one line of JSON on stderr as it ends, before the summary; otlp, or
OTEL_EXPORTER_OTLP_ENDPOINT alone, sends them over OTLP/HTTP. OTEL_SERVICE_NAME names
the service (default streamrules-replay).`,
		opts: func() opts { return &replayCmd{} },
	})
}

// replayCmd is replay --rules FILE|--from-db [--json] TRANSCRIPT.jsonl….
type replayCmd struct {
	o         storeFlags
	rulesFile string
	fromDB    bool
	trace     bool
	args      []string
}

func (c *replayCmd) flags(fs *flag.FlagSet) {
	addStoreFlags(fs, &c.o, true)
	fs.StringVar(&c.rulesFile, "rules", "", "the rule `FILE` to test (a set, YAML or JSON)")
	fs.BoolVar(&c.fromDB, "from-db", false, "test the database's rules")
	fs.BoolVar(&c.trace, "trace", false, "make a span per move, an event per would-fire (OTEL_TRACES_EXPORTER: console on stderr, or otlp)")
}

func (c *replayCmd) validate(args []string) error {
	switch {
	case (c.rulesFile == "") == !c.fromDB:
		return usagef("replay takes --rules FILE or --from-db (one of them)")
	case len(args) == 0:
		return usagef("replay takes one or more TRANSCRIPT.jsonl files")
	}
	c.args = args
	return nil
}

func (c *replayCmd) run(ctx context.Context, e *proc) error {
	o, rulesFile, args := c.o, c.rulesFile, c.args
	cfg, err := e.config()
	if err != nil {
		return err
	}
	var rules []streamrules.Rule
	if rulesFile != "" {
		set, err := loadRules(rulesFile, cfg.Environments) // a set, or one rule as rules show writes it
		if err != nil {
			return err
		}
		rules = set.Rules
	} else {
		store, _, err := e.open(ctx, o)
		if err != nil {
			return err
		}
		rules, err = store.ListRules(ctx)
		store.Close()
		if err != nil {
			return err
		}
	}
	// Open every transcript first: a missing file is a usage error before any work.
	sources := make([]replay.Source, len(args))
	var total int64
	for i, path := range args {
		if path == "-" {
			sources[i] = replay.Source{Name: "stdin", R: e.stdin}
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			return usagef("%v", err)
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil {
			total += st.Size()
		}
		sources[i] = replay.Source{Name: path, R: f}
	}
	opts := &replay.Options{Environments: cfg.Environments}
	var spans *traceExport
	if c.trace {
		if spans, err = e.openTracing(ctx, e.stderr); err != nil {
			return err
		}
		defer spans.tp.Shutdown(context.WithoutCancel(ctx)) // on the way out early; a second Shutdown does nothing
		opts.Tracer = tracing.New(spans.tp, nil)
	}
	var bar *progressbar.ProgressBar
	if isTerminal(e.stderr) && total > 0 && (spans == nil || !spans.console) { // no bar through the spans' lines
		bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(e.stderr),
			progressbar.OptionSetDescription("replaying"), progressbar.OptionShowBytes(true),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		var done int64 // bytes of the sources finished before this one
		file := ""
		var last int64
		opts.OnMove = func(p replay.Progress) {
			if p.File != file {
				done += last
				file = p.File
			}
			last = p.Bytes
			_ = bar.Set64(done + p.Bytes)
		}
	}
	start := time.Now()
	rep, err := replay.Run(ctx, rules, sources, opts)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	fired := 0
	for _, r := range rep.Rules {
		fired += r.Fired
	}
	if o.json {
		err = writeJSON(e.stdout, rep)
	} else {
		err = rep.WriteText(e.stdout)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "replayed %d moves from %s against %s in %s: %d would-fires\n",
		rep.Moves, plural(len(sources), "transcript"), plural(len(rep.Rules), "rule"),
		time.Since(start).Round(time.Millisecond), fired)
	if spans != nil {
		// The console's spans are out already, each written as it ended; an OTLP batch
		// goes now. A failure leaves the report as it is and exits 1.
		if err := spans.tp.Shutdown(ctx); err != nil {
			return fmt.Errorf("--trace: %w", err)
		}
	}
	return nil
}
