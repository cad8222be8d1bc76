package console_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/console"
)

// Every page renders from a real store, with what the store holds.
func TestPagesRender(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		fx := newFixture(t, dsn, nil)
		now := time.Now().UTC()
		recordFirings(t, fx.store, "tg-1", []time.Time{now.Add(-49 * time.Hour), now.Add(-time.Hour), now},
			streamrules.Firing{Rule: "local_shell", Mode: streamrules.ModeRemind, Tool: "shell", Outcome: streamrules.OutcomeComplied, Delivery: streamrules.DeliveryFull})
		c := fx.client(t)
		for _, tt := range []struct {
			path string
			want []string
		}{
			{"/console/", []string{"Outcome mix", "complied <b>3</b>", `<svg class="spark"`, "no_apologies", "Never fired"}},
			{"/console/rules", []string{"local_shell", "no_rm_rf", "gate", "soft", "hard", "fix"}},
			{"/console/rules?state=never_fired", []string{"no_rm_rf"}},
			{"/console/rules/local_shell", []string{"This shell is the user&#39;s own machine.", "complied <b>3</b>"}},
			{"/console/try", []string{"Environments that hold"}},
			{"/console/backtest", []string{"Transcript"}},
			{"/console/firings", []string{"tg-1", "complied", "full"}},
			{"/console/login", []string{"Console password"}},
		} {
			code, body := c.get(tt.path)
			if code != http.StatusOK {
				t.Errorf("GET %s: %d\n%s", tt.path, code, body)
				continue
			}
			contains(t, body, tt.want...)
		}
		if _, body := c.get("/console/rules?state=never_fired"); strings.Contains(body, `href="/console/rules/local_shell"`) {
			t.Error("never_fired lists local_shell, which fired")
		}
	})
}

// A change made elsewhere (the master's tools, the CLI, another replica) shows on the
// next page: the cached rules follow the store's rules version.
func TestPagesFollowTheStore(t *testing.T) {
	fx := newFixture(t, backends[0].dsn(t), &console.Config{Password: testPassword, StatsMaxAge: -1})
	c := fx.client(t)
	if _, body := c.get("/console/rules"); strings.Contains(body, "brand_new") {
		t.Fatal("brand_new before it exists")
	}
	ctx := t.Context()
	if _, err := fx.store.CreateRule(ctx, streamrules.Rule{Name: "brand_new", Scope: "text", Condition: "x", Text: "X."}); err != nil {
		t.Fatal(err)
	}
	r, err := fx.store.GetRule(ctx, "local_shell")
	if err != nil {
		t.Fatal(err)
	}
	r.Disabled = true
	if _, err := fx.store.UpdateRule(ctx, "local_shell", r); err != nil {
		t.Fatal(err)
	}
	_, body := c.get("/console/rules?state=disabled")
	contains(t, body, `href="/console/rules/local_shell"`)
	_, body = c.get("/console/rules")
	contains(t, body, "brand_new")
	recordFirings(t, fx.store, "x", []time.Time{time.Now().UTC()}, streamrules.Firing{Rule: "brand_new", Mode: streamrules.ModeInterrupt, Outcome: streamrules.OutcomeKept})
	_, body = c.get("/console/rules/brand_new")
	contains(t, body, "kept <b>1</b>")
}
