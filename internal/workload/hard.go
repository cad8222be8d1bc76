package workload

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
)

// This file generates the rule sets that are hard for a literal prefilter:
// real topic words, very common words, short keywords, rules without a
// literal, rules a text satisfies, anchored and fixed-prefix rules.

// topicWords are real words of the topics assistant answers cover (code,
// databases, travel, money), four letters or more: rules written with them
// meet their literals in real answers, unlike the made-up words of
// RealisticPatterns.
var topicWords = strings.Fields(`
server client request response header proxy nginx gunicorn python flask
query index table column schema postgres database connection transaction
timeout worker thread process memory cache error warning config install
update upgrade deploy docker container cluster service systemd network
certificate domain redirect static upload download script function method
class module package import return string number value array object field
token secret password account login email phone address payment invoice
price budget ticket hotel flight train station museum beach market dinner
lunch morning evening weekend tour guide booking refund discount total
interest loan mortgage principal rate payment monthly annual insurance
property escrow lender balance credit debit bank transfer savings
report latency throughput metric dashboard alert incident outage backup
restore migration version release branch commit merge review test build
image photo picture screenshot attachment video audio file folder path
`)

// TopicPatterns is RealisticPatterns with real topic words instead of
// made-up ones (the head rules are the same).
func TopicPatterns(n int, seed int64) []string {
	out := make([]string, 0, n)
	for i := 0; i < n && i < len(headPatterns); i++ {
		out = append(out, headPatterns[i])
	}
	g := gen{r: rand.New(rand.NewPCG(uint64(seed), 0x3c6ef372fe94f82b)), vocab: topicWords}
	seen := map[string]bool{}
	for len(out) < n {
		p := g.rule()
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// veryCommon are the words every English answer is full of.
var veryCommon = strings.Fields(`the you is to and of in it for that this with are be on
as can your or if not an at by from have will use`)

// CommonWordPatterns returns n rules whose literals are all very common words
// ("the", "you", "is"): a phrase of two of them within a short gap, or one
// of them next to a topic word.
func CommonWordPatterns(n int, seed int64) []string {
	r := rand.New(rand.NewPCG(uint64(seed), 0xa54ff53a5f1d36f1))
	pick := func(l []string) string { return l[r.IntN(len(l))] }
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var p string
		switch r.IntN(3) {
		case 0:
			p = fmt.Sprintf(`(?i)\b%s\b.{0,%d}\b%s\b`, pick(veryCommon), 10+r.IntN(30), pick(veryCommon))
		case 1:
			p = fmt.Sprintf(`(?i)\b(?:%s|%s)\s+%s\b`, pick(veryCommon), pick(veryCommon), pick(topicWords))
		default:
			p = fmt.Sprintf(`(?i)\b%s\s+%s\s+%s\b`, pick(veryCommon), pick(veryCommon), pick(commonWords))
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// ShortKeywordPatterns returns n case-insensitive keyword rules of two or
// three letters each ("(?i)\b(?:ab|xyz)\b"): abbreviations, tickers, codes.
func ShortKeywordPatterns(n int, seed int64) []string {
	r := rand.New(rand.NewPCG(uint64(seed), 0x510e527fade682d1))
	word := func() string {
		b := make([]byte, 2+r.IntN(2))
		for i := range b {
			b[i] = byte('a' + r.IntN(26))
		}
		return string(b)
	}
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		k := 1 + r.IntN(3)
		ws := make([]string, k)
		for i := range ws {
			ws[i] = word()
		}
		p := fmt.Sprintf(`(?i)\b(?:%s)\b`, strings.Join(ws, "|"))
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// literalFreeForms are rules with no selective literal: shapes, not words.
var literalFreeForms = []string{
	`\d{%d,}`,
	`[\p{So}]{%d,}`,
	`^.{0,%d}$`,
	`\b[A-Z]{%d,}\b`,
	`\s{%d,}`,
	`[^\x00-\x7F]{%d,}`,
	`(?m)^.{%d,}$`,
	`\b\w{%d,}\b`,
	`[.!?]{%d,}`,
	`\p{Lu}{%d,}`,
	`(?m)^\s*\d{%d,}\.`,
	`\b\d+(?:\.\d+){%d,}\b`,
	`[\x{1F300}-\x{1FAFF}]{%d,}`,
	`(?m)^[-*] .{%d,}$`,
	`\(\s*\){%d,}`,
	`\b[a-z]+[A-Z][a-z]+\w{%d,}`,
}

// LiteralFreePatterns returns n rules without a selective literal
// (\d{3,}, [\p{So}]+, ^.{0,3}$, …), the forms above with their counts varied.
func LiteralFreePatterns(n int, seed int64) []string {
	r := rand.New(rand.NewPCG(uint64(seed), 0x9b05688c2b3e6c1f))
	forms := slices.Clone(literalFreeForms)
	r.Shuffle(len(forms), func(i, j int) { forms[i], forms[j] = forms[j], forms[i] })
	out := make([]string, n)
	for i := range out {
		// Every form with the counts 1, 2, 3, …: distinct for n up to 16·64.
		out[i] = fmt.Sprintf(forms[i%len(forms)], 1+(i/len(forms))%64)
	}
	return out
}

// SatisfiedPatterns returns n rules that all match text (for negate rules
// that are satisfied, as "the answer must mention X" rules mostly are): a
// word of text, or two adjacent words, case-insensitively and at word edges.
func SatisfiedPatterns(n int, text string, seed int64) []string {
	words := regexp.MustCompile(`\b[A-Za-z]{4,}\b`).FindAllString(text, -1)
	r := rand.New(rand.NewPCG(uint64(seed), 0x1f83d9abfb41bd6b))
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var p string
		i := r.IntN(len(words))
		switch r.IntN(3) {
		case 0:
			p = fmt.Sprintf(`(?i)\b%s\b`, words[i])
		case 1:
			p = fmt.Sprintf(`(?i)\b%s\b.{0,%d}`, words[i], 1+r.IntN(40))
		default:
			p = fmt.Sprintf(`(?i)%s|\b%s\b`, strings.ToUpper(words[i]), words[(i+1)%len(words)])
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// AnchoredPatterns returns n rules on how an answer begins: "(?i)^\s*(word)\b".
func AnchoredPatterns(n int, seed int64) []string {
	r := rand.New(rand.NewPCG(uint64(seed), 0x5be0cd19137e2179))
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(`(?i)^\s*(%s|%s)\b`, topicWords[r.IntN(len(topicWords))], veryCommon[r.IntN(len(veryCommon))])
	}
	return out
}

// FixedPrefixPatterns returns n token rules with a fixed case-sensitive
// prefix: "ABC_[A-Za-z0-9]{k}".
func FixedPrefixPatterns(n int, seed int64) []string {
	r := rand.New(rand.NewPCG(uint64(seed), 0x6a09e667bb67ae85))
	out := make([]string, n)
	for i := range out {
		b := make([]byte, 3)
		for j := range b {
			b[j] = byte('A' + r.IntN(26))
		}
		out[i] = fmt.Sprintf(`%s_[A-Za-z0-9]{%d}`, b, 16+r.IntN(24))
	}
	return out
}
