// Package multimatch evaluates many Go regular expressions against one text
// and reports exactly the patterns whose regexp.MatchString would be true,
// at a cost that grows far slower than the number of patterns.
//
// # Prefilter
//
// New parses every pattern the way regexp.Compile does (regexp/syntax with
// syntax.Perl, then Simplify) and derives from the syntax tree up to three
// required literal groups: sets of byte strings such that every match of the
// pattern contains an element of each group. For example
//
//	(?i)\b(can'?t|cannot|unable to)\b.{0,40}\b(see|view|look at)\b
//
// requires one of {can't, cant, cannot, unable to} and one of
// {see, view, look at} (case-insensitively). The derivation tracks, for every
// subexpression, a finite superset of its language when one is small, the
// sets its matches must start and end with, and its required groups:
// concatenations multiply adjacent literal sets (can'?t yields {cant, can't})
// and keep every child's requirements, alternations take the union of one
// requirement per branch, x+ and x{n,m} with n >= 1 keep x's requirements,
// and optional or starred parts, empty-width assertions (\b, ^, $) and big
// classes such as . or \w require nothing. A cost model based on English
// letter frequencies picks the most selective groups; a pattern without a
// selective group (such as ^.{0,3}$) is run on every text.
//
// All literals of all patterns, deduplicated, go into one Aho–Corasick
// automaton over byte classes in which upper-case ASCII letters share the
// class of their lower-case letter, so a single pass over the text, without
// copying it, finds every literal case-insensitively. Literals that are
// (partly) case-sensitive are then checked byte for byte at the occurrence.
// Root-near states have complete (DFA) rows; deeper ones are sparse with
// failure links and laid out depth-first. A pattern becomes a candidate when
// each of its groups has occurred; only candidates and the always-run
// patterns are verified, in ascending order.
//
// # Verification
//
// Before anything else, Analyze cuts the unbounded and optional repetitions at
// a pattern's edges, which does not change whether a text matches:
// (?s)[\s\S]{0,1000}z matches where z does, https?://\S+ where https?://\S
// does. The cut form is what runs. A candidate is then verified where it can
// match, not over the whole text: when every match lies within known
// distances of an occurrence of one of its literals (widths come from the
// syntax tree), only windows around the occurrences are run, widened until
// the empty-width assertions (\b, ^, $, \A, \z) read the same at their edges
// as in the whole text; when only the part before the literal is bounded, a
// run anchored just before each occurrence stops once no thread is left.
// Patterns anchored at the start, and small sets of patterns with a fixed
// prefix, skip the automaton: their runs cost less than its pass.
//
// Every run, window or whole text, goes through the pattern's lazy DFA
// (internal/lazydfa), made when the pattern is first verified: one table step
// per byte however many threads regexp would keep alive, which is what makes
// whole-text runs, literal-free rules and dense windows cheap. Where a DFA
// gives up (it would build a new state every few bytes of this text, or the
// process's DFAs are at their memory limit), regexp runs instead, with the
// same verdict.
//
// Patterns that are run over the whole text whenever they are candidates (no
// window: no literal, or one so common that its windows would cover the text;
// or bounded on one side only) are grouped into combos of up to 64 patterns
// and 1,500 instructions, each with one lazy DFA of all its members' programs.
// When two or more of a combo's members are candidates, one pass of its DFA
// says which of them match (lazydfa.DFA.Which), and the patterns whose
// windows the cost model expects to be dense ride along (combo.go). A combo
// that gives up, or stops at its 256th match, leaves its undecided
// members to be verified one by one. Analyses depend on
// the pattern alone; Build makes a set from analyses a caller keeps, so an
// edit re-analyses only what changed.
//
// # Why the result is exact
//
// The automaton is only a filter: every reported index has been confirmed by
// the pattern's own program (its cut form, which matches the same texts, run on
// a window where the assertions read as in the text, by its DFA or by regexp,
// which agree: lazydfa's differential tests; a combo's DFA is its members'
// programs side by side, each reported as its own), so there are no false
// positives. There are no
// false negatives because each group is a necessary condition on the bytes of
// the text:
//
//   - The regexp engine decodes the text as UTF-8 and matches a literal rune
//     r other than U+FFFD only against r's exact UTF-8 encoding. Since an
//     invalid byte decodes to U+FFFD, a literal or class that contains U+FFFD
//     can match bytes other than its encoding; such runes never contribute a
//     literal. Surrogates, which never match, are ignored likewise.
//   - Case folding follows the engine: a (?i) rune matches exactly the runes
//     of its unicode.SimpleFold orbit. Orbits that leave ASCII are expanded
//     into separate literals (k also matches U+212A KELVIN SIGN, s matches
//     U+017F LONG S), so "(?i)kiss" requires one of kiss, kiſs, ... ; only the
//     pairs a/A ... z/Z are left to the case-insensitive automaton.
//   - Character classes are expanded into their runes when small, or
//     summarised by the UTF-8 leading bytes of their runes.
//   - Sets that grow beyond the limits are cut to prefixes or suffixes of
//     their elements, which is still required, never to anything else.
//   - A required substring of any subexpression of a concatenation is
//     required by the concatenation, so groups can be combined with "and".
//
// The exactness is checked by a differential test against regexp over a
// generated rule corpus, by randomly generated patterns, and by a fuzz test.
//
// # Use
//
// A Set is immutable and safe for concurrent use; Match keeps its scratch
// state in a sync.Pool and does not allocate when dst has capacity.
// The benchmark workload (generated and real rules and answers) is
// internal/workload, which tests and benchmarks import.
//
// # Files
//
//   - multimatch.go: Set, New, Build and Match, the scan for candidates.
//   - analysis.go: Analysis and Analyze, the anchor and its window, the
//     pattern's regexp and lazy DFAs.
//   - trim.go: cutting a pattern's unbounded edges (x* to empty, x+ to x).
//   - width.go: a match's widest span and the context its edges read.
//   - cost.go: what running a pattern costs in threads (live, restarted, wide).
//   - literal.go: the extraction limits and lit, a required byte string.
//   - litset.go: sets of literals: union, product, shrinking, minimizing.
//   - litcost.go: the cost model, how often a literal is expected per byte.
//   - litinfo.go: info and analyze, what every match of a subexpression holds.
//   - literalrun.go: analyze of a literal string in one pass.
//   - litrequired.go: choosing the required groups from an info.
//   - memo.go: one analysis's memo of element infos and minimized groups.
//   - arena.go: the arena one Analyze takes literal sets and infos from.
//   - automaton.go: the Aho–Corasick automaton over byte classes.
//   - window.go: verifying a candidate in windows around its anchor.
//   - span.go: Analysis.Span, where the cut form first matches, in a bounded window.
//   - combo.go: combined runs, one lazy DFA for several whole-text patterns.
//   - print.go: printing a syntax tree fast when it has large classes.
package multimatch
