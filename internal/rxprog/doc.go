// Package rxprog answers questions about a regular expression's parse tree and compiled
// program (regexp/syntax) that the release and early paths ask before they stream: which
// bytes a match can start with ([FirstBytes], [StartBytes]), the fewest runes a match
// consumes ([MinLen]), whether a pattern holds an assertion ([HasAssertion]), which rune
// instructions can take a match's last rune ([LastInsts]) and whether two sets of rune
// instructions accept a rune in common ([Meet]). Each answer is conservative: where it
// cannot tell, it says so (nil, true) and callers take the slow, always-right path.
//
// It holds the analysis only; what the root package decides with it (when held speech
// may go, when two repairs can run in a chain) stays in the root.
package rxprog
