package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/console"
)

// envConsoleListen is --listen's variable.
const envConsoleListen = "STREAMRULES_CONSOLE_LISTEN"

func init() {
	commands = append(commands, &command{
		path: "console", args: "[--listen ADDR] [--dsn DSN] [--keys FILE]",
		summary: "serve the rules console (web pages) over the database",
		about: "The pages are at http://ADDR/console/. The master logs in with the password in $" + console.EnvPassword +
			"\n(never a flag: argv is visible to every user of the machine), or with a gateway key (--keys, as serve's)" +
			"\nthat may claim master. Without either the console only reads, and it refuses to listen on an" +
			"\naddress other than a loopback one. `streamrules serve --console` serves it beside the gateway.",
		opts: func() opts { return &consoleCmd{} },
	})
}

type consoleCmd struct {
	store  storeFlags
	listen string
	keys   string
}

func (c *consoleCmd) flags(fs *flag.FlagSet) {
	addStoreFlags(fs, &c.store, false)
	fs.StringVar(&c.listen, "listen", "", "the `ADDR` to serve on (default $"+envConsoleListen+", else 127.0.0.1:8080)")
	fs.StringVar(&c.keys, "keys", "", "gateway keys `FILE`, as serve's: a key that may claim master logs in as the master (default $STREAMRULES_KEYS)")
}

func (c *consoleCmd) validate(args []string) error {
	if len(args) > 0 {
		return usagef("console takes no arguments, got %q", args[0])
	}
	return nil
}

func (c *consoleCmd) run(ctx context.Context, e *proc) error {
	addr := c.listen
	if addr == "" {
		addr = e.getenv(envConsoleListen)
	}
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	cc := &console.Config{Password: e.getenv(console.EnvPassword)}
	if c.keys == "" {
		c.keys = e.getenv("STREAMRULES_KEYS")
	}
	if c.keys != "" {
		keys, err := readKeys("console", c.keys)
		if err != nil {
			return err
		}
		cc.Keys = keys
	}
	if err := console.CheckListen(addr, cc); err != nil {
		return usagef("%v", err)
	}
	store, cfg, err := e.open(ctx, c.store)
	if err != nil {
		return err
	}
	defer store.Close()
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	eng, err := streamrules.New(ctx, store, &streamrules.Config{Logger: log, Environments: cfg.Environments})
	if err != nil {
		return err
	}
	defer eng.Close()
	cc.Logger = log
	h, err := console.New(store, eng, cc)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	fmt.Fprintf(e.stderr, "console: serving http://%s%s over %s\n", ln.Addr(), console.Prefix, e.about(c.store))
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
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
