package workload

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// This file reads the corpus of real guardrail rules and real assistant
// answers (internal/workload/testdata/realworld) and lays answers end to end.

// ReadRules reads a rule corpus: one pattern per line, '#' lines and blank
// lines skipped.
func ReadRules(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	return out, nil
}

// ReadAnswers reads the answer*.md files of dir, in name order.
func ReadAnswers(dir string) ([]string, error) {
	names, err := filepath.Glob(filepath.Join(dir, "answer*.md"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []string
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, string(data))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("multimatch: no answer*.md in %s", dir)
	}
	return out, nil
}

// AnswerText returns size bytes (cut back to a rune boundary) of the answers
// laid end to end from answers[first], separated by a blank line, as a long
// answer or a chat's answers joined would read.
func AnswerText(answers []string, size, first int) string {
	var b strings.Builder
	for i := first; b.Len() < size; i++ {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(answers[i%len(answers)])
	}
	text := b.String()[:size]
	for len(text) > 0 && !utf8.ValidString(text) {
		text = text[:len(text)-1]
	}
	return text
}
