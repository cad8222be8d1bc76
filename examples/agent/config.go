package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/streamrules/streamrules/rulesdb"
)

// Config is the whole configuration of the demo, read from the environment with
// github.com/caarlos0/env/v11. Each field's `usage` tag is what --help prints (and what
// the README's configuration table says); `envDefault` is its default.
type Config struct {
	DSN                string            `env:"STREAMRULES_DSN" usage:"where the rules live: postgres://user:pass@host:5432/db?sslmode=disable, sqlite:PATH or file:PATH; empty: the embedded SQLite file STREAMRULES_SQLITE_PATH"`
	SQLitePath         string            `env:"STREAMRULES_SQLITE_PATH" envDefault:"streamrules-demo.db" usage:"the SQLite file used when STREAMRULES_DSN is empty"`
	ToolResultMaxChars int               `env:"STREAMRULES_TOOL_RESULT_MAX_CHARS" envDefault:"20000" usage:"cap on a tool's output in the prompt, in characters (the rule's text is not counted); 0: no cap"`
	MaxRetries         int               `env:"STREAMRULES_MAX_RETRIES" envDefault:"1" usage:"how many answers a move may discard and replay; 0: never replay, a miss only reminds"`
	StatsAddr          string            `env:"STREAMRULES_STATS_ADDR" usage:"host:port to serve GET /v1/stats and GET /metrics (Prometheus) on while the demo runs, e.g. 127.0.0.1:8080; empty: no server"`
	Shadow             bool              `env:"STREAMRULES_SHADOW" envDefault:"false" usage:"true: every rule in shadow: evaluated and counted as would-fires, nothing reminded or discarded"`
	StatRetention      rulesdb.Retention `env:"STREAMRULES_STAT_RETENTION" usage:"how long raw stat rows are kept, e.g. 90d or 36h; the per-rule counters are kept forever; empty: keep forever"`
	LogLevel           slog.Level        `env:"STREAMRULES_LOG_LEVEL" envDefault:"warn" usage:"debug, info, warn or error; info shows the \"stream rule fired\" lines on stderr"`
	OpenAIAPIKey       string            `env:"OPENAI_API_KEY" usage:"API key for -live; may stay empty when OPENAI_BASE_URL names a local server that needs none"`
	OpenAIBaseURL      string            `env:"OPENAI_BASE_URL" usage:"OpenAI-compatible endpoint for -live, e.g. http://localhost:11434/v1 (Ollama); empty: https://api.openai.com/v1"`
	OpenAIModel        string            `env:"OPENAI_MODEL" envDefault:"gpt-4o-mini" usage:"model name for -live"`
	EarlyInterrupt     bool              `env:"STREAMRULES_EARLY_INTERRUPT" usage:"true: cut a held answer at the first certain miss of any text rule, not only of rules marked early"`
	CallTimeout        time.Duration     `env:"STREAMRULES_CALL_TIMEOUT" usage:"bound on each model request, e.g. 2m; empty or 0: no bound"`
	CallRetries        int               `env:"STREAMRULES_CALL_RETRIES" usage:"how often a model request that timed out, lost its connection or got 429/5xx is made again (never once the client saw a chunk of it); 0: never"`
	RetryDelay         time.Duration     `env:"STREAMRULES_RETRY_DELAY" usage:"wait before the first retry of a model request; it doubles with each retry, with jitter; a Retry-After header replaces it; empty or 0: 1s"`
	RetryMaxDelay      time.Duration     `env:"STREAMRULES_RETRY_MAX_DELAY" usage:"cap on that wait; a Retry-After longer than it is not retried; empty or 0: 30s"`
	Heartbeat          time.Duration     `env:"STREAMRULES_HEARTBEAT" usage:"while a model request runs, print a progress line this often, e.g. 30s; empty or 0: never"`
	TracesExporter     string            `env:"OTEL_TRACES_EXPORTER" usage:"console: print each span (a move, its model and tool calls, an event per firing) as JSON on stderr; otlp: send them over OTLP/HTTP; none or empty: no tracing"`
	OTLPEndpoint       string            `env:"OTEL_EXPORTER_OTLP_ENDPOINT" usage:"OTLP/HTTP endpoint, e.g. http://localhost:4318; set alone, it turns tracing on (otlp)"`
	ServiceName        string            `env:"OTEL_SERVICE_NAME" envDefault:"streamrules-demo" usage:"the service name on the spans"`
	TranscriptPath     string            `env:"STREAMRULES_TRANSCRIPT" envDefault:"streamrules-demo.jsonl" usage:"the JSON Lines file each move is appended to, for streamrules replay; off: none"`
	ReminderBudget     int               `env:"STREAMRULES_REMINDER_BUDGET" usage:"characters of rule text the reminders of one tour may add; past it a reminder is a short manifest block the model reads with stream_rule_read; 0: no budget"`
}

// configError is a bad configuration value. Its message names the variable.
type configError struct {
	Var string
	Msg string
}

func (e *configError) Error() string { return e.Var + ": " + e.Msg }

// variable describes one environment variable of Config, for --help and for errors.
type variable struct {
	Name, Default, Usage, Field string
}

// variables lists Config's environment variables in field order.
func variables() []variable {
	t := reflect.TypeFor[Config]()
	out := make([]variable, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
		out = append(out, variable{Name: name, Default: f.Tag.Get("envDefault"), Usage: f.Tag.Get("usage"), Field: f.Name})
	}
	return out
}

// parseConfig reads the configuration through getenv and checks every value.
// The error is a *configError naming the first bad variable.
func parseConfig(getenv func(string) string) (Config, error) {
	vars := variables()
	environ := map[string]string{}
	for _, v := range vars {
		if val := getenv(v.Name); val != "" {
			environ[v.Name] = val
		}
	}
	var cfg Config
	if err := env.ParseWithOptions(&cfg, env.Options{Environment: environ}); err != nil {
		return Config{}, envError(err, vars, environ)
	}
	if err := cfg.check(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// envError maps env/v11's error (which names the Go field) back to the variable.
func envError(err error, vars []variable, environ map[string]string) error {
	var pe env.ParseError
	if !errors.As(err, &pe) {
		return err
	}
	for _, v := range vars {
		if v.Field != pe.Name {
			continue
		}
		cause := pe.Err
		var ne *strconv.NumError
		if errors.As(cause, &ne) {
			if errors.Is(ne.Err, strconv.ErrRange) {
				cause = errors.New("out of range")
			} else {
				cause = errors.New("not an integer")
			}
		}
		switch v.Name {
		case "STREAMRULES_LOG_LEVEL":
			cause = errors.New("want debug, info, warn or error")
		case "STREAMRULES_SHADOW":
			cause = errors.New("want true or false")
		case "STREAMRULES_STAT_RETENTION":
			cause = errors.New("want a number of days (90d), a duration (36h) or 0")
		}
		return &configError{Var: v.Name, Msg: fmt.Sprintf("%q is not valid: %v", environ[v.Name], cause)}
	}
	return err
}

// check validates what the types alone do not.
func (c *Config) check() error {
	if c.ToolResultMaxChars < 0 {
		return &configError{"STREAMRULES_TOOL_RESULT_MAX_CHARS", fmt.Sprintf("%d is negative: use 0 for no cap, or a positive number of characters", c.ToolResultMaxChars)}
	}
	if c.MaxRetries < 0 {
		return &configError{"STREAMRULES_MAX_RETRIES", fmt.Sprintf("%d is negative: use 0 to never replay, or a positive number of replays per move", c.MaxRetries)}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"STREAMRULES_CALL_TIMEOUT", c.CallTimeout}, {"STREAMRULES_RETRY_DELAY", c.RetryDelay}, {"STREAMRULES_RETRY_MAX_DELAY", c.RetryMaxDelay}, {"STREAMRULES_HEARTBEAT", c.Heartbeat}} {
		if d.v < 0 {
			return &configError{d.name, fmt.Sprintf("%s is negative: use 0 for none, or a duration such as 30s", d.v)}
		}
	}
	if c.ReminderBudget < 0 {
		return &configError{"STREAMRULES_REMINDER_BUDGET", fmt.Sprintf("%d is negative: use 0 for no budget, or a positive number of characters", c.ReminderBudget)}
	}
	if c.CallRetries < 0 {
		return &configError{"STREAMRULES_CALL_RETRIES", fmt.Sprintf("%d is negative: use 0 for no retry", c.CallRetries)}
	}
	if err := checkDSN(c.DSN, c.SQLitePath); err != nil {
		return &configError{"STREAMRULES_DSN", err.Error()}
	}
	if c.StatsAddr != "" {
		if _, _, err := net.SplitHostPort(c.StatsAddr); err != nil {
			return &configError{"STREAMRULES_STATS_ADDR", fmt.Sprintf("%q is not host:port (e.g. 127.0.0.1:8080)", c.StatsAddr)}
		}
	}
	if c.OpenAIBaseURL != "" {
		u, err := url.Parse(c.OpenAIBaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return &configError{"OPENAI_BASE_URL", fmt.Sprintf("%q is not an http(s) URL (e.g. http://localhost:11434/v1)", c.OpenAIBaseURL)}
		}
	}
	return nil
}

// checkDSN asks rulesdb, which opens the store, whether it can place the DSN: one
// checker, so the demo accepts exactly what rulesdb.Open does. rulesdb's message never
// quotes the DSN (it may hold a password); its "rulesdb: " prefix is dropped, since the
// message goes out under the variable's name.
func checkDSN(dsn, sqlitePath string) error {
	_, err := rulesdb.Describe(dsn, sqlitePath)
	if err == nil {
		return nil
	}
	msg := strings.TrimPrefix(err.Error(), "rulesdb: ")
	if errors.Is(err, rulesdb.ErrUnknownScheme) {
		msg += "; empty means the SQLite file STREAMRULES_SQLITE_PATH"
	}
	return errors.New(msg)
}

// printVariables writes the environment part of --help, in the style of flag.PrintDefaults.
func printVariables(w io.Writer) {
	for _, v := range variables() {
		def := v.Default
		if def == "" {
			def = "empty"
		}
		fmt.Fprintf(w, "  %s (default: %s)\n    \t%s\n", v.Name, def, v.Usage)
	}
}
