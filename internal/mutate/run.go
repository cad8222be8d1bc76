package mutate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Outcome is what the test suite made of one mutant.
type Outcome string

// The outcomes: the tests failed (or timed out), the tests passed, or the mutant did not
// build (it says nothing about the tests and is left out of the rate).
const (
	Caught   Outcome = "caught"
	Survived Outcome = "SURVIVED"
	Invalid  Outcome = "invalid"
)

// Config says how to test a mutant.
type Config struct {
	Dir     string        // the module directory go test runs in; default "."
	Pkg     string        // the package to test, as go test names it, e.g. "./middleware"
	Run     string        // go test -run; empty: every test
	Skip    string        // go test -skip; empty: none
	Timeout time.Duration // per run, go test's -timeout; default 5m
}

// Test builds the package with file replaced by src, through go test's -overlay, and
// runs its tests. The file on disk is never written, so no exit path can leave a mutant
// behind, and the checkout stays usable by others while the run goes on.
func Test(ctx context.Context, cfg Config, file string, src []byte) (Outcome, string, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", "", err
	}
	tmp, err := os.MkdirTemp("", "mutate-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp)
	mutant := filepath.Join(tmp, filepath.Base(file))
	if err := os.WriteFile(mutant, src, 0o600); err != nil {
		return "", "", err
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {abs: mutant}})
	if err != nil {
		return "", "", err
	}
	ov := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o600); err != nil {
		return "", "", err
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	args := []string{"test", "-count=1", "-vet=off", "-failfast", "-overlay=" + ov, "-timeout=" + timeout.String()}
	if cfg.Run != "" {
		args = append(args, "-run="+cfg.Run)
	}
	if cfg.Skip != "" {
		args = append(args, "-skip="+cfg.Skip)
	}
	args = append(args, cfg.Pkg)
	// go test's own -timeout ends a hung test binary; the extra minute is for a hung build.
	ctx, cancel := context.WithTimeout(ctx, timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = cfg.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err = cmd.Run()
	out := buf.String()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return Survived, out, nil
	case strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]"):
		return Invalid, out, nil
	case errors.As(err, &exit) || ctx.Err() != nil:
		return Caught, out, nil
	default:
		return "", out, fmt.Errorf("mutate: go test: %w", err)
	}
}
