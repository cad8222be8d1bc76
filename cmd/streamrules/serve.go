package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/console"
	"github.com/streamrules/streamrules/gateway"
	"github.com/streamrules/streamrules/metrics"
	"github.com/streamrules/streamrules/seeds"
	"github.com/streamrules/streamrules/statshttp"
)

func init() {
	commands = append(commands, &command{path: "serve", args: "--upstream URL [flags]",
		summary: "run the OpenAI-compatible gateway: stream rules for any client that can set a base URL",
		opts:    func() opts { return &serveCmd{} },
		about: `Serves POST /v1/chat/completions (streaming and not) and GET /v1/models in front of --upstream,
with the database's rules acting in between (package gateway), and GET /v1/stats and GET /metrics.
Identity: X-Streamrules-Chat, X-Streamrules-Env, X-Streamrules-Vars (never sent upstream).
Every flag may be given by its environment variable instead; the flag wins.
Without --keys the gateway has no authentication, and refuses to listen beyond loopback.
--console also serves the rules console at /console/ on the same listener, over the same
database and engine: an edit there rules the gateway's next request. The master logs in with
$` + console.EnvPassword + ` or a --keys key that may claim master; without either it refuses
to listen beyond loopback.
Behind several replicas, route by X-Streamrules-Chat: a move's open state lives in its replica.`})
}

// serveFlag is one flag of serve and the variable that stands in for it.
type serveFlag struct{ name, env string }

var serveFlags = []serveFlag{
	{"listen", "STREAMRULES_LISTEN"},
	{"upstream", "STREAMRULES_UPSTREAM"},
	{"keys", "STREAMRULES_KEYS"},
	{"upstream-key", "STREAMRULES_UPSTREAM_KEY"},
	{"upstream-timeout", "STREAMRULES_UPSTREAM_TIMEOUT"},
	{"max-body", "STREAMRULES_MAX_BODY"},
	{"idle-timeout", "STREAMRULES_IDLE_TIMEOUT"},
	{"console", "STREAMRULES_CONSOLE"},
}

type serveCmd struct {
	store   storeFlags
	fs      *flag.FlagSet
	listen  string
	up      string
	keys    string
	upKey   string
	timeout time.Duration
	maxBody int64
	idle    time.Duration
	console bool
}

func (o *serveCmd) flags(fs *flag.FlagSet) {
	o.fs = fs
	addStoreFlags(fs, &o.store, false)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8080", "the `ADDR` to listen on ($STREAMRULES_LISTEN)")
	fs.StringVar(&o.up, "upstream", "", "the provider's OpenAI-compatible base `URL`, e.g. https://api.openai.com/v1 ($STREAMRULES_UPSTREAM)")
	fs.StringVar(&o.keys, "keys", "", "gateway keys `FILE`: lines \"name key env1,env2\" (key or sha256:HEX; envs * or -) ($STREAMRULES_KEYS)")
	fs.StringVar(&o.upKey, "upstream-key", "", "the upstream's API `KEY`, sent in place of the client's Authorization; never logged ($STREAMRULES_UPSTREAM_KEY)")
	fs.DurationVar(&o.timeout, "upstream-timeout", 0, "bound on the wait for the upstream's headers and each next chunk; 0: none ($STREAMRULES_UPSTREAM_TIMEOUT)")
	fs.Int64Var(&o.maxBody, "max-body", gateway.DefaultMaxBody, "largest request body in `BYTES`, else 413 ($STREAMRULES_MAX_BODY)")
	fs.DurationVar(&o.idle, "idle-timeout", gateway.DefaultIdleTimeout, "a move with no next tour for this long is ended unanswered ($STREAMRULES_IDLE_TIMEOUT)")
	fs.BoolVar(&o.console, "console", false, "also serve the rules console at /console/; the master logs in with $"+console.EnvPassword+" or a key that may claim master ($STREAMRULES_CONSOLE)")
}

// fromEnv sets every flag not given from its environment variable.
func (o *serveCmd) fromEnv(getenv func(string) string) error {
	set := map[string]bool{}
	o.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, f := range serveFlags {
		if set[f.name] {
			continue
		}
		if v := getenv(f.env); v != "" {
			if err := o.fs.Set(f.name, v); err != nil {
				return usagef("%s: %q is not valid: %v", f.env, v, err)
			}
		}
	}
	return nil
}

func (o *serveCmd) validate(args []string) error {
	if len(args) > 0 {
		return usagef("serve takes no arguments, got %q", strings.Join(args, " "))
	}
	return nil
}

// loopback reports whether addr listens on loopback only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// check reads the flags' variables and checks them; it returns the gateway keys and, with
// --console, the console's Config.
func (o *serveCmd) check(e *proc) (*gateway.Keys, *console.Config, error) {
	if err := o.fromEnv(e.getenv); err != nil {
		return nil, nil, err
	}
	if o.up == "" {
		return nil, nil, usagef("serve: --upstream (or STREAMRULES_UPSTREAM) is required: the provider's base URL, e.g. https://api.openai.com/v1")
	}
	if !strings.HasPrefix(o.up, "http://") && !strings.HasPrefix(o.up, "https://") {
		return nil, nil, usagef("serve: --upstream %q must be an http:// or https:// URL", o.up)
	}
	if o.maxBody <= 0 || o.timeout < 0 || o.idle <= 0 {
		return nil, nil, usagef("serve: --max-body and --idle-timeout must be positive, --upstream-timeout not negative")
	}
	var keys *gateway.Keys
	if o.keys != "" {
		var err error
		if keys, err = readKeys("serve", o.keys); err != nil {
			return nil, nil, err
		}
		if o.upKey == "" {
			return nil, nil, usagef("serve: with --keys the client's bearer is its gateway key: set --upstream-key (or STREAMRULES_UPSTREAM_KEY)")
		}
	} else if !loopback(o.listen) {
		return nil, nil, usagef("serve: --listen %s is not a loopback address, and without --keys the gateway has no authentication: give --keys FILE, or listen on 127.0.0.1", o.listen)
	}
	if !o.console {
		return keys, nil, nil
	}
	cc := &console.Config{Password: e.getenv(console.EnvPassword)}
	if keys != nil {
		cc.Keys = keys // never a typed nil: CheckListen and the login ask it
	}
	if err := console.CheckListen(o.listen, cc); err != nil {
		return nil, nil, usagef("serve --console: %v", err)
	}
	return keys, cc, nil
}

func (o *serveCmd) run(ctx context.Context, e *proc) error {
	keys, cc, err := o.check(e)
	if err != nil {
		return err
	}
	store, scfg, err := e.open(ctx, o.store)
	if err != nil {
		return err
	}
	defer store.Close()
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	col := metrics.NewCollector(&metrics.Config{StoreStats: func() metrics.StoreStats { return metrics.StoreStats(store.Stats()) }})
	eng, err := streamrules.New(ctx, store, col.Instrument(&streamrules.Config{Logger: log, Environments: scfg.Environments}))
	if err != nil {
		return err
	}
	defer eng.Close()
	gw, err := gateway.New(eng, &gateway.Config{Upstream: o.up, UpstreamKey: o.upKey, UpstreamTimeout: o.timeout,
		MaxBody: o.maxBody, IdleTimeout: o.idle, Keys: keys, Logger: log})
	if err != nil {
		return usagef("serve: %v", err)
	}
	defer gw.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(col)
	mux := http.NewServeMux()
	mux.Handle("/v1/stats", statshttp.Handler(eng))
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("/", gw)
	if cc != nil {
		// The console edits the store the engine reads: the store reloads its subscribers
		// as each edit commits, so the gateway's next request is judged by the edited rule.
		cc.Logger = log
		h, err := console.New(store, eng, cc)
		if err != nil {
			return err
		}
		mux.Handle(console.Prefix, h)
		mux.Handle("/console", h)
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("serve: --listen: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	auth := "no gateway keys: listening on loopback only; clients' Authorization goes upstream"
	if keys != nil {
		auth = "gateway keys: " + strconv.Itoa(keys.Len()) + " from " + o.keys
	} else if o.upKey != "" {
		auth = "no gateway keys: listening on loopback only; upstream key from --upstream-key"
	}
	fmt.Fprintf(e.stderr, "streamrules serve: listening on http://%s (upstream %s, database %s, %d rules)\n%s\n",
		ln.Addr(), o.up, e.about(o.store), len(eng.Rules()), auth)
	if cc != nil {
		fmt.Fprintf(e.stderr, "console: http://%s%s (%s)\n", ln.Addr(), console.Prefix, consoleLogins(cc))
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(e.stderr, "streamrules serve: stopped")
	return nil
}

// consoleLogins says who may log in to the console serve runs.
func consoleLogins(cc *console.Config) string {
	var ways []string
	if cc.Password != "" {
		ways = append(ways, "$"+console.EnvPassword)
	}
	if cc.Keys != nil && cc.Keys.Claimable(seeds.EnvMaster) {
		ways = append(ways, "gateway keys that may claim master")
	}
	if len(ways) == 0 {
		return "nobody can log in: it only reads, on loopback only"
	}
	return "the master logs in with " + strings.Join(ways, " or ")
}

// readKeys reads a gateway keys file for command cmd's --keys.
func readKeys(cmd, path string) (*gateway.Keys, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("%s: --keys: %v", cmd, err)
	}
	defer f.Close()
	keys, err := gateway.ParseKeys(f)
	if err != nil {
		return nil, usagef("%s: --keys %s: %v", cmd, path, err)
	}
	return keys, nil
}
