package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/rulefile"
	"github.com/streamrules/streamrules/seeds"
)

func init() {
	commands = append(commands,
		&command{path: "export", args: "[--format yaml|json] [-o FILE]", summary: "write every rule as a rule file", opts: func() opts { return &exportCmd{} },
			about: "The file is a versioned set (version: the database's seed version, at least 1). import reads it back\nunchanged: export, edit in a repository, review, import."},
		&command{path: "import", args: "[--dry-run] FILE", summary: "create or update the file's rules by name, as the master's edits", opts: func() opts { return &importCmd{} },
			about: "Each rule of the file is created, or updated when its fields differ; rules the file does not name\nare left alone. An update is an edit like the master's: it moves updated_at, so a later seed\ncalibration leaves it alone. --dry-run prints what would change, field by field, and writes nothing."},
		&command{path: "validate", args: "[--budget N] FILE…", summary: "check rule files as the engine would (exit 2 naming file, rule and field)", opts: func() opts { return &validateCmd{} },
			about: "For the CI of a rules repository: no database needed. Rules may use the seeds' environments\n(telegram, client_ops, master, picture) and those STREAMRULES_ENVIRONMENTS names. --budget N also fails (exit 1) when one\ntool's rules, which can fire together on one call, exceed N characters of text in full form:\nthe engine with STREAMRULES_REMINDER_BUDGET=N would send some in manifest form."},
		&command{path: "stats", args: "[--json]", summary: "how often each rule fired: outcomes, would-fires, last fired", opts: func() opts { return &statsCmd{} }},
		&command{path: "seed", args: "[FILE]", summary: "seed the database (default: the embedded set), once per database life", opts: func() opts { return &seedCmd{} },
			about: "A database is seeded once per life: a set whose version the database has (or a newer one) changes\nnothing. A higher version is a calibration wave: it rewrites only the seeded rules nobody edited."},
	)
}

// exportCmd is export [--format yaml|json] [-o FILE].
type exportCmd struct {
	o           storeFlags
	format, out string
	f           rulefile.Format // from format and out, by validate
}

func (c *exportCmd) flags(fs *flag.FlagSet) {
	addStoreFlags(fs, &c.o, false)
	fs.StringVar(&c.format, "format", "", "`FORMAT`: yaml or json (default: the -o file's extension, else yaml)")
	fs.StringVar(&c.out, "o", "", "write to `FILE` instead of stdout")
}

func (c *exportCmd) validate(args []string) error {
	c.f = rulefile.Format(c.format)
	switch {
	case len(args) > 0:
		return usagef("export takes no arguments")
	case c.format == "" && c.out != "" && rulefile.FormatOf(c.out) != "":
		c.f = rulefile.FormatOf(c.out)
	case c.format == "":
		c.f = rulefile.YAML
	case c.f != rulefile.YAML && c.f != rulefile.JSON:
		return usagef("--format %q: want yaml or json", c.format)
	}
	return nil
}

func (c *exportCmd) run(ctx context.Context, e *proc) error {
	o, out, f := c.o, c.out, c.f
	store, cfg, err := e.open(ctx, o)
	if err != nil {
		return err
	}
	defer store.Close()
	rules, err := store.ListRules(ctx)
	if err != nil {
		return err
	}
	version, err := store.SeedVersion(ctx)
	if err != nil {
		return err
	}
	for _, r := range rules {
		if err := invalid(r, known(cfg)); err != nil {
			fmt.Fprintf(e.stderr, "warning: rule %q: %v: the file will not import until it is fixed\n", r.Name, err)
		}
	}
	data, err := rulefile.Marshal(rulefile.Set{Version: max(version, 1), Rules: rules}, f)
	if err != nil {
		return err
	}
	if out == "" {
		_, err = e.stdout.Write(data)
		return err
	}
	if err := writeFile(out, data); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "exported %s from %s to %s\n", plural(len(rules), "rule"), e.about(o), out)
	return nil
}

// writeFile replaces path whole or not at all: a temporary file beside it, then a rename.
// The file keeps the mode of the one it replaces, else 0644: CreateTemp makes it 0600,
// which a rules repository's other readers could not open.
func writeFile(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// change is what import does to one rule.
type change struct {
	Rule   string        `json:"rule"`
	Action string        `json:"action"` // create, update, unchanged
	Fields []fieldChange `json:"fields,omitempty"`
}

type fieldChange struct {
	Field string          `json:"field"`
	From  json.RawMessage `json:"from"`
	To    json.RawMessage `json:"to"`
}

// diff compares two rules field by field in their file form (Rule's JSON names, in its
// order, without the store's fields).
func diff(from, to streamrules.Rule) ([]fieldChange, error) {
	a, err := fieldsOf(from)
	if err != nil {
		return nil, err
	}
	b, err := fieldsOf(to)
	if err != nil {
		return nil, err
	}
	var out []fieldChange
	for _, f := range b.order {
		if !bytes.Equal(a.values[f], b.values[f]) {
			out = append(out, fieldChange{f, a.values[f], b.values[f]})
		}
	}
	for _, f := range a.order {
		if _, ok := b.values[f]; !ok {
			out = append(out, fieldChange{f, a.values[f], json.RawMessage("null")})
		}
	}
	return out, nil
}

type ordered struct {
	order  []string
	values map[string]json.RawMessage
}

func fieldsOf(r streamrules.Rule) (ordered, error) {
	data, err := rulefile.MarshalRule(r, rulefile.JSON)
	if err != nil {
		return ordered{}, err
	}
	o := ordered{values: map[string]json.RawMessage{}}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // {
		return o, err
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return o, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return o, err
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, v); err != nil {
			return o, err
		}
		o.order = append(o.order, k.(string))
		o.values[k.(string)] = buf.Bytes()
	}
	return o, nil
}

// importCmd is import [--dry-run] FILE.
type importCmd struct {
	o    storeFlags
	dry  bool
	file string
}

func (c *importCmd) flags(fs *flag.FlagSet) {
	addStoreFlags(fs, &c.o, true)
	fs.BoolVar(&c.dry, "dry-run", false, "print what would change, field by field, and write nothing")
}

func (c *importCmd) validate(args []string) error {
	if len(args) != 1 {
		return usagef("import takes one FILE")
	}
	c.file = args[0]
	return nil
}

func (c *importCmd) run(ctx context.Context, e *proc) error {
	o, dry, file := c.o, c.dry, c.file
	cfg, err := e.config()
	if err != nil {
		return err
	}
	set, err := rulefile.Load(file, cfg.Environments...)
	if err != nil {
		return err
	}
	store, _, err := e.open(ctx, o)
	if err != nil {
		return err
	}
	defer store.Close()
	var changes []change
	counts := map[string]int{}
	var bar *progressbar.ProgressBar
	if isTerminal(e.stderr) && !dry {
		bar = progressbar.NewOptions(len(set.Rules), progressbar.OptionSetWriter(e.stderr),
			progressbar.OptionSetDescription("importing"), progressbar.OptionShowCount(),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	}
	for _, r := range set.Rules {
		if bar != nil {
			_ = bar.Add(1)
		}
		c := change{Rule: r.Name}
		cur, err := store.GetRule(ctx, r.Name)
		switch {
		case errors.Is(err, streamrules.ErrNotFound):
			c.Action = "create"
			if !dry {
				if _, err := store.CreateRule(ctx, r); err != nil {
					return fmt.Errorf("%s: rule %q: %w", file, r.Name, err)
				}
			}
		case err != nil:
			return err
		default:
			if c.Fields, err = diff(cur, r); err != nil {
				return err
			}
			c.Action = "unchanged"
			if len(c.Fields) > 0 {
				c.Action = "update"
				if !dry {
					if _, err := store.UpdateRule(ctx, r.Name, r); err != nil {
						return fmt.Errorf("%s: rule %q: %w", file, r.Name, err)
					}
				}
			}
		}
		counts[c.Action]++
		changes = append(changes, c)
	}
	if bar != nil {
		_ = bar.Finish() // cleared before the result and the summary
	}
	if o.json {
		if err := writeJSON(e.stdout, struct {
			DryRun  bool     `json:"dry_run"`
			Changes []change `json:"changes"`
		}{dry, changes}); err != nil {
			return err
		}
	} else {
		printChanges(e.stdout, changes)
	}
	verb := "imported"
	if dry {
		verb = "would import"
	}
	fmt.Fprintf(e.stderr, "%s %s into %s: %d to create, %d to update, %d unchanged\n", verb, file, e.about(o),
		counts["create"], counts["update"], counts["unchanged"])
	return nil
}

func printChanges(w io.Writer, changes []change) {
	for _, c := range changes {
		switch c.Action {
		case "create":
			fmt.Fprintf(w, "+ %s (new)\n", c.Rule)
		case "update":
			fmt.Fprintf(w, "~ %s\n", c.Rule)
			for _, f := range c.Fields {
				fmt.Fprintf(w, "    %s: %s -> %s\n", f.Field, f.From, f.To)
			}
		default:
			fmt.Fprintf(w, "= %s\n", c.Rule)
		}
	}
}

// validateCmd is validate [--budget N] [--stream ENV,…] FILE….
type validateCmd struct {
	files  []string
	budget int    // --budget: characters of rule text per call in full form; 0: not checked (budget.go)
	stream string // --stream: environments in which no rule may hold whole tours (speech.go); "": not checked
}

func (c *validateCmd) flags(fs *flag.FlagSet) {
	fs.IntVar(&c.budget, "budget", 0, "fail (exit 1) when one tool's rules, which can fire together on one call, exceed `N` characters in full form (the engine's STREAMRULES_REMINDER_BUDGET); 0: no check")
	fs.StringVar(&c.stream, "stream", "", "fail (exit 1) when a rule holds whole tours (no typewriter effect) in a tour of these environments, `ENV,…` (e.g. telegram,client_ops)")
}

func (c *validateCmd) validate(args []string) error {
	if len(args) == 0 {
		return usagef("validate takes one or more FILEs")
	}
	if c.budget < 0 {
		return usagef("validate: --budget %d is negative", c.budget)
	}
	c.files = args
	return nil
}

func (c *validateCmd) run(_ context.Context, e *proc) error {
	args := c.files
	cfg, err := e.config()
	if err != nil {
		return err
	}
	var env []string
	if c.stream != "" {
		if env, err = parseEnvList(c.stream, known(cfg)); err != nil {
			return err
		}
	}
	bad := 0
	var all []streamrules.Rule
	for _, path := range args {
		set, err := loadRules(path, cfg.Environments)
		if err != nil {
			bad++
			fmt.Fprintln(e.stderr, err)
			continue
		}
		all = append(all, set.Rules...)
		if set.Version == 0 {
			fmt.Fprintf(e.stdout, "%s: ok, %s (a single rule)\n", path, plural(len(set.Rules), "rule"))
		} else {
			fmt.Fprintf(e.stdout, "%s: ok, %s (version %d)\n", path, plural(len(set.Rules), "rule"), set.Version)
		}
		printSpeech(e.stdout, set.Rules) // what each rule does to the client's stream
	}
	if bad > 0 {
		return &invalidError{fmt.Sprintf("%d of %s invalid", bad, plural(len(args), "file"))}
	}
	if c.budget > 0 { // budget.go
		if over := checkBudget(all, c.budget); len(over) > 0 {
			reportBudget(e.stderr, over, c.budget)
			return &overBudgetError{fmt.Sprintf("%s over the reminder budget of %d characters", plural(len(over), "tool"), c.budget)}
		}
	}
	if c.stream != "" {
		if holding := checkStream(all, env); len(holding) > 0 {
			reportStream(e.stderr, holding, env)
			return &holdsError{fmt.Sprintf("validate --stream %s: %s", strings.Join(env, ","), plural(len(holding), "rule"))}
		}
	}
	return nil
}

// statsCmd is stats [--json].
type statsCmd struct{ o storeFlags }

func (c *statsCmd) flags(fs *flag.FlagSet) { addStoreFlags(fs, &c.o, true) }

func (c *statsCmd) validate(args []string) error { return noArgs("stats", args) }

func (c *statsCmd) run(ctx context.Context, e *proc) error {
	store, _, err := e.open(ctx, c.o)
	if err != nil {
		return err
	}
	defer store.Close()
	rules, err := store.ListRules(ctx)
	if err != nil {
		return err
	}
	counters, err := store.RuleCounters(ctx)
	if err != nil {
		return err
	}
	// Every rule, zero included, as /v1/stats lists them; then the counters of rules
	// deleted since (stats outlive their rule).
	stats := streamrules.Stats{Rules: []streamrules.RuleStat{}}
	seen := map[string]bool{}
	for _, r := range rules {
		stats.Rules = append(stats.Rules, counters[r.Name].Stat(r.Name, r.Mode))
		seen[r.Name] = true
	}
	var gone []string
	for name := range counters {
		if !seen[name] {
			gone = append(gone, name)
		}
	}
	sort.Strings(gone)
	for _, name := range gone {
		st := counters[name].Stat(name, "")
		st.Outcomes = nonZero(st.Outcomes) // the mode of a deleted rule is unknown
		stats.Rules = append(stats.Rules, st)
	}
	if c.o.json {
		return writeJSON(e.stdout, stats)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tFIRED\tOUTCOMES\tWOULD-FIRE\tLAST FIRED")
	for _, st := range stats.Rules {
		name, last := st.Rule, "-"
		if !seen[name] {
			name += " (deleted)"
		}
		if !st.LastFiredAt.IsZero() {
			last = st.LastFiredAt.Format("2006-01-02 15:04:05Z07:00")
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\n", name, st.Fired, outcomes(st.Outcomes), st.Shadow, last)
	}
	return tw.Flush()
}

func nonZero(m map[streamrules.Outcome]int64) map[streamrules.Outcome]int64 {
	out := map[streamrules.Outcome]int64{}
	for o, n := range m {
		if n != 0 {
			out[o] = n
		}
	}
	return out
}

// outcomes writes a stats line's outcomes, the non-zero ones, by name: "corrected 3, kept 1".
func outcomes(m map[streamrules.Outcome]int64) string {
	var parts []string
	for o, n := range m {
		if n != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", o, n))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// seedCmd is seed [FILE].
type seedCmd struct {
	o    storeFlags
	args []string
}

func (c *seedCmd) flags(fs *flag.FlagSet) { addStoreFlags(fs, &c.o, true) }

func (c *seedCmd) validate(args []string) error {
	if len(args) > 1 {
		return usagef("seed takes at most one FILE")
	}
	c.args = args
	return nil
}

func (c *seedCmd) run(ctx context.Context, e *proc) error {
	o, args := c.o, c.args
	cfg, err := e.config()
	if err != nil {
		return err
	}
	var set seeds.Set
	if len(args) == 1 {
		set, err = seeds.Load(args[0], cfg.Environments...)
	} else {
		set, err = seeds.Default()
	}
	if err != nil {
		return err
	}
	store, _, err := e.open(ctx, o)
	if err != nil {
		return err
	}
	defer store.Close()
	rep, err := store.Seed(ctx, set)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(e.stdout, rep)
	}
	if !rep.Applied {
		fmt.Fprintf(e.stdout, "%s is already seeded with version %d: nothing changed\n", e.about(o), rep.StoredVersion)
		return nil
	}
	fmt.Fprintf(e.stdout, "seeded %s with version %d (was %d): %d added, %d updated, %d kept, %d left deleted\n",
		e.about(o), rep.Version, rep.StoredVersion, len(rep.Added), len(rep.Updated), len(rep.Kept), len(rep.Deleted))
	return nil
}
