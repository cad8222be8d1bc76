package workload

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode/utf8"
)

// This file generates a realistic rule mix and realistic LLM answers so that
// benchmarks in every package measure the same workload.

// headPatterns open every generated rule set: hand-written rules of each kind
// the engine sees, including some without any usable literal.
var headPatterns = []string{
	`(?i)\b(can'?t|cannot|unable to)\b.{0,40}\b(see|view|look at)\b`,
	`(?i)\bas an ai(?: language model)?\b`,
	`(?m)^\s*#{1,6} `,
	`!\[[^\]]*\]\([^)]*\)`,
	`[\x{1F600}-\x{1F64F}]`,
	`^.{0,3}$`,
	`\d{4}`,
	`-----BEGIN (?:RSA |EC )?PRIVATE KEY-----`,
	`(?i)\bignore (?:all )?(?:previous|prior) instructions\b`,
	`\bAKIA[0-9A-Z]{16}\b`,
	`(?s)^\s*$`,
	`[\w.+-]+@[\w-]+\.[\w.-]+`,
	`(?i)\b(?:password|passwd|secret)\s*[:=]\s*\S+`,
	`https?://\S+\.(?:exe|scr|bat)\b`,
	`(?i)^(?:sure|certainly|absolutely)[!,.]`,
	`\b\d{3}-\d{2}-\d{4}\b`,
}

// FireText is a sentence that makes exactly rule 0 of RealisticPatterns fire.
const FireText = "Unfortunately I cannot see the attached screenshot"

// Syllables of the made-up vocabulary of generated rules. They are chosen so
// that their combinations are not English words, which keeps answers built
// from commonWords free of matches while still sharing some substrings.
var syllables = []string{
	"zor", "vex", "qua", "blix", "drak", "mun", "tyx", "glo", "prax", "fen",
	"kly", "rov", "snu", "thra", "yil", "zep", "wox", "jun", "cav", "nix",
	"oph", "gry", "lum", "kesh", "bel", "tor", "vin", "dax", "mir", "quo",
	"sel", "fra", "hul", "pim", "ros", "tav", "ul", "zan", "ek", "ob",
}

// commonWords is the vocabulary of generated answers.
var commonWords = strings.Fields(`
the of and to in is that for it as was with be by on not he this are or his
from at which but have an they you were her she there been one all we their has
would when if so no will more about up out who get them some could what into
than then its only other new also two may these see view look like time first
way could people made after many must before through back years where much your
well should because each just those how too little state good very make world
still own see men work long get here between both life being under never day
same another know while last might us great old year off come since against go
came right used take three states himself few house use during without again
place around however home small found thought went say part once general high
upon school every don does got united left number course war until always away
something fact though water less public put think almost hand enough far took
head yet government system better set told nothing night end why called
didn't eyes find going look asked later knew point next program city business
give group toward young days let room president side social given present
several order national possible rather second face per among form important
often things looked early white case john become large big need four within felt
along children saw best church ever least power development light thing seemed
family interest want members mind country area others done turned although open
god service problem certain kind different thus began door help means sense
whole matter perhaps itself york times law human line above name example action
company hands local show whether five history gave either today act feet across
taken past quite anything having seen death experience body word half really
field am car words already themselves information tell together college shall
money period held keep sure probably free seems political real behind cost
answer question file data user value result function approach step steps note
consider following method option default config server request response error
model output input query table index cache update version support feature test
design review report detail details summary context section chapter image`)

var unicodeWords = strings.Fields(`café naïve résumé über coöperate façade
déjà vu Straße señor niño 日本語 中文 données mañana — “quoted” ‘single’ …
Ελληνικά русский язык ½ ±`)

var openers = strings.Fields(`Here The To In This When For Yes Overall Based`)

// RealisticPatterns returns n rules in the mix of the rule engine: mostly
// case-insensitive keyword and phrase rules with \b, some case-sensitive
// tokens, multi-line anchored and markdown rules, emoji classes, mixed-case
// rules and a few without any literal. The result depends only on n and seed;
// rules are prefixes of one another across n for the same seed.
func RealisticPatterns(n int, seed int64) []string {
	out := make([]string, 0, n)
	for i := 0; i < n && i < len(headPatterns); i++ {
		out = append(out, headPatterns[i])
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x6a09e667f3bcc909))
	g := gen{r: r}
	for len(out) < n {
		out = append(out, g.rule())
	}
	return out
}

type gen struct {
	r     *rand.Rand
	vocab []string // words of the rules; nil: made-up words from syllables
}

func (g gen) pick(list []string) string { return list[g.r.IntN(len(list))] }

// word is a made-up word of two or three syllables.
func (g gen) word() string {
	if g.vocab != nil {
		return g.pick(g.vocab)
	}
	n := 2 + g.r.IntN(2)
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(g.pick(syllables))
	}
	return b.String()
}

// phrase is one or two made-up words.
func (g gen) phrase() string {
	if g.r.IntN(4) == 0 {
		return g.word() + " " + g.word()
	}
	return g.word()
}

// decorate adds the small optional parts real rules have.
func (g gen) decorate(w string) string {
	switch g.r.IntN(6) {
	case 0:
		return w + "s?"
	case 1:
		return w + "(?:ing|ed)?"
	case 2:
		if i := strings.IndexByte(w, ' '); i > 0 {
			return w[:i] + `\s+` + w[i+1:]
		}
	}
	return w
}

func (g gen) alt(k int, item func() string) string {
	items := make([]string, k)
	for i := range items {
		items[i] = item()
	}
	return strings.Join(items, "|")
}

func (g gen) upper() string { return strings.ToUpper(g.word()) }

func (g gen) rule() string {
	x := g.r.IntN(100)
	switch {
	case x < 30: // phrase pair with a bounded gap
		a := g.alt(1+g.r.IntN(4), func() string { return g.decorate(g.phrase()) })
		b := g.alt(1+g.r.IntN(3), func() string {
			if g.r.IntN(2) == 0 {
				return g.pick(commonWords)
			}
			return g.word()
		})
		gap := []int{20, 40, 80}[g.r.IntN(3)]
		if g.r.IntN(3) == 0 {
			return fmt.Sprintf(`(?i)\b(%s)\b.{0,%d}\b(%s)\b`, b, gap, a)
		}
		return fmt.Sprintf(`(?i)\b(%s)\b.{0,%d}\b(%s)\b`, a, gap, b)
	case x < 55: // keyword list
		return fmt.Sprintf(`(?i)\b(?:%s)\b`, g.alt(1+g.r.IntN(6), func() string { return g.decorate(g.phrase()) }))
	case x < 63: // case-sensitive tokens
		switch g.r.IntN(3) {
		case 0:
			return fmt.Sprintf(`\b%s_[A-Z0-9]{8,}\b`, g.upper())
		case 1:
			return fmt.Sprintf(`\b%s-[A-Za-z0-9]{16,}`, g.word()[:3])
		default:
			w := g.word()
			return strings.ToUpper(w[:1]) + w[1:]
		}
	case x < 71: // plain case-insensitive phrase
		return fmt.Sprintf(`(?i)%s %s`, g.word(), g.word())
	case x < 77: // markdown
		w := g.word()
		switch g.r.IntN(5) {
		case 0:
			return fmt.Sprintf(`(?m)^\s*#{1,6}\s+(?i:%s)`, w)
		case 1:
			return fmt.Sprintf(`!\[(?i:%s)[^\]]*\]\([^)]*\)`, w)
		case 2:
			return fmt.Sprintf(`\[[^\]]*\]\(https?://(?:www\.)?%s\.(?:com|io)[^)]*\)`, w)
		case 3:
			return fmt.Sprintf("(?m)^```%s\\s*$", w)
		default:
			return fmt.Sprintf(`(?m)^>\s*(?i:%s)`, w)
		}
	case x < 82: // emoji
		w := g.word()
		switch g.r.IntN(4) {
		case 0:
			return fmt.Sprintf(`[\x{1F600}-\x{1F64F}]\s*(?i:%s)`, w)
		case 1:
			return fmt.Sprintf(`(?i:%s)\s*[\x{1F300}-\x{1F5FF}]`, w)
		case 2:
			return fmt.Sprintf(`(?i)%s\s*\x{1F525}{2,}`, w)
		default:
			return fmt.Sprintf(`[\x{1F900}-\x{1F9FF}]{2,}\s*%s`, w)
		}
	case x < 88: // mixed case
		w := g.word()
		switch g.r.IntN(3) {
		case 0:
			return fmt.Sprintf(`Order-(?i:%s)-\d+`, w)
		case 1:
			return fmt.Sprintf(`(?i:%s)Client\.`, w)
		default:
			return fmt.Sprintf(`%s(?i)_%s`, strings.ToUpper(w), g.word())
		}
	case x < 94: // structured, weak literals
		w := g.word()
		switch g.r.IntN(4) {
		case 0:
			return fmt.Sprintf(`[\w.+-]+@%s\.(?:com|org)`, w)
		case 1:
			return fmt.Sprintf(`\b%s-\d{4}\b`, w)
		case 2:
			return fmt.Sprintf(`\$\d+(?:\.\d{2})?\s*(?i:%s)`, w)
		default:
			return fmt.Sprintf(`(?i)\b%s\s*[:=]\s*\d{3,}`, w)
		}
	default: // non-ASCII case-insensitive
		w := g.word()
		switch g.r.IntN(3) {
		case 0:
			return fmt.Sprintf(`(?i)%sé\b`, w)
		case 1:
			return fmt.Sprintf(`(?i)\büber\s+%s`, w)
		default:
			return fmt.Sprintf(`(?i)\b%s\s+straße\b`, w)
		}
	}
}

// RealisticText returns an answer-like text of exactly size bytes (valid
// UTF-8) made of English prose with light markdown and some non-ASCII words.
// It matches no rule of RealisticPatterns; when fire is not empty it is
// inserted as a sentence near the middle.
func RealisticText(size int, seed int64, fire string) string {
	r := rand.New(rand.NewPCG(uint64(seed), 0xbb67ae8584caa73b))
	g := gen{r: r}
	var b strings.Builder
	b.Grow(size + 256)
	b.WriteString(g.pick(openers))
	b.WriteString(" is what you asked for, in short. ")
	sentence := func() {
		n := 5 + r.IntN(16)
		for i := 0; i < n; i++ {
			w := g.pick(commonWords)
			switch {
			case r.IntN(40) == 0:
				w = g.pick(unicodeWords)
			case r.IntN(60) == 0:
				w = "`" + w + "`"
			case r.IntN(80) == 0:
				w = "**" + w + "**"
			case r.IntN(150) == 0:
				w = "[" + w + "](https://example.com/docs/" + g.pick(commonWords) + ")"
			}
			if i == 0 && 'a' <= w[0] && w[0] <= 'z' {
				w = string(w[0]-'a'+'A') + w[1:]
			}
			b.WriteString(w)
			if i < n-1 {
				if r.IntN(12) == 0 {
					b.WriteString(", ")
				} else {
					b.WriteByte(' ')
				}
			}
		}
		b.WriteString([]string{". ", ". ", ". ", "? ", ": ", "! "}[r.IntN(6)])
	}
	for b.Len() < size {
		switch r.IntN(6) {
		case 0:
			b.WriteString("\n\n")
		case 1:
			b.WriteString("\n- ")
		}
		sentence()
	}
	text := b.String()
	if fire != "" && len(fire)+2 > size {
		fire = ""
	}
	limit := size
	if fire != "" {
		limit = size - len(fire) - 2
	}
	for limit > 0 && limit < len(text) && !utf8.RuneStart(text[limit]) {
		limit--
	}
	text = text[:limit]
	if fire != "" {
		at := strings.LastIndex(text[:len(text)/2], ". ")
		if at < 0 {
			at = 0
		} else {
			at += 2
		}
		text = text[:at] + fire + ". " + text[at:]
	}
	if len(text) < size {
		text += strings.Repeat(" ", size-len(text))
	}
	return text[:size]
}

// Word returns a made-up word of two or three syllables drawn with r, as the
// rules of RealisticPatterns use.
func Word(r *rand.Rand) string { return gen{r: r}.word() }

// CommonWord returns a common English word drawn with r, as the texts of
// RealisticText use.
func CommonWord(r *rand.Rand) string { return commonWords[r.IntN(len(commonWords))] }
