package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/internal/ruleinput"
	"github.com/streamrules/streamrules/rulefile"
	"github.com/streamrules/streamrules/rulesdb"
	"github.com/streamrules/streamrules/ruletools"
)

func init() {
	commands = append(commands,
		&command{path: "rules list", args: "[--json]", summary: "every rule: enabled, shadow, loaded or why not, fired", opts: func() opts { return &listCmd{} }},
		&command{path: "rules show", args: "NAME [--json]", summary: "one rule, as a rule file shows it", opts: func() opts { return &showCmd{} }},
		&command{path: "rules create", args: "-f RULE.yaml | --name NAME --scope SCOPE --text TEXT [--condition RE] [--when a,b] [--repeat R] [--negate] …",
			summary: "create a rule, from a file or from flags", opts: func() opts { return &createCmd{} },
			about: "The file holds one rule, in YAML or JSON, with the fields of a rule file (see rulefile):\n\n  name: no_lorem\n  scope: text\n  condition: (?i)lorem ipsum\n  text: Never send placeholder text."},
		&command{path: "rules edit", args: "NAME [--text …] [--condition …] [--new-name …] …", summary: "change the fields given, keep the rest", opts: func() opts { return &editCmd{} }},
		&command{path: "rules delete", args: "NAME", summary: "delete a rule for good (its stats stay)", opts: func() opts { return &deleteCmd{} }},
		&command{path: "rules enable", args: "NAME", summary: "load the rule again", opts: func() opts { return &toggleCmd{verb: "enable"} }},
		&command{path: "rules disable", args: "NAME", summary: "keep the rule but do not load it", opts: func() opts { return &toggleCmd{verb: "disable"} }},
		&command{path: "rules shadow", args: "NAME", summary: "evaluate the rule but only count would-fires: no reminder, no discard", opts: func() opts { return &toggleCmd{verb: "shadow"} }},
		&command{path: "rules enforce", args: "NAME", summary: "take the rule out of shadow: it acts when it fires", opts: func() opts { return &toggleCmd{verb: "enforce"} }},
	)
}

// listed is a rule as the command shows it: ruletools.RuleView, the master's tools' own
// view (the rule's fields, loaded, problem, fired), so both speak one shape.
type listed = ruletools.RuleView

// views returns every rule with whether the engine would load it (enabled and valid for
// the store's environments) and its firings.
func views(ctx context.Context, store *rulesdb.Store, known []string, rules []streamrules.Rule) ([]listed, error) {
	counters, err := store.RuleCounters(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]listed, len(rules))
	for i, r := range rules {
		v := listed{Rule: r}
		err := invalid(r, known)
		v.Loaded = !r.Disabled && err == nil
		if !r.Disabled && err != nil {
			v.Problem = err.Error()
		}
		n := counters[r.Name].Stat(r.Name, r.Mode).Fired // live firings, as the stats count them
		v.Fired = &n
		out[i] = v
	}
	return out, nil
}

// invalid is why the engine would not load r (nil when it would, disabled or not): r
// is judged as the engine judges it, normalized (on a copy: Normalize builds a new When).
func invalid(r streamrules.Rule, known []string) error {
	r.Normalize()
	return streamrules.Validate(&r, known)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func state(r streamrules.Rule) string {
	s := "enabled"
	if r.Disabled {
		s = "disabled"
	}
	if r.Shadow {
		s += ",shadow"
	}
	return s
}

// listCmd is rules list.
type listCmd struct{ o storeFlags }

func (c *listCmd) flags(fs *flag.FlagSet) { addStoreFlags(fs, &c.o, true) }

func (c *listCmd) validate(args []string) error { return noArgs("rules list", args) }

func (c *listCmd) run(ctx context.Context, e *proc) error {
	o := c.o
	store, cfg, err := e.open(ctx, o)
	if err != nil {
		return err
	}
	defer store.Close()
	rules, err := store.ListRules(ctx)
	if err != nil {
		return err
	}
	vs, err := views(ctx, store, known(cfg), rules)
	if err != nil {
		return err
	}
	if o.json {
		out := make([]withSpeech, len(vs))
		for i, v := range vs {
			out[i] = speechView(v, known(cfg))
		}
		return writeJSON(e.stdout, struct {
			Rules []withSpeech `json:"rules"`
		}{out})
	}
	paint := e.colors()
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, paint.paint(bold, "NAME\tSCOPE\tSTATE\tLOADED\tFIRED\tSPEECH"))
	for _, v := range vs {
		loaded, color := "yes", plain
		switch {
		case v.Disabled:
			loaded, color = "no: disabled", dim
		case !v.Loaded:
			loaded, color = "no: "+v.Problem, red
		case v.Shadow:
			color = yellow
		}
		speech := "-" // not loaded: it holds nothing
		if h, ok := speechOf(v.Rule, known(cfg)); ok {
			speech = h.String()
		}
		fmt.Fprintln(tw, paint.paint(color, fmt.Sprintf("%s\t%s\t%s\t%s\t%d\t%s", v.Name, v.Scope, state(v.Rule), loaded, *v.Fired, speech)))
	}
	return tw.Flush()
}

func noArgs(cmd string, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments", cmd)
	}
	return nil
}

func oneName(verb string, args []string) (string, error) {
	if len(args) != 1 {
		return "", usagef("rules %s takes one rule NAME", verb)
	}
	return args[0], nil
}

// showCmd is rules show NAME.
type showCmd struct {
	o    storeFlags
	name string
}

func (c *showCmd) flags(fs *flag.FlagSet) { addStoreFlags(fs, &c.o, true) }

func (c *showCmd) validate(args []string) (err error) {
	c.name, err = oneName("show", args)
	return err
}

func (c *showCmd) run(ctx context.Context, e *proc) error {
	o, name := c.o, c.name
	store, cfg, err := e.open(ctx, o)
	if err != nil {
		return err
	}
	defer store.Close()
	r, err := store.GetRule(ctx, name)
	if err != nil {
		return err
	}
	return showStored(ctx, e.stdout, store, cfg, r, o.json)
}

// showStored shows one rule the store holds, with what the store knows of it.
func showStored(ctx context.Context, w io.Writer, store *rulesdb.Store, cfg rulesdb.Config, r streamrules.Rule, asJSON bool) error {
	vs, err := views(ctx, store, known(cfg), []streamrules.Rule{r})
	if err != nil {
		return err
	}
	return show(w, speechView(vs[0], known(cfg)), asJSON)
}

// withSpeech is a rule's view with what it does to the client's stream (nil: not loaded).
type withSpeech struct {
	listed
	Speech *streamrules.SpeechHold `json:"speech,omitempty"`
}

// MarshalJSON is the view's own JSON (RuleView marshals itself, which would hide Speech)
// with "speech" added last.
func (sv withSpeech) MarshalJSON() ([]byte, error) {
	view, err := json.Marshal(sv.listed)
	if err != nil || sv.Speech == nil {
		return view, err
	}
	speech, err := json.Marshal(sv.Speech)
	if err != nil {
		return nil, err
	}
	view = bytes.TrimRight(view, " \n}")
	return append(append(append(view, `,"speech":`...), speech...), '}'), nil
}

func speechView(v listed, known []string) withSpeech {
	out := withSpeech{listed: v}
	if h, ok := speechOf(v.Rule, known); ok {
		out.Speech = &h
	}
	return out
}

// show prints one rule: with --json its view; else the rule as a rule file holds it
// (ready for rules create -f and replay --rules), after comment lines with what the
// store knows and what the rule does to the client's stream.
func show(w io.Writer, sv withSpeech, asJSON bool) error {
	if asJSON {
		return writeJSON(w, sv)
	}
	v := sv.listed
	loaded := "yes"
	switch {
	case v.Disabled:
		loaded = "no (disabled)"
	case !v.Loaded:
		loaded = "no: " + v.Problem
	}
	fmt.Fprintf(w, "# loaded: %s; fired: %d", loaded, *v.Fired)
	if !v.UpdatedAt.IsZero() {
		fmt.Fprintf(w, "; updated %s", v.UpdatedAt.Format("2006-01-02 15:04:05Z07:00"))
	}
	fmt.Fprintln(w)
	if sv.Speech != nil {
		fmt.Fprintf(w, "# speech: %s\n", speechLine(*sv.Speech))
	}
	data, err := rulefile.MarshalRule(v.Rule, rulefile.YAML)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// ruleFlags are the flags that set a rule's fields; each writes the field's JSON, so a
// rule built from flags goes through the same decoding as a file.
type ruleFlags struct {
	fields map[string]json.RawMessage
}

func (rf *ruleFlags) add(fs *flag.FlagSet, withName bool) {
	rf.fields = map[string]json.RawMessage{}
	str := func(flagName, field, usage string) {
		fs.Func(flagName, usage, func(s string) error {
			rf.fields[field], _ = json.Marshal(s)
			return nil
		})
	}
	boolean := func(flagName, field, usage string) {
		fs.BoolFunc(flagName, usage, func(s string) error {
			b, err := strconv.ParseBool(s)
			if err != nil {
				return fmt.Errorf("want true or false")
			}
			rf.fields[field], _ = json.Marshal(b)
			return nil
		})
	}
	if withName {
		str("name", "name", "the rule's `NAME`: [a-z][a-z0-9_]*")
	} else {
		str("new-name", "name", "rename the rule to `NAME`")
	}
	str("scope", "scope", "`SCOPE`: text (the finished answer) or tool:NAME (that tool's JSON arguments)")
	str("condition", "condition", "an RE2 regular expression (`RE`) over the target; empty matches every target")
	boolean("negate", "negate", "fire when the condition does not match")
	fs.Func("when", "the environments (`a,b`) that must all hold; empty: any", func(s string) error {
		when := []string{}
		for _, w := range strings.Split(s, ",") {
			if w = strings.TrimSpace(w); w != "" {
				when = append(when, w)
			}
		}
		rf.fields["when"], _ = json.Marshal(when)
		return nil
	})
	str("text", "text", fmt.Sprintf("the `TEXT` the model is told, at most %d characters", streamrules.MaxTextChars))
	str("mode", "mode", "`MODE`: remind or interrupt; leave it out for the scope's default (a tool rule may interrupt: a matching call never runs)")
	str("repeat", "repeat", "`REPEAT`: \"\" every time, once (once per chat), after:N (at most once per N moves)")
	boolean("shadow", "shadow", "only count would-fires")
	boolean("early", "early", "a text rule may cut the streamed answer at its first certain miss")
	str("field", "field", "a tool rule's dotted `PATH` into the call's arguments (edits.new_string)")
	boolean("shell", "shell", "a tool rule reads each value as a shell script and judges each simple command")
	str("severity", "severity", "`SEVERITY`: low, medium or high (shown in logs and stats, not to the model)")
	str("explanation", "explanation", "why the rule exists (`TEXT`; shown in logs, not to the model)")
	str("delivery", "delivery", "`DELIVERY`: full keeps a tool rule's reminder whole over the reminder budget; empty: whole while the budget lasts")
	str("hint", "hint", fmt.Sprintf("what the rule's manifest block says (`TEXT`, at most %d characters); empty: the text's first sentence", streamrules.MaxHintChars))
	raw := func(flagName, field, usage string) {
		fs.Func(flagName, usage, func(s string) error {
			if !json.Valid([]byte(s)) {
				return fmt.Errorf("not JSON")
			}
			rf.fields[field] = json.RawMessage(s)
			return nil
		})
	}
	raw("predicate", "predicate", "a condition tree in `JSON`, instead of --condition: {\"any_of\": [{\"contains_regex\": \"…\"}, …]}")
	raw("applies-when", "applies_when", "a tree in `JSON`: outside it the rule does not fire")
	raw("fix", "fix", "a text rule's repair in `JSON`: {\"append_if_missing\": \"…\"} or {\"replace_regex\": {\"pattern\": \"…\", \"with\": \"…\"}}")
	raw("tests", "tests", "the rule's examples in `JSON`: {\"fires\": [\"…\"], \"passes\": [\"…\"]} (run by streamrules test)")
	boolean("disabled", "enabled", "keep the rule but do not load it")
}

// rule applies the flags to r. --disabled is stored as the wire's "enabled", inverted.
func (rf *ruleFlags) rule(r streamrules.Rule) (streamrules.Rule, error) {
	fields := rf.fields
	if raw, ok := fields["enabled"]; ok {
		var disabled bool
		_ = json.Unmarshal(raw, &disabled)
		fields["enabled"], _ = json.Marshal(!disabled)
	}
	return rulefile.Apply(r, fields)
}

// createCmd is rules create: -f FILE, or the rule's flags.
type createCmd struct {
	o    storeFlags
	file string
	rf   ruleFlags
}

func (c *createCmd) flags(fs *flag.FlagSet) {
	addStoreFlags(fs, &c.o, true)
	fs.StringVar(&c.file, "f", "", "a `FILE` holding one rule, YAML or JSON (- for stdin)")
	c.rf.add(fs, true)
}

func (c *createCmd) validate(args []string) error {
	rf := c.rf
	switch {
	case len(args) > 0:
		return usagef("rules create takes no arguments (the rule is -f FILE or flags)")
	case c.file != "" && len(rf.fields) > 0:
		return usagef("rules create takes -f FILE or the rule's flags, not both")
	case c.file == "" && (rf.fields["name"] == nil || rf.fields["scope"] == nil || rf.fields["text"] == nil):
		return usagef("rules create needs -f FILE, or at least --name, --scope and --text")
	}
	return nil
}

func (c *createCmd) run(ctx context.Context, e *proc) error {
	o, file, rf := c.o, c.file, c.rf
	cfg, err := e.config()
	if err != nil {
		return err
	}
	var r streamrules.Rule
	switch {
	case file == "-":
		data, err := ruleinput.ReadAll(e.stdin)
		if err != nil {
			return err
		}
		r, err = rulefile.ParseRule(data, cfg.Environments...)
		if err != nil {
			return err
		}
	case file != "":
		if r, err = rulefile.LoadRule(file, cfg.Environments...); err != nil {
			return err
		}
	default:
		if r, err = rf.rule(streamrules.Rule{}); err != nil {
			return err
		}
	}
	store, cfg, err := e.open(ctx, o)
	if err != nil {
		return err
	}
	defer store.Close()
	created, err := store.CreateRule(ctx, r)
	if err != nil {
		return named(r.Name, err)
	}
	fmt.Fprintf(e.stderr, "created rule %q\n", created.Name)
	return showStored(ctx, e.stdout, store, cfg, created, o.json)
}

// editCmd is rules edit NAME with the fields to change.
type editCmd struct {
	o    storeFlags
	rf   ruleFlags
	name string
}

func (c *editCmd) flags(fs *flag.FlagSet) {
	addStoreFlags(fs, &c.o, true)
	c.rf.add(fs, false)
}

func (c *editCmd) validate(args []string) (err error) {
	if c.name, err = oneName("edit", args); err != nil {
		return err
	}
	if len(c.rf.fields) == 0 {
		return usagef("rules edit %s: say what to change (--text, --condition, --new-name, …)", c.name)
	}
	return nil
}

func (c *editCmd) run(ctx context.Context, e *proc) error {
	o, rf, name := c.o, c.rf, c.name
	store, cfg, err := e.open(ctx, o)
	if err != nil {
		return err
	}
	defer store.Close()
	cur, err := store.GetRule(ctx, name)
	if err != nil {
		return err
	}
	r, err := rf.rule(cur)
	if err != nil {
		return named(name, err)
	}
	updated, err := store.UpdateRule(ctx, name, r)
	if err != nil {
		return named(name, err)
	}
	fmt.Fprintf(e.stderr, "changed rule %q\n", updated.Name)
	return showStored(ctx, e.stdout, store, cfg, updated, o.json)
}

// deleteCmd is rules delete NAME.
type deleteCmd struct {
	o    storeFlags
	name string
}

func (c *deleteCmd) flags(fs *flag.FlagSet) { addStoreFlags(fs, &c.o, false) }

func (c *deleteCmd) validate(args []string) (err error) {
	c.name, err = oneName("delete", args)
	return err
}

func (c *deleteCmd) run(ctx context.Context, e *proc) error {
	o, name := c.o, c.name
	store, _, err := e.open(ctx, o)
	if err != nil {
		return err
	}
	defer store.Close()
	if err := store.DeleteRule(ctx, name); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "deleted rule %q (its stats stay)\n", name)
	return nil
}

// named adds the rule's name to a validation error, which names only the field: the
// store's other errors name the rule already.
func named(name string, err error) error {
	var ve *streamrules.ValidationError
	if errors.As(err, &ve) {
		return fmt.Errorf("rule %q: %w", name, err)
	}
	return err
}

// errNotStored: the database dropped a field the command set (a schema older than the
// field).
var errNotStored = errors.New("the database does not store this field yet: its migration has not run")

// toggleCmd is rules enable|disable|shadow|enforce NAME.
type toggleCmd struct {
	verb string
	o    storeFlags
	name string
}

func (c *toggleCmd) flags(fs *flag.FlagSet) { addStoreFlags(fs, &c.o, false) }

func (c *toggleCmd) validate(args []string) (err error) {
	c.name, err = oneName(c.verb, args)
	return err
}

func (c *toggleCmd) run(ctx context.Context, e *proc) error {
	o, name, verb := c.o, c.name, c.verb
	store, _, err := e.open(ctx, o)
	if err != nil {
		return err
	}
	defer store.Close()
	r, err := store.GetRule(ctx, name)
	if err != nil {
		return err
	}
	want := r
	switch verb {
	case "enable":
		want.Disabled = false
	case "disable":
		want.Disabled = true
	case "shadow":
		want.Shadow = true
	case "enforce":
		want.Shadow = false
	}
	if want.Disabled == r.Disabled && want.Shadow == r.Shadow {
		fmt.Fprintf(e.stdout, "rule %q is already %s\n", name, state(r))
		return nil
	}
	got, err := store.UpdateRule(ctx, name, want)
	if err != nil {
		return err
	}
	// Read it back: a database whose schema predates a field drops it silently.
	if stored, err := store.GetRule(ctx, name); err != nil {
		return err
	} else if stored.Disabled != want.Disabled || stored.Shadow != want.Shadow {
		return fmt.Errorf("rules %s %s: %w", verb, name, errNotStored)
	}
	fmt.Fprintf(e.stdout, "rule %q is now %s\n", name, state(got))
	return nil
}
