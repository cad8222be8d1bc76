// Package lazydfa answers "does this regular expression match anywhere in the
// text?" for Go regular expressions, exactly as regexp.MatchString does, at a
// cost per byte that does not grow with the pattern.
//
// Go's regexp runs a Thompson NFA: per byte it steps every live thread, so a
// pattern that keeps many threads alive (`\w+\s+\w+…`, `(?i)\bf[\W_]*u…`) costs
// tens of nanoseconds per byte and more. A DFA steps one state per byte. Building
// the whole DFA up front can take exponential space, so, as RE2 does, the states
// are built lazily, when the text first needs them, and kept: a warm DFA is one
// table load per ASCII byte.
//
// A state is the set of NFA instructions pending after a character, plus what
// the empty-width assertions need to know of that character (start of text, a
// newline, a word character, anything else). The step from a state on the next
// rune r first follows the empty transitions under the assertions that hold
// between the previous character and r (syntax.EmptyOpContext), which is where
// a match is seen, then consumes r; at the end of the text it follows them under
// the assertions that hold there. Runes are classed at compile time: two ASCII
// bytes are in one class when every rune instruction and every assertion treats
// them alike, so a state's table has one entry per class. Other runes take a
// slower path: a sorted list of up to 64 runes per state, read without a lock; a rune
// past those is stepped again under the DFA's lock each time, and counts against the
// budget below.
//
// The DFA may combine several programs (patterns); a state then says which
// patterns matched on entering it. The matching answers whether any, or which,
// patterns matched; not where.
//
// # Bounds
//
// The states a DFA keeps are bounded (MaxStates); past the bound the cache is
// dropped and built again. A run that needs a new state for every few bytes
// (a pattern whose DFA is exponential, on a text that keeps finding new
// states) gives up and says so, and the caller runs regexp instead: so a match
// never costs much more than regexp's own.
//
// A DFA that validation explored whole (Explore, which says how many states it has and
// what building them costs) can be owned (Own): its runs never give up before it holds
// all its states, and those states are not held to the memory limit. A caller whose
// pattern regexp would run too slowly relies on that; the construction is then a cost
// bounded once per DFA, not a reason to hand the text to regexp.
//
// # Simulation
//
// Simulate prunes the states of a DFA: it computes which pending instructions simulate
// which (every match from one is a match of the same pattern from the other), one
// relation per kind of the character before, and a new state keeps only the instructions
// no other one of it (nor, for an unanchored search, the start) simulates. The verdicts
// are regexp's (the differential test); the states of a bounded repetition over a wide
// class, `[ A-Z0-9_-]{0,20}PRIVATE KEY`, fall from 976 to 368. The relation is bounded
// in instructions and work: past them Simulate does nothing and says so.
//
// A DFA is safe for concurrent use: readers follow transitions with atomic loads;
// new states and transitions are made under a mutex.
//
// # Files
//
//   - dfa.go: the DFA type, MaxStates and the kinds of character the
//     assertions read.
//   - build.go: Compile and New, classing runes, the bytes that leave idle.
//   - memlimit.go: the process-wide memory limit on states.
//   - cache.go: states and their cache: making, indexing and dropping them.
//   - step.go: the NFA step and closure a new state is made from.
//   - run.go: runs over a whole text: Match, MatchRead, Which, the budget.
//   - cursor.go: the streaming Cursor (Start, Feed, End).
//   - explore.go: MatchesEvery, Explore and Own: questions about the DFA itself, and
//     the owning of a DFA explored whole.
//   - simulate.go: Simulate, the simulation relation, and the pruning of new states.
package lazydfa
