// Package workload generates the benchmark and test workloads of the rule
// engine, so that benchmarks in every package measure the same mix. It is
// imported by tests and benchmarks only: no production build compiles it.
//
// Two kinds of workload:
//
//   - Generated: RealisticPatterns returns a rule set in the mix of the engine
//     (keyword and phrase rules, case-sensitive tokens, anchored, markdown and
//     emoji rules, a few without any literal), and RealisticText an answer-like
//     text that matches none of them unless given a sentence to fire
//     (FireText fires exactly the first rule). The generators in hard.go make the
//     sets that are hard for a literal prefilter: TopicPatterns,
//     CommonWordPatterns, ShortKeywordPatterns, LiteralFreePatterns,
//     SatisfiedPatterns, AnchoredPatterns and FixedPrefixPatterns.
//   - Real: ReadRules and ReadAnswers read the corpus of real guardrail rules
//     and real assistant answers in internal/workload/testdata/realworld,
//     and AnswerText lays the answers end to end to any size.
//
// Every generator depends only on its arguments (n, seed, size), so a
// benchmark is the same workload on every run and every machine.
//
// # Files
//
//   - corpus.go: RealisticPatterns, RealisticText and their vocabulary.
//   - hard.go: the rule sets that are hard for a literal prefilter.
//   - realworld.go: reading the real rules and answers, AnswerText.
package workload
