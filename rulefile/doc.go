// Package rulefile is the outside shape of a stream rule: the files a rules repository
// keeps, export writes and import reads, and the strict decoding every input of a rule
// goes through (files, the master's tools, the streamrules command).
//
//	set, err := rulefile.Load("rules.yaml")   // or Parse(data): JSON when it starts with '{'
//	if err != nil {
//		log.Fatal(err) // rules.yaml:14: rule #3 "x": streamrules: invalid condition: …
//	}
//	data, err := rulefile.Marshal(set, rulefile.YAML)
//
// # The format
//
// A versioned set, in YAML or in JSON with the same fields (the embedded seeds.json of
// package seeds is one):
//
//	version: 1
//	rules:
//	  - name: telegram_reply_tail
//	    scope: text
//	    condition: "↩ #\\d+\\s*$"
//	    negate: true
//	    when: [telegram]
//	    text: Every Telegram reply ends with the tail line ↩ # and the message id.
//	  - name: local_shell_for_his_machine
//	    scope: tool:shell
//	    when: [client_ops]
//	    repeat: once
//	    text: This shell runs on the agent's host, not on the client's machine.
//	    enabled: false
//
// A rule's fields are streamrules.Rule's JSON names, read from its struct tags, so a field
// added to Rule is a field of every file, tool and command at once: name, scope,
// condition, negate, when, text, mode (usually left out: it follows from the scope),
// repeat ("", "once", "after:N"), shadow, early, and enabled (true when absent). The
// store's own fields (id, created_at, updated_at) are not part of a file. A file with a
// single rule (the object alone) is what [ParseRule] reads, for `streamrules rules
// create -f`.
//
// # Strict, with the place named
//
// encoding/json matches keys case-insensitively, keeps the last of duplicate keys and
// turns invalid UTF-8 into U+FFFD; YAML reads "yes" as true in some dialects. None of
// that gets through here: a key in another case ("Scope"), an unknown key, a duplicate
// key, invalid UTF-8 (a lone surrogate escape too), a value of the wrong type ("negate":
// "yes"), null in a field whose type has none ("condition": null would read as "", and
// clear it in an edit; only predicate, applies_when and fix take null, which removes
// them), a name with space around it ("ab\n" would be trimmed to another name) and data
// after the document are errors, and every rule is checked with streamrules.Validate. A
// UTF-8 byte order mark at the start is skipped. An error is an [*Error] with the file,
// line, rule and field:
//
//	rules.yaml:11: rule #2 "shell_is_ours": unknown field "Repeat": field names are case-sensitive, did you mean "repeat"?
//
// [Error.Field] names the field for a caller that branches on it (the master's tools put
// it in their {"ok":false,"field":…} output); a rule Validate rejects wraps its
// *streamrules.ValidationError.
//
// # Bounded
//
// No input costs more than a bounded time and memory, however it is built. YAML anchors
// and aliases are refused (a rule file has no use for them; ten levels of ten aliases fit
// in 500 bytes and expand to 10^10 strings), objects and lists nest at most [MaxDepth]
// (32) levels (the deepest valid predicate is at 19), and an input is at most [MaxBytes]
// (4 MiB), a YAML one at most 100,000 tokens (about 3,000 rules as export writes them).
// Each is checked before the YAML parser builds anything, and named at its line:
//
//	bomb.yaml:1: an anchor (&): a rule file has no anchors or aliases, write the value out
//	deep.yaml:2: nested deeper than 32 levels
//
// [Load] reads at most MaxBytes+1 bytes of a file. The same strict checks serve this
// module's other readers (the rule tools' input, replay's transcripts, the command's
// standard input) through an internal package.
//
// # Round trip
//
// [Marshal] writes what [Parse] reads back unchanged: Parse(Marshal(s)) == s for every
// valid set, in both formats (a fuzz test holds it), and a second export is byte for byte
// the first. YAML strings are written plainly when they are names or scopes and
// double-quoted otherwise, so no YAML reading rule can change them.
//
// # Partial edits
//
// [Apply] changes some fields of a stored rule and keeps the rest, through the rule's own
// JSON: the master's edit tool and `streamrules rules edit` use it.
package rulefile
