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
		path: "console", args: "[--listen ADDR] [--dsn DSN]",
		summary: "serve the rules console (web pages) over the database",
		about: "The pages are at http://ADDR/console/. The master logs in with the password in $" + console.EnvPassword +
			"\n(never a flag: argv is visible to every user of the machine). Without it the console only reads," +
			"\nand it refuses to listen on an address other than a loopback one.",
		opts: func() opts { return &consoleCmd{} },
	})
}

type consoleCmd struct {
	store  storeFlags
	listen string
}

func (c *consoleCmd) flags(fs *flag.FlagSet) {
	addStoreFlags(fs, &c.store, false)
	fs.StringVar(&c.listen, "listen", "", "the `ADDR` to serve on (default $"+envConsoleListen+", else 127.0.0.1:8080)")
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
	password := e.getenv(console.EnvPassword)
	if err := console.CheckListen(addr, &console.Config{Password: password}); err != nil {
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
	h, err := console.New(store, eng, &console.Config{Password: password, Logger: log})
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
