package depcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/streamrules/streamrules"

// testSupport are the internal packages only tests (and the test tools under them) may
// import: test doubles, harnesses and generators. A name ending in "test" is one too.
var testSupport = []string{
	"cputime",       // CPU time for benchmarks
	"forged",        // look-alike engine tags for attack tests
	"mutate",        // the mutation harness, and its command
	"noshellreader", // a test of an engine built without a shell reader
	"rawjson",       // hand-written-looking JSON for encoding tests
	"regexgen",      // random regexps for differential tests
	"rulewalk",      // every string a rule holds, for fuzz and leak tests
	"scripted",      // a scripted llms.Model
	"testlog",       // a log sink for tests
	"workload",      // benchmark and test workloads
}

// production are the internal packages production code may import.
var production = []string{
	"cleanview",  // the records a tour carries between the middleware and clientview
	"depcheck",   // this test's package: no code
	"lazydfa",    // the prefilter's DFA
	"multimatch", // many regexps against one text
	"ruleinput",  // rulefile's strict readers for the packages beside it
	"rxprog",     // what a compiled regexp program can start with, must contain and assert
	"splice",     // the reminder splice
	"tagskel",    // the engine's tags
}

// allowed are the production packages that use a test-support package by design, with why.
var allowed = map[string][]string{
	// The demo's default offline session is played by a scripted model, so that it runs
	// without a key or a network.
	module + "/examples/agent": {"scripted"},
}

// classify names an internal package's role by its first element under internal/:
// "test", "production", or "" when neither list has it.
func classify(path string) (name, role string) {
	rest, ok := strings.CutPrefix(path, module+"/internal/")
	if !ok {
		return "", "production" // not internal: the module's public packages, commands, examples
	}
	name, _, _ = strings.Cut(rest, "/")
	switch {
	case slices.Contains(testSupport, name), strings.HasSuffix(name, "test"):
		return name, "test"
	case slices.Contains(production, name):
		return name, "production"
	}
	return name, ""
}

type listed struct {
	ImportPath string
	Deps       []string
}

// TestNoProductionPackageImportsTestSupport asks go list for every package of the module
// with its dependencies, test files left out, as a build of it links them.
func TestNoProductionPackageImportsTestSupport(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-deps=false", "-json=ImportPath,Deps", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	n := 0
	for {
		var p listed
		if err := dec.Decode(&p); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		n++
		name, role := classify(p.ImportPath)
		if role == "" {
			t.Errorf("%s: internal/%s is in neither list of depcheck_test.go: add it to testSupport or production", p.ImportPath, name)
			continue
		}
		if role == "test" {
			continue // test support may use test support
		}
		for _, d := range p.Deps {
			if dn, drole := classify(d); drole == "test" && !slices.Contains(allowed[p.ImportPath], dn) {
				t.Errorf("%s imports test-support package internal/%s (%s)", p.ImportPath, dn, d)
			}
		}
	}
	if n < 20 {
		t.Fatalf("go list found %d packages; want the whole module", n)
	}
}
