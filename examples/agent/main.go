// Command agent is the streamrules demo: a stock LangChainGo agent and executor wrapped
// with the streamrules middleware, on the rule store STREAMRULES_DSN names (an embedded
// SQLite file by default).
//
// Offline (the default) a scripted model plays a Telegram chat in which each of the eight
// seeded misses happens once, with real tools sandboxed to a temporary directory. The run
// prints, move by move, what the client saw and, apart, what the model was told, then the
// stats. Run it twice: the second run does not seed again, and the repeat policies (once,
// after:N) keep some rules silent.
//
//	go run ./examples/agent
//
// With -live it talks to a real model on an OpenAI-compatible endpoint, reading your
// messages from stdin:
//
//	OPENAI_API_KEY=sk-... go run ./examples/agent -live -env telegram,master
//
// go run ./examples/agent --help lists every flag and environment variable.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/memory"
	"github.com/tmc/langchaingo/prompts"
	"github.com/tmc/langchaingo/tools"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/clientview"
	"github.com/streamrules/streamrules/internal/scripted"
	"github.com/streamrules/streamrules/metrics"
	"github.com/streamrules/streamrules/middleware"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/ruletools"
	"github.com/streamrules/streamrules/seeds"
	"github.com/streamrules/streamrules/statshttp"
	"github.com/streamrules/streamrules/tracing"
)

const progName = "streamrules-demo"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the command-line flags.
type options struct {
	live bool
	env  []string
	chat string
}

// run is the whole program: 0 on success, 1 on a failure while running, 2 on a usage or
// configuration error (one line on stderr naming what to fix).
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, err := parseFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		printUsage(stdout)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", progName, err)
		return 2
	}
	cfg, err := parseConfig(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", progName, err)
		return 2
	}
	if opts.live && cfg.OpenAIAPIKey == "" && cfg.OpenAIBaseURL == "" {
		fmt.Fprintf(stderr, "%s: -live needs a model: set OPENAI_API_KEY (model OPENAI_MODEL, default gpt-4o-mini), "+
			"or OPENAI_BASE_URL for an OpenAI-compatible server such as Ollama (http://localhost:11434/v1)\n", progName)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	if opts.live {
		err = runLive(ctx, cfg, opts, log, stdin, stdout)
	} else {
		_, err = runOffline(ctx, cfg, opts.chat, log, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", progName, err)
		return 1
	}
	return 0
}

func newFlagSet(opts *options, env *string) *flag.FlagSet {
	fs := flag.NewFlagSet(progName, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.BoolVar(&opts.live, "live", false, "talk to a real model (OPENAI_*), interactively: each line on stdin is a move")
	fs.StringVar(env, "env", "telegram", "with -live: the environments of every move, comma-separated (telegram, client_ops, master, picture); master adds the rule-editing tools")
	fs.StringVar(&opts.chat, "chat", "", `the chat ID whose moves the repeat policies count (default "demo", with -live "live")`)
	return fs
}

func parseFlags(args []string) (options, error) {
	var opts options
	var env string
	fs := newFlagSet(&opts, &env)
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	if fs.NArg() > 0 {
		return opts, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	envSet := false
	fs.Visit(func(f *flag.Flag) { envSet = envSet || f.Name == "env" })
	if envSet && !opts.live {
		return opts, errors.New("-env sets the environments of -live moves; the offline session sets its own")
	}
	for _, name := range strings.Split(env, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(streamrules.BuiltinEnvironments, name) {
			return opts, fmt.Errorf("-env: unknown environment %q (known: %s)", name, strings.Join(streamrules.BuiltinEnvironments, ", "))
		}
		if !slices.Contains(opts.env, name) {
			opts.env = append(opts.env, name)
		}
	}
	if opts.chat == "" {
		opts.chat = "demo"
		if opts.live {
			opts.chat = "live"
		}
	}
	return opts, nil
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, `Usage: go run ./examples/agent [-live [-env telegram,master]] [-chat ID]

Stream rules on a stock LangChainGo agent. Without -live, a scripted model plays a
Telegram chat in which each of the nine seeded misses happens once, and the run prints
what the client saw, what the model was told, and the stats. Run it twice on the same
database to see the repeat policies (once, after:N) at work.

Flags:
`)
	var opts options
	var env string
	fs := newFlagSet(&opts, &env)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprintf(w, "\nEnvironment variables:\n")
	printVariables(w)
}

// rig is the demo's wiring: the store, the engine, the guard around a stock executor,
// the sandboxed tools and the transcript. The offline session and -live share it.
type rig struct {
	log   *slog.Logger
	w     io.Writer
	store *rulesdb.Store
	eng   *streamrules.Engine
	box   *sandbox
	tr    *transcript
	model *tap // below the guard: every prompt the model received
	exec  *agents.Executor
	guard *middleware.Guard
	chat  string
	// bounds are the model call's runtime boundaries from the configuration.
	bounds middleware.Config

	moves *sessionLog // the guard's transcript recorder: the file, and the last move for the notes

	metrics   *metrics.Collector       // served at /metrics beside /v1/stats
	traces    *sdktrace.TracerProvider // OTEL_TRACES_EXPORTER; nil: no tracing
	modelName string                   // the model's name on the spans
	stopStats func()
	closeOnce sync.Once
	closeErr  error
}

// openRig opens the store (seeding it once per database life), the engine, the sandbox
// and, if configured, the stats server, and prints what it found.
func openRig(ctx context.Context, cfg Config, chat string, log *slog.Logger, w io.Writer) (_ *rig, err error) {
	r := &rig{log: log, w: w, chat: chat, tr: newTranscript(w), stopStats: func() {}}
	r.bounds = middleware.Config{CallTimeout: cfg.CallTimeout, CallRetries: cfg.CallRetries,
		RetryDelay: cfg.RetryDelay, RetryMaxDelay: cfg.RetryMaxDelay, Heartbeat: cfg.Heartbeat,
		OnHeartbeat: func(_ context.Context, h middleware.Heartbeat) {
			// Warn, the default level: whoever set STREAMRULES_HEARTBEAT wants to see it.
			log.Warn("model call still running", "elapsed", h.Elapsed.Round(time.Second), "attempt", h.Attempt)
		}}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	set, err := seeds.Default()
	if err != nil {
		return nil, err
	}
	r.store, err = rulesdb.Open(ctx, cfg.DSN, &rulesdb.Config{DefaultSQLitePath: cfg.SQLitePath, StatRetention: cfg.StatRetention, Logger: log})
	if err != nil {
		return nil, openError(cfg, err)
	}
	fmt.Fprintf(w, "rule store: %s\n", describeStore(cfg))
	if r.moves, err = openSessionLog(cfg.TranscriptPath); err != nil {
		return nil, err
	}
	if r.moves.f != nil {
		fmt.Fprintf(w, "transcript: each move is appended to %s (STREAMRULES_TRANSCRIPT); backtest it with\n"+
			"  go run ./cmd/streamrules replay --rules seeds/seeds.json %s\n", cfg.TranscriptPath, cfg.TranscriptPath)
	}
	rep, err := r.store.Seed(ctx, set)
	if err != nil {
		return nil, err
	}
	printSeed(w, rep)

	retries := cfg.MaxRetries
	if retries == 0 {
		retries = -1 // the engine's "no replays"
	}
	if r.traces, err = openTracing(ctx, cfg, os.Stderr); err != nil { // console: beside the log, not in the transcript
		return nil, err
	}
	r.modelName = cfg.OpenAIModel
	store := r.store
	r.metrics = metrics.NewCollector(&metrics.Config{StoreStats: func() metrics.StoreStats { return metrics.StoreStats(store.Stats()) }})
	r.eng, err = streamrules.New(ctx, r.store, r.metrics.Instrument(&streamrules.Config{
		ToolResultMaxChars: cfg.ToolResultMaxChars,
		MaxRetriesPerMove:  retries,
		Shadow:             cfg.Shadow,
		Logger:             log,
		EarlyInterrupt:     cfg.EarlyInterrupt,
		ReminderBudget:     cfg.ReminderBudget,
	}))
	if err != nil {
		return nil, err
	}
	if r.box, err = newSandbox(); err != nil {
		return nil, err
	}
	if cfg.StatsAddr != "" {
		if err := r.serveStats(cfg.StatsAddr); err != nil {
			return nil, err
		}
	}
	state, err := r.store.LoadChat(ctx, chat)
	if err != nil {
		return nil, err
	}
	r.printChat(state)
	return r, nil
}

// wire builds the stock agent and executor around llm and ts, each wrapped by the guard.
// The tap sits below the guard's model wrapper, so it records what the model was told.
func (r *rig) wire(llm llms.Model, ts []tools.Tool) error {
	client := clientview.Clean(r.tr) // the client sees the clean view only
	bounds := r.bounds
	bounds.Callbacks = client
	bounds.Transcript = r.moves // every answered move, as the rules saw it
	if r.traces != nil {
		bounds.Tracer = tracing.New(r.traces, &tracing.Options{Model: r.modelName})
	}
	guard, err := middleware.New(r.eng, &bounds)
	if err != nil {
		return err
	}
	r.guard = guard
	r.model = &tap{Model: llm}
	mem := memory.NewConversationBuffer(memory.WithInputKey("input"), memory.WithOutputKey("output"))
	agent := agents.NewOpenAIFunctionsAgent(guard.Model(r.model), guard.Tools(ts...),
		agents.NewOpenAIOption().WithSystemMessage(systemPrompt),
		agents.NewOpenAIOption().WithExtraMessages([]prompts.MessageFormatter{history{mem}}),
	)
	// The guard hands the client handler to the executor too: one place to give it.
	r.exec = guard.Executor(agent, agents.WithMemory(mem), agents.WithMaxIterations(8))
	return nil
}

// history puts the chat's earlier messages into the OpenAI functions agent's prompt, as
// real user and assistant messages. (The executor hands its inputs over as strings, so
// the memory gives the prompt its buffer string; the messages are read here instead.)
type history struct{ mem *memory.ConversationBuffer }

// FormatMessages returns copies with system tags defused: the guard neutralises the
// agent's string inputs, but these messages bypass them, and a client must not pose as
// the system in a later move's prompt.
func (h history) FormatMessages(map[string]any) ([]llms.ChatMessage, error) {
	msgs, err := h.mem.ChatHistory.Messages(context.Background())
	if err != nil {
		return nil, err
	}
	out := make([]llms.ChatMessage, len(msgs))
	for i, m := range msgs {
		switch m := m.(type) {
		case llms.HumanChatMessage:
			m.Content = streamrules.Neutralize(m.Content)
			out[i] = m
		case llms.AIChatMessage:
			m.Content = streamrules.Neutralize(m.Content)
			out[i] = m
		default:
			out[i] = m
		}
	}
	return out, nil
}

func (h history) GetInputVariables() []string { return []string{h.mem.MemoryKey} }

// play runs one move: the user's message through the executor, inside the engine's move.
func (r *rig) play(ctx context.Context, from string, env []string, text string, photo bool) (string, error) {
	ctx, move := r.guard.BeginMove(ctx, r.chat, env...) // the engine's move, in a span when traced
	id := 100 + move.Number()
	move.SetVar("message_id", strconv.FormatInt(id, 10)) // for the tail's fix: ↩ #{{message_id}}
	r.tr.beginMove(move.Number(), id, from, env, text)
	before := r.model.count()
	out, err := chains.Call(ctx, r.exec, map[string]any{"input": header(id, from, photo) + text},
		chains.WithStreamingFunc(r.tr.stream))
	err = r.guard.EndMove(ctx, move, err)
	answer, _ := out["output"].(string)
	fired := move.Firings()
	// The chat's repeat-policy memory, for the notes. A rule silent in this move kept its
	// last firing, so reading it after the move's end is the same as before.
	state, lerr := r.store.LoadChat(ctx, r.chat)
	err = errors.Join(err, lerr)
	told := toldInMove(r.model.since(before))
	var notes []string
	if rec, ok := r.moves.take(); ok {
		var serr error
		notes, serr = silentRules(ctx, r.eng.Rules(), ranCalls(rec), fired, state.LastFired)
		err = errors.Join(err, serr)
	}
	calls := r.model.count() - before
	for _, f := range fired {
		switch {
		case f.Outcome == streamrules.OutcomeFixed:
			notes = append(notes, fixedNote(f, calls))
		case f.Mode == streamrules.ModeInterrupt && f.Retry && f.Tool != "":
			notes = append(notes, fmt.Sprintf("stopped: %s matched a %s call the response declared; the response was discarded before anything ran, and the replay cost one more model call (%d this move)", f.Rule, f.Tool, calls))
		case f.Outcome == streamrules.OutcomeRefused:
			notes = append(notes, fmt.Sprintf("refused: %s matched a %s call after the retry ceiling; the call never ran, its result says why", f.Rule, f.Tool))
		case f.Outcome == streamrules.OutcomeUnreadable:
			notes = append(notes, fmt.Sprintf("refused: %s could not read a %s call as a shell would, so it never ran; its result says why", f.Rule, f.Tool))
		case f.Thinking && f.Early:
			notes = append(notes, fmt.Sprintf("cut while thinking: %s matched the model's reasoning %d bytes in; the provider was stopped before the answer, and the replay cost one more model call (%d this move)", f.Rule, f.CutAtBytes, calls))
		case f.Mode == streamrules.ModeInterrupt && f.Retry:
			notes = append(notes, fmt.Sprintf("replayed: %s discarded the answer; the replay cost one more model call (%d this move)", f.Rule, calls))
		case f.Outcome == streamrules.OutcomeKept:
			notes = append(notes, fmt.Sprintf("kept: the answer missed %s after the retry ceiling (STREAMRULES_MAX_RETRIES), so it stayed; "+
				"the rule's reminder rides the next tool result of this move, if there is one", f.Rule))
		case f.Outcome == streamrules.OutcomeShadow:
			notes = append(notes, fmt.Sprintf("shadow: %s would have fired here (%s); it is only watched, so nothing was done", f.Rule, f.Mode))
		}
	}
	r.tr.endMove(answer, err, told, notes)
	return answer, err
}

// Close stops everything and removes the sandbox; only the database stays.
func (r *rig) Close() error {
	r.closeOnce.Do(func() {
		r.stopStats()
		if r.eng != nil {
			r.eng.Close()
		}
		var errs []error
		if r.store != nil {
			errs = append(errs, r.store.Close())
		}
		if r.box != nil {
			errs = append(errs, r.box.Close())
		}
		errs = append(errs, r.moves.Close())
		if r.traces != nil {
			errs = append(errs, r.traces.Shutdown(context.Background())) // flushes the spans
		}
		r.closeErr = errors.Join(errs...)
	})
	return r.closeErr
}

func (r *rig) serveStats(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("STREAMRULES_STATS_ADDR: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/stats", statshttp.Handler(r.eng))
	mux.Handle("/metrics", r.metricsHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.log.Error("stats server", "err", err)
		}
	}()
	r.stopStats = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}
	fmt.Fprintf(r.w, "stats: GET http://%s/v1/stats while this runs\n", ln.Addr())
	fmt.Fprintf(r.w, "metrics: GET http://%s/metrics (Prometheus)\n", ln.Addr())
	return nil
}

func (r *rig) printChat(state streamrules.ChatState) {
	if state.Moves == 0 {
		fmt.Fprintf(r.w, "chat %q: new\n", r.chat)
		return
	}
	fmt.Fprintf(r.w, "chat %q: %d moves already on this database; its repeat policies remember them:\n", r.chat, state.Moves)
	for _, rule := range r.eng.Rules() {
		last := state.LastFired[rule.Name]
		rep, _ := streamrules.ParseRepeat(rule.Repeat)
		switch {
		case last == 0 || rep.Kind == streamrules.RepeatEvery:
		case rep.Kind == streamrules.RepeatOnce:
			fmt.Fprintf(r.w, "  %s (repeat once) fired in move %d: silent in this chat from now on\n", rule.Name, last)
		case rep.Kind == streamrules.RepeatAfter:
			fmt.Fprintf(r.w, "  %s (repeat %s) last fired in move %d: may fire again from move %d\n", rule.Name, rule.Repeat, last, last+rep.Moves)
		}
	}
}

func printSeed(w io.Writer, rep rulesdb.SeedReport) {
	switch {
	case !rep.Applied:
		fmt.Fprintf(w, "seed: version %d was already there, nothing seeded (the seed runs once per database life)\n", rep.StoredVersion)
	case rep.StoredVersion == 0:
		fmt.Fprintf(w, "seed: seeded %d rules now (seed version %d): %s\n", len(rep.Added), rep.Version, strings.Join(rep.Added, ", "))
	default:
		fmt.Fprintf(w, "seed: calibrated from version %d to %d: added %v, updated %v, kept %v (edited by the master), deleted stay deleted %v\n",
			rep.StoredVersion, rep.Version, rep.Added, rep.Updated, rep.Kept, rep.Deleted)
	}
}

// describeStore names the store without the DSN's password (checkDSN passed already).
func describeStore(cfg Config) string {
	about, _ := rulesdb.Describe(cfg.DSN, cfg.SQLitePath)
	if cfg.DSN == "" {
		about += " (STREAMRULES_DSN is empty)"
	}
	return about
}

// runOffline plays the scripted session and prints it. It returns the transcript.
func runOffline(ctx context.Context, cfg Config, chat string, log *slog.Logger, w io.Writer) (*transcript, error) {
	r, err := openRig(ctx, cfg, chat, log, w)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	scenes := demoScenes()
	r.modelName = "scripted"
	// any move reads a manifest rule
	if err := r.wire(scripted.NewFunc(brain(scenes)), append(r.box.Tools(), ruletools.Reader(r.eng))); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "offline session: a scripted model; real tools in the sandbox folder %s, removed at exit\n", r.box.dir)
	for _, s := range scenes {
		if _, err := r.play(ctx, s.from, s.env, s.text, s.photo); err != nil {
			return r.tr, fmt.Errorf("move %q: %w", s.text, err)
		}
	}
	if err := r.printStats(ctx); err != nil {
		return r.tr, err
	}
	return r.tr, r.Close()
}

// fixedNote explains a miss repaired in place by the rule's fix: no replay, and what changed.
func fixedNote(f streamrules.Firing, calls int) string {
	changes := make([]string, len(f.Diff))
	for i, c := range f.Diff {
		changes[i] = c.String()
	}
	return fmt.Sprintf("fixed: %s repaired the answer in place, 0 extra model calls (%d this move); diff: %s",
		f.Rule, calls, strings.Join(changes, "; "))
}
