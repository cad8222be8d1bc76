package shellcmd_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

// TARGET stands for the directory a destructive form wipes: /srv/data when the gate judges
// it, a throw-away directory holding a sentinel file when bash runs it.
const target = "TARGET"

// destructiveForm is one way to write a command that wipes TARGET. needs names the
// programs bash must find to run it (none: bash alone); a form that cannot run here
// (a remote host, a daemon, a missing program) is judged by the gate only. tool is how
// the shell tool gets it: "" as {"cmd": form}; "raw" as the tool's whole input.
type destructiveForm struct {
	form  string
	needs []string
	tool  string
}

// The forms that got through the gate before it read commands as a shell runs them: each
// runs the rm when bash runs it (TestBashGroundTruth), and each is refused now.
var destructiveForms = []destructiveForm{
	// What the reader cannot read completely fails closed.
	{form: "rm -rf TARGET\necho \""},
	{form: "rm -rf TARGET\n)"},
	{form: "rm -rf TARGET <<EOF"},
	{form: "echo $((rm -rf TARGET) )"},
	{form: "((rm -rf TARGET) )"},
	{form: "# " + strings.Repeat("x", 64<<10) + "\nrm -rf TARGET", tool: "raw"},
	{form: strings.Repeat("true;", 1025) + "rm -rf TARGET"},
	{form: strings.Repeat("eval ", 9) + "rm -rf TARGET"},
	{form: "echo {" + strings.Repeat("a,", 1200) + "a} >/dev/null; {rm,-rf,TARGET}"},
	// Option grammars: an option's argument, GNU long-option prefixes.
	{form: "bash -o posix -c 'rm -rf TARGET'"},
	{form: "bash --rcfile F -c 'rm -rf TARGET'"},
	{form: "env -iS 'rm -rf TARGET'"},
	{form: "env --split 'rm -rf TARGET'"},
	{form: "timeout --sig KILL 5 rm -rf TARGET"},
	{form: "nice --adj 5 rm -rf TARGET"},
	{form: "stdbuf --output L rm -rf TARGET"},
	{form: "sudo --us root rm -rf TARGET", needs: []string{"sudo"}},
	// Process wrappers.
	{form: "setsid rm -rf TARGET"},
	{form: "su -c 'rm -rf TARGET'", needs: []string{"su", "root"}},
	{form: "runuser -u root -- rm -rf TARGET", needs: []string{"runuser", "root"}},
	{form: "chroot / rm -rf TARGET", needs: []string{"chroot", "root"}},
	{form: "flock . rm -rf TARGET"},
	{form: "ionice -c3 rm -rf TARGET", needs: []string{"ionice"}},
	{form: "chrt -o 0 rm -rf TARGET", needs: []string{"chrt"}},
	{form: "taskset 1 rm -rf TARGET", needs: []string{"taskset"}},
	{form: "unshare rm -rf TARGET", needs: []string{"unshare", "root"}},
	{form: "watch -n 1 rm -rf TARGET", needs: []string{"watch"}},
	{form: "script -qc 'rm -rf TARGET' /dev/null", needs: []string{"script"}},
	{form: "toybox rm -rf TARGET", needs: []string{"toybox"}},
	{form: "busybox rm -rf TARGET", needs: []string{"busybox"}},
	{form: "fish -c 'rm -rf TARGET'", needs: []string{"fish"}},
	{form: "nohup rm -rf TARGET >/dev/null 2>&1"},
	{form: "xargs -I{} sh -c 'rm -rf {}' <<< TARGET"},
	// Every shell's -c.
	{form: "dash -c 'rm -rf TARGET'", needs: []string{"dash"}},
	{form: "zsh -c 'rm -rf TARGET'", needs: []string{"zsh"}},
	{form: "ksh -c 'rm -rf TARGET'", needs: []string{"ksh"}},
	{form: "bash -lc 'rm -rf TARGET'"},
	{form: "sh -c 'rm -rf \"$1\"' _ TARGET"},
	{form: "bash -c '\"$@\"' _ rm -rf TARGET"},
	// Remote and container runs.
	{form: "ssh host 'rm -rf TARGET'", needs: []string{"a remote host"}},
	{form: "docker exec web sh -c 'rm -rf TARGET'", needs: []string{"a docker daemon"}},
	{form: "podman exec -it web rm -rf TARGET", needs: []string{"a podman container"}},
	{form: "kubectl exec -n prod web -- rm -rf TARGET", needs: []string{"a cluster"}},
	// A script fed to a shell.
	{form: "echo 'rm -rf TARGET' | sh"},
	{form: "sh <<< 'rm -rf TARGET'"},
	{form: "bash <<'EOF'\nrm -rf TARGET\nEOF"},
	{form: "source <(echo rm -rf TARGET)"},
	{form: "trap 'rm -rf TARGET' EXIT"},
	{form: "printf 'rm -rf %s\\n' TARGET | bash"},
	// Runtime routes.
	{form: `f() { "$@"; }; f rm -rf TARGET`},
	{form: "git -c alias.x='!rm -rf TARGET' x", needs: []string{"git"}},
	{form: `"$(printf rm)" -rf TARGET`},
	{form: `X=rm; $X -rf TARGET`},
	// A brace budget spent first.
	{form: "echo {a,b}{a,b}{a,b}{a,b} >/dev/null; {rm,-rf,TARGET}"},
	// The tool's JSON as encoding/json reads it.
	{form: `{"CMD":"rm -rf TARGET"}`, tool: "raw"},
	{form: `{"cmd":"ls","Cmd":"rm -rf TARGET"}`, tool: "raw"},
	{form: `"$(rm -rf TARGET)"`, tool: "raw"},
	// Policy: rm -r with no terminal never prompts; a link named as build output.
	{form: "rm -r TARGET"},
	{form: "ln -s TARGET build && rm -rf build/"},
	{form: "ln -sfn TARGET dist; rm -rf dist/"},
}

// shellGate is an engine with the seeded rules and a move in client_ops, where the
// destructive_shell gate is armed.
func shellGate(t testing.TB) (context.Context, *streamrules.Move) {
	t.Helper()
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	store, err := streamrules.NewMemoryStore(set.Rules, seeds.Environments()...)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := streamrules.New(context.Background(), store, &streamrules.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	ctx, m := eng.BeginMove(context.Background(), "ops", seeds.EnvClientOps)
	t.Cleanup(func() { m.End(ctx, nil) })
	return ctx, m
}

// toolInput is what the shell tool is called with for a form.
func toolInput(f destructiveForm, path string) string {
	s := strings.ReplaceAll(f.form, target, path)
	if f.tool == "raw" {
		return s
	}
	b, _ := json.Marshal(map[string]string{"cmd": s})
	return string(b)
}

// TestGateRefusesDestructiveForms: the seeded gate refuses every form, through the tool
// wrapper's path (Move.GateCall).
func TestGateRefusesDestructiveForms(t *testing.T) {
	t.Parallel()
	ctx, m := shellGate(t)
	if len(destructiveForms) < 54 {
		t.Fatalf("%d forms, the issue names 54", len(destructiveForms))
	}
	for _, f := range destructiveForms {
		in := toolInput(f, "/srv/data")
		if rem := m.GateCall(ctx, "shell", in); len(rem) == 0 || rem[0].Rule != "destructive_shell" {
			t.Errorf("GateCall(%.120q) = %v, want the destructive_shell refusal", in, rem)
		}
	}
}

// demoCommand is the command line the demo's shell tool (examples/agent) takes from its
// input: a JSON object decoded by encoding/json into {"cmd"}, anything else whole.
func demoCommand(input string) string {
	in := strings.TrimSpace(input)
	if !strings.HasPrefix(in, "{") {
		return in
	}
	var a struct {
		Cmd string `json:"cmd"`
	}
	if json.Unmarshal([]byte(in), &a) != nil {
		return ""
	}
	return a.Cmd
}

// TestBashGroundTruth: bash 5 really deletes the target of every form that can run here,
// which is what makes each a form the gate must refuse. Each runs in its own throw-away
// directory: the target is a directory inside it holding a sentinel file, the working
// directory and HOME are that directory, and bash is killed after ten seconds (watch
// never ends by itself). Nothing outside the directory is named.
func TestBashGroundTruth(t *testing.T) {
	skip := t.Skipf
	if os.Getenv("CI") == "true" {
		skip = t.Fatalf // CI has bash 5 (Debian's); without it the ground truth is not checked
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		skip("no bash")
	}
	out, err := exec.Command(bash, "-c", "echo ${BASH_VERSINFO[0]}").Output()
	if major, aerr := strconv.Atoi(strings.TrimSpace(string(out))); err != nil || aerr != nil || major < 5 {
		skip("bash %q: the ground truth is bash 5", out)
	}
	plain := 0 // forms that need nothing but bash: every machine with bash 5 runs them
	for _, f := range destructiveForms {
		if len(f.needs) == 0 {
			plain++
		}
	}
	ran, skipped := 0, []string{}
	for _, f := range destructiveForms {
		if missing := missingNeed(f.needs); missing != "" {
			skipped = append(skipped, missing)
			continue
		}
		f := f
		t.Run("", func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "srv", "data")
			if err := os.MkdirAll(data, 0o755); err != nil {
				t.Fatal(err)
			}
			sentinel := filepath.Join(data, "sentinel")
			if err := os.WriteFile(sentinel, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			line := demoCommand(toolInput(f, data))
			if !strings.Contains(line, dir) {
				t.Fatalf("the form names no path inside the throw-away directory: %.80q", line)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bash, "-c", line)
			cmd.Dir = dir
			cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=" + dir, "TERM=dumb"}
			cmd.Stdin = strings.NewReader("")
			done := make(chan error, 1)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-ctx.Done():
				<-done
			}
			if _, err := os.Stat(sentinel); !os.IsNotExist(err) {
				t.Errorf("bash did not delete the target of %.120q (stat: %v)", line, err)
			}
		})
		ran++
	}
	t.Logf("bash ran %d of %d forms and deleted every target; not run here: %v", ran, len(destructiveForms), skipped)
	if ran < plain {
		t.Errorf("bash ran %d forms, fewer than the %d that need nothing but bash", ran, plain)
	}
}

// missingNeed names the first need this machine lacks: a program on PATH, root, or
// something no test machine has (a remote host, a daemon).
func missingNeed(needs []string) string {
	for _, n := range needs {
		switch {
		case n == "root":
			if os.Geteuid() != 0 {
				return n
			}
		case strings.Contains(n, " "):
			return n
		default:
			if _, err := exec.LookPath(n); err != nil {
				return n
			}
		}
	}
	return ""
}
