package shellcmd_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
	"github.com/streamrules/streamrules/shellcmd"
)

// maxAllocs bounds the allocations of reading n bytes: at most two per byte plus 512
// (the parser's nodes, the rendered words, a wrapper's option set); BenchmarkCommands
// gives the usual figure.
func maxAllocs(n int) int { return 2*n + 512 }

// FuzzCommands: reading never panics; what it yields stays within its bounds (at most
// MaxCommands commands, a rendering of at most four times the script plus 4 KiB, so the
// rules' regexps run on no more than that); a script over MaxScriptBytes is refused; and
// a reading is deterministic.
func FuzzCommands(f *testing.F) {
	for _, s := range append(append([]string{}, forcedRecursiveRM...), lookAlikes...) {
		f.Add(s)
	}
	f.Add(`{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}`)
	f.Add(`echo {1..100000}`)
	f.Add(strings.Repeat(`bash -c '`, 12) + "rm -rf x" + strings.Repeat(`'`, 12))
	f.Add(strings.Repeat("eval ", 20) + "rm -rf x")
	f.Add("$'\\x72\\u006d\\0155' -rf x")
	f.Add("env -S'rm -rf x'")
	f.Add("find . -exec find . -exec rm -rf {} ; ;")
	f.Fuzz(func(t *testing.T, script string) {
		cmds, err := shellcmd.Commands(script)
		if len(script) > shellcmd.MaxScriptBytes && !errors.Is(err, shellcmd.ErrTooLong) {
			t.Fatalf("a script of %d bytes was read: %v", len(script), err)
		}
		if err != nil {
			if cmds != nil {
				t.Fatalf("an error with commands: %v %q", err, cmds)
			}
			return
		}
		total := 0
		for _, c := range cmds {
			total += len(c)
		}
		if len(cmds) > shellcmd.MaxCommands || total > 4*len(script)+4096 {
			t.Fatalf("%d commands, %d bytes rendered from %d bytes", len(cmds), total, len(script))
		}
		// Cost: the work of a reading is its allocations (the parser's nodes, the rendered
		// words), so a bound on them per byte is a bound on its time that no machine's load
		// can blur; BenchmarkCommands gives the nanoseconds.
		if allocs := testing.AllocsPerRun(1, func() { _, _ = shellcmd.Commands(script) }); allocs > float64(maxAllocs(len(script))) {
			t.Fatalf("%v allocations reading %d bytes, bound %d", allocs, len(script), maxAllocs(len(script)))
		}
		again, err := shellcmd.Commands(script)
		if err != nil || !slices.Equal(cmds, again) {
			t.Fatalf("two readings differ: %q then %q (%v)", cmds, again, err)
		}
	})
}

// FuzzPlainWords: a script of plain words reads the same through the fast path as through
// the parser.
func FuzzPlainWords(f *testing.F) {
	for _, s := range []string{"ls -la /srv", "rm -rf x", "FOO=1 sudo -u root rm -rf /", "timeout 10 nice -n 5 rm -r -f x",
		"git push -fu origin main", "env -i A=b rm -rf x", "xargs rm -rf", "command -v rm", "a=b", "  ", "find . -exec rm -rf x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		// Map the input onto the plain alphabet, so the fast path is taken (but for a
		// reserved first word), whatever bytes the fuzzer tries.
		const alphabet = "rmfRF -  \tabcdeiltx_./=,:@%+09AZ"
		b := []byte(script)
		for i, c := range b {
			b[i] = alphabet[int(c)%len(alphabet)]
		}
		script = string(b)
		fast, err1 := shellcmd.Commands(script)
		parsed, err2 := shellcmd.ParsedCommands(script)
		if (err1 == nil) != (err2 == nil) || !slices.Equal(fast, parsed) {
			t.Fatalf("%q: fast path %q (%v), parser %q (%v)", script, fast, err1, parsed, err2)
		}
	})
}

// FuzzGateFailsClosed: whatever the reader cannot read, a shell gate refuses. Any input
// the reader returns an error for is a violation of an interrupt shell rule, whose
// condition matches nothing the reader renders; a remind rule with the same condition
// judges it raw and passes. No input panics.
func FuzzGateFailsClosed(f *testing.F) {
	for _, s := range append(append([]string{}, forcedRecursiveRM...), lookAlikes...) {
		f.Add(s)
	}
	for _, d := range destructiveForms {
		if len(d.form) < 4096 {
			f.Add(d.form)
		}
	}
	f.Add("rm -rf x\necho \"")
	f.Add("$X")
	f.Add("echo hi | sudo -s")
	f.Add("f() { f; }; f")
	never := `^\x{10FFFE}\x{10FFFE}$` // a noncharacter, twice: no rendering holds it
	gate, err := streamrules.NewJudge(streamrules.Rule{Name: "never_gate", Scope: "tool:shell", Mode: streamrules.ModeInterrupt, Field: "cmd", Shell: true, Condition: never, Text: "x"}, seeds.Environments()...)
	if err != nil {
		f.Fatal(err)
	}
	note, err := streamrules.NewJudge(streamrules.Rule{Name: "never_note", Scope: "tool:shell", Field: "cmd", Shell: true, Condition: never, Text: "x"}, seeds.Environments()...)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, script string) {
		arg, _ := json.Marshal(map[string]string{"cmd": script})
		var back struct{ Cmd string }
		if err := json.Unmarshal(arg, &back); err != nil {
			t.Fatal(err)
		}
		_, rerr := shellcmd.Commands(back.Cmd)
		got := gate.Check(string(arg), nil).Status
		if rerr != nil && got != streamrules.StatusViolation {
			t.Fatalf("the reader failed (%v) and the gate let %q through", rerr, back.Cmd)
		}
		if rerr == nil && got == streamrules.StatusViolation && !strings.Contains(back.Cmd, "\U0010FFFE") {
			cmds, _ := shellcmd.Commands(back.Cmd)
			dyn := false
			for _, c := range cmds {
				dyn = dyn || strings.ContainsAny(strings.SplitN(c, " ", 2)[0], "$`")
			}
			if !dyn {
				t.Fatalf("a readable %q (%q) was refused", back.Cmd, cmds)
			}
		}
		if note.Check(string(arg), nil).Status == streamrules.StatusViolation && !strings.Contains(back.Cmd, "\U0010FFFE") {
			t.Fatalf("the reminder fired on %q", back.Cmd)
		}
	})
}
