// Package regexgen generates random Go regular expressions for differential tests:
// patterns built from the constructs that trouble matchers (case folding beyond ASCII,
// U+FFFD and invalid UTF-8, empty-width assertions, flags, repetitions, alternations),
// to be compared with regexp's own verdicts. Tests of internal/lazydfa and
// internal/multimatch share it.
package regexgen
