package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/caarlos0/env/v11"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/seeds"
)

// storeFlags are the flags of every command that opens the database.
type storeFlags struct {
	dsn  string
	json bool
}

// addStoreFlags adds --dsn (and --json when the command has a JSON form).
func addStoreFlags(fs *flag.FlagSet, o *storeFlags, withJSON bool) {
	fs.StringVar(&o.dsn, "dsn", "", "the database `DSN` (default $"+rulesdb.EnvDSN+", else the SQLite file streamrules.db)")
	if withJSON {
		fs.BoolVar(&o.json, "json", false, "print one JSON document with the rule's field names")
	}
}

// config reads rulesdb.Config from the environment (STREAMRULES_SQLITE_PATH,
// STREAMRULES_ENVIRONMENTS, …): the variables are the ones its env tags name.
func (e *proc) config() (rulesdb.Config, error) {
	environ := map[string]string{}
	t := reflect.TypeFor[rulesdb.Config]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("env"), ",")
		if name != "" && name != "-" {
			if v := e.getenv(name); v != "" {
				environ[name] = v
			}
		}
	}
	var cfg rulesdb.Config
	if err := env.ParseWithOptions(&cfg, env.Options{Environment: environ}); err != nil {
		var pe env.ParseError
		if errors.As(err, &pe) {
			f, _ := t.FieldByName(pe.Name)
			name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
			return cfg, usagef("%s: %q is not valid", name, environ[name])
		}
		return cfg, usagef("%v", err)
	}
	for _, name := range cfg.Environments {
		if !streamrules.ValidName(name) {
			return cfg, usagef("STREAMRULES_ENVIRONMENTS: %q must match [a-z][a-z0-9_]*", name)
		}
	}
	cfg = *cfg.WithDefaults() // the SQLite file Describe names too
	cfg.ReloadInterval = -1   // one command, one look: no reload backstop goroutine
	// The command works on a database seeded with package seeds: its rules' `when` may
	// name the seeds' environments, then STREAMRULES_ENVIRONMENTS.
	cfg.Environments = append(seeds.Environments(), slices.DeleteFunc(cfg.Environments, func(n string) bool {
		return slices.Contains(seeds.Environments(), n)
	})...)
	return cfg, nil
}

// known is the environment names a rule's `when` may use here: the seeds', then the
// host's (STREAMRULES_ENVIRONMENTS), as the store opened with cfg knows them.
func known(cfg rulesdb.Config) []string {
	return slices.Clone(cfg.Environments)
}

// open opens the database the flags and the environment name. The DSN is checked with
// rulesdb.Describe first, so a bad one is a usage error naming where it came from; the
// description (never the password) is all that is ever printed of it.
func (e *proc) open(ctx context.Context, o storeFlags) (*rulesdb.Store, rulesdb.Config, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, cfg, err
	}
	dsn, from := e.dsn(o)
	if _, err := rulesdb.Describe(dsn, cfg.DefaultSQLitePath); err != nil {
		return nil, cfg, fmt.Errorf("%s: %w", from, err)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	store, err := rulesdb.Open(ctx, dsn, &cfg)
	if err != nil {
		return nil, cfg, err
	}
	return store, cfg, nil
}

// about names the database for messages, as rulesdb.Describe does: host and database, or
// the file; never the password.
func (e *proc) about(o storeFlags) string {
	cfg, _ := e.config()
	dsn, _ := e.dsn(o)
	about, _ := rulesdb.Describe(dsn, cfg.DefaultSQLitePath)
	return about
}

// dsn is the DSN the command uses and where it came from: --dsn, else $STREAMRULES_DSN
// (empty: the default SQLite file).
func (e *proc) dsn(o storeFlags) (dsn, from string) {
	if o.dsn != "" {
		return o.dsn, "--dsn"
	}
	return e.getenv(rulesdb.EnvDSN), rulesdb.EnvDSN
}

func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + one + "s"
}
