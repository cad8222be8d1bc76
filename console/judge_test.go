package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/console"
	"github.com/streamrules/streamrules/gateway"
)

func TestTry(t *testing.T) {
	fx := newFixture(t, backends[0].dsn(t), nil)
	c := fx.client(t)
	tests := []struct {
		name string
		form url.Values
		want []string
	}{
		{"violation with span", url.Values{"rule": {"no_apologies"}, "text": {"Well, sorry about that."}, "env": {"telegram"}},
			[]string{`id="status">violation`, "Well, <mark>sorry</mark> about that."}},
		{"out of its when", url.Values{"rule": {"no_apologies"}, "text": {"Well, sorry about that."}},
			[]string{`id="status">not_applicable`, "its when needs telegram"}},
		{"pass", url.Values{"rule": {"no_apologies"}, "text": {"All done."}, "env": {"telegram"}},
			[]string{`id="status">pass`}},
		{"fix and diff", url.Values{"rule": {"no_shouting"}, "text": {"line one\nDone!!!\nbye"}},
			[]string{`id="status">violation`, `<pre class="text" id="fixed">line one
Done!
bye</pre>`, `class="d-edit"`, "- Done!!!", "+ Done!"}},
		{"gate on arguments", url.Values{"rule": {"no_rm_rf"}, "text": {`{"cmd":"rm -rf /tmp/x"}`}},
			[]string{`id="status">violation`, "<mark>rm -rf</mark>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := c.post("/console/try", "/console/try", tt.form)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d\n%s", resp.StatusCode, body)
			}
			contains(t, body, tt.want...)
		})
	}
	resp, body := c.post("/console/try", "/console/try", url.Values{"rule": {"nope"}, "text": {"x"}})
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `there is no rule named &#34;nope&#34;`) {
		t.Errorf("unknown rule: %d", resp.StatusCode)
	}
}

func TestBacktest(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		fx := newFixture(t, dsn, nil)
		c := fx.client(t)
		jsonl := strings.Join([]string{
			`{"chat":"tg-1","env":["telegram"],"answer":"So sorry, it failed."}`,
			`{"chat":"tg-1","env":["telegram"],"answer":"It works now."}`,
			`{"chat":"tg-2","answer":"sorry, not in telegram"}`,
			`{"chat":"dev","tools":[{"name":"shell","args":"{\"cmd\":\"rm -rf build\"}"}],"answer":"Cleaned!!"}`,
		}, "\n") + "\n"
		body := upload(t, c, "week.jsonl", jsonl)
		contains(t, body, "week.jsonl: 4 moves", "So <mark>sorry</mark>, it failed.", "<mark>rm -rf</mark>")
		row := func(rule string) (fired, inScope string) {
			m := regexp.MustCompile(`data-rule="` + rule + `">.*?class="n fired">(\d+)</td><td class="n inscope">(\d+)<`).FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("no row for %s", rule)
			}
			return m[1], m[2]
		}
		// The gate stops the rm -rf call, so local_shell never reminds on it: the engine's order.
		for _, tt := range []struct{ rule, fired, inScope string }{
			{"no_apologies", "1", "2"}, {"no_rm_rf", "1", "4"}, {"local_shell", "0", "4"}, {"no_shouting", "1", "4"},
		} {
			if f, s := row(tt.rule); f != tt.fired || s != tt.inScope {
				t.Errorf("%s: fired %s in scope %s, want %s of %s", tt.rule, f, s, tt.fired, tt.inScope)
			}
		}
		// The compiled rules are kept between uploads, the chats' state is not: the same
		// transcript again gives the same counts.
		body = upload(t, c, "week.jsonl", jsonl)
		for _, tt := range []struct{ rule, fired, inScope string }{{"no_apologies", "1", "2"}, {"no_rm_rf", "1", "4"}} {
			if f, s := row(tt.rule); f != tt.fired || s != tt.inScope {
				t.Errorf("again: %s: fired %s in scope %s, want %s of %s", tt.rule, f, s, tt.fired, tt.inScope)
			}
		}
		// A change made outside the console (another writer, the master's tools) moves
		// the rules version: the next upload compiles the new rules.
		ru, err := fx.store.GetRule(context.Background(), "no_apologies")
		if err != nil {
			t.Fatal(err)
		}
		ru.When, ru.Condition = nil, `(?i)\b(sorry|works)\b`
		if _, err := fx.store.UpdateRule(context.Background(), "no_apologies", ru); err != nil {
			t.Fatal(err)
		}
		body = upload(t, c, "week.jsonl", jsonl)
		if f, s := row("no_apologies"); f != "3" || s != "4" {
			t.Errorf("after the edit: no_apologies fired %s in scope %s, want 3 of 4", f, s)
		}
		bad := upload(t, c, "bad.jsonl", `{"chat":"x","anwser":"hi"}`+"\n")
		contains(t, bad, `id="backtest-error"`, "bad.jsonl:1", "anwser")
	})
}

// CheckListen: off loopback a console needs someone who can log in, the password or a
// gateway key that may claim master; a key for other environments is not enough.
func TestCheckListen(t *testing.T) {
	keys := func(file string) console.Keys {
		k, err := gateway.ParseKeys(strings.NewReader(file))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	bot, master, wild := keys("bot sk-b telegram\n"), keys("bot sk-b telegram\nboss sk-m master\n"), keys("ops sk-o *\n")
	for _, tt := range []struct {
		addr, password string
		keys           console.Keys
		ok             bool
	}{
		{"127.0.0.1:8080", "", nil, true}, {"[::1]:8080", "", nil, true}, {"localhost:0", "", nil, true},
		{":8080", "", nil, false}, {"0.0.0.0:8080", "", nil, false}, {"10.0.0.5:80", "", nil, false},
		{":8080", "pw", nil, true},
		{":8080", "", bot, false}, {"127.0.0.1:8080", "", bot, true},
		{":8080", "", master, true}, {":8080", "", wild, true}, {":8080", "pw", bot, true},
	} {
		if err := console.CheckListen(tt.addr, &console.Config{Password: tt.password, Keys: tt.keys}); (err == nil) != tt.ok {
			t.Errorf("CheckListen(%q, password %q, keys %v) = %v", tt.addr, tt.password, tt.keys != nil, err)
		}
	}
	if err := console.CheckListen(":8080", nil); err == nil || !strings.Contains(err.Error(), console.EnvPassword) || !strings.Contains(err.Error(), "master") {
		t.Errorf("CheckListen(:8080, nil) = %v: want the password and master keys named", err)
	}
}

// A backtest lists every rule that fired and, of the rest, only the first PageRows: the
// others are counted.
func TestBacktestListsFiredRules(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		fx := newFixture(t, dsn, &console.Config{Password: testPassword, PageRows: 1})
		body := upload(t, fx.client(t), "w.jsonl", `{"chat":"a","answer":"Wow!!"}`+"\n")
		contains(t, body, `data-rule="no_shouting"`, "1 of 4 rules would have fired.", "And 2 more rules that did not fire")
		if n := strings.Count(body, `<tr data-rule=`); n != 2 {
			t.Errorf("%d rows, want 2: the one that fired and one that did not", n)
		}
	})
}
