package rulesdb_test

import (
	"testing"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/streamrules/streamrules/rulesdb"
)

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("STREAMRULES_SQLITE_PATH", "/tmp/x.db")
	t.Setenv("STREAMRULES_ENVIRONMENTS", "prod,staging")
	t.Setenv("STREAMRULES_RELOAD_INTERVAL", "5s")
	cfg, err := env.ParseAs[rulesdb.Config]()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DefaultSQLitePath != "/tmp/x.db" || len(cfg.Environments) != 2 || cfg.ReloadInterval != 5*time.Second || cfg.Seed != nil || cfg.Logger != nil {
		t.Errorf("%+v", cfg)
	}
}
