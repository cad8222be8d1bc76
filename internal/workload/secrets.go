package workload

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// This file makes the rule sets users bring from elsewhere: a secret-scanning set in the
// shapes public scanners use (vendor prefixes before counted classes, keyword-led
// assignments, private-key blocks, credentials in URLs, the generic keyword rule), PII
// rules (card, phone, e-mail, IBAN, SSN, IPv4), and word lists, each with a text in which
// values of those formats are planted. The rules are written for this project from the
// formats themselves; none is taken from a scanner's file.

// tokenFormats are vendor token formats: a literal prefix, then a counted class. The
// prefixes are the public, documented ones (and made-up ones in their style); the values
// the texts plant are random.
var tokenFormats = []struct{ prefix, class string }{
	{"ghp_", "[0-9A-Za-z]{36}"}, {"gho_", "[0-9A-Za-z]{36}"}, {"ghu_", "[0-9A-Za-z]{36}"},
	{"ghs_", "[0-9A-Za-z]{36}"}, {"ghr_", "[0-9A-Za-z]{36}"}, {"github_pat_", "[0-9A-Za-z_]{82}"},
	{"glpat-", `[\w-]{20}`}, {"glptt-", "[0-9a-f]{40}"}, {"GR1348941", `[\w-]{20}`},
	{"xoxb-", "[0-9A-Za-z-]{10,48}"}, {"xoxp-", "[0-9A-Za-z-]{10,48}"}, {"xapp-", "[0-9A-Za-z-]{10,80}"},
	{"sk_live_", "[0-9A-Za-z]{24,99}"}, {"rk_live_", "[0-9A-Za-z]{24,99}"}, {"pk_live_", "[0-9A-Za-z]{24,99}"},
	{"AKIA", "[0-9A-Z]{16}"}, {"ASIA", "[0-9A-Z]{16}"}, {"AIza", `[\w-]{35}`},
	{"npm_", "[0-9A-Za-z]{36}"}, {"pypi-AgEIcHlwaS5vcmc", `[\w-]{50,}`}, {"dop_v1_", "[a-f0-9]{64}"},
	{"doo_v1_", "[a-f0-9]{64}"}, {"shpat_", "[a-fA-F0-9]{32}"}, {"shpss_", "[a-fA-F0-9]{32}"},
	{"hf_", "[a-zA-Z]{34}"}, {"sq0atp-", `[\w-]{22}`}, {"sq0csp-", `[\w-]{43}`},
	{"SG.", `[\w-]{22}\.[\w-]{43}`}, {"key-", "[0-9a-f]{32}"}, {"dapi", "[a-f0-9]{32}"},
	{"pscale_tkn_", `[\w.-]{32,64}`}, {"pscale_pw_", `[\w.-]{32,64}`}, {"lin_api_", "[a-zA-Z0-9]{40}"},
	{"glc_", "[A-Za-z0-9+/]{32,400}={0,2}"}, {"nrak-", "[a-zA-Z0-9]{27}"}, {"NRJS-", "[a-f0-9]{19}"},
	{"sl.", `[\w=-]{135}`}, {"EAACEdEose0cBA", "[0-9A-Za-z]+"}, {"ya29.", `[\w-]{30,200}`},
	{"xkeysib-", "[a-f0-9]{64}-[a-zA-Z0-9]{16}"}, {"dckr_pat_", `[\w-]{27}`}, {"ATATT3", `[\w=-]{186}`},
	{"fio-u-", `[\w=-]{64}`}, {"FLWSECK_TEST-", "[a-h0-9]{32}-X"}, {"pul-", "[a-f0-9]{40}"},
	{"rubygems_", "[a-f0-9]{48}"}, {"sntrys_", "[A-Za-z0-9+/=]{40,200}"}, {"tfp_", "[a-zA-Z0-9]{40}"},
	{"vercel_", "[a-zA-Z0-9]{24}"}, {"sk-ant-api03-", `[\w-]{93}AA`}, {"sk-proj-", `[\w-]{40,160}`},
	{"hvs.", `[\w-]{90,120}`}, {"hvb.", `[\w-]{138,300}`}, {"atlasv1.", `[a-z0-9=_-]{60,70}`},
}

// vendors are the names keyword-led rules start from: a vendor name, then an assignment
// and a value of a fixed alphabet and length.
var vendors = strings.Fields(`adobe airtable algolia alibaba asana atlassian beamer bitbucket bittrex
clojars codecov coinbase confluent contentful databricks datadog defined discord droneci dropbox
etsy facebook fastly finicity finnhub flickr freshbooks gitter gocardless grafana harness heroku
hubspot intercom jfrog kraken kucoin launchdarkly linkedin lob mailchimp mailgun mapbox mattermost
messagebird netlify newrelic okta openai pagerduty plaid postman prefect pulumi rapidapi readme
sendbird sendinblue shippo sidekiq snyk squarespace sumologic telegram travisci trello twilio
twitch twitter typeform vault yandex zendesk zoom`)

// valueShapes are the alphabets and lengths of the keyword-led rules' values.
var valueShapes = []string{`[0-9a-f]{32}`, `[0-9a-z]{40}`, `[\w-]{32}`, `[0-9A-Za-z]{24}`, `[a-f0-9]{64}`, `[0-9]{8,10}:[\w-]{35}`, `[\w.=-]{20,64}`}

// SecretPatterns returns n secret-scanning rules (n up to 221 uses each shape family; past
// it the keyword rules repeat with other value shapes): vendor tokens behind \b, keyword-led
// assignments under (?i) with a counted value (lazy and greedy), private-key headers, key
// blocks, credentials in URLs, and the hex and JWT shapes. Deterministic.
func SecretPatterns(n int) []string {
	out := make([]string, 0, n)
	add := func(p string) {
		if len(out) < n {
			out = append(out, p)
		}
	}
	for _, f := range tokenFormats {
		add(`\b` + regexpQuote(f.prefix) + f.class + `(?:[\x60'"\s;]|\\[nr]|$)`)
	}
	for _, kind := range []string{"RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED ", "PGP ", ""} {
		add(`-----BEGIN ` + kind + `PRIVATE KEY(?: BLOCK)?-----`)
	}
	add(`(?i)-----BEGIN[ A-Z0-9_-]{0,20}PRIVATE KEY(?: BLOCK)?-----`)
	add(`(?i)\b(?:sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}|sgp_[a-fA-F0-9]{40})\b`)
	add(`\beyJ[\w-]{10,}\.eyJ[\w-]{10,}\.[\w-]{10,}`)
	add(`(?i)\b[a-z][a-z0-9+.-]{1,15}://[^\s:@/'"]{1,40}:[^\s:@/'"]{3,40}@[\w.-]{3,60}`)
	add(`\bamzn\.mws\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	add(`(?i)\baws_?secret_?access_?key\b[\s'"]{0,3}[=:][\s'"]{0,3}[A-Za-z0-9/+=]{40}\b`)
	for k := 0; len(out) < n; k++ {
		v := vendors[k%len(vendors)]
		shape := valueShapes[(k/len(vendors)+k)%len(valueShapes)]
		lazy := ""
		if k%3 == 0 {
			lazy = "?"
		}
		add(fmt.Sprintf(`(?i)\b%s(?:[\w.-]{0,20}%s)[\s'"]{0,3}(?:=|:|=>|:=)[\s'"]{0,5}(%s)(?:[\x60'"\s;]|\\[nr]|$)`, v, lazy, shape))
	}
	return out
}

// regexpQuote quotes the metacharacters of a token prefix.
func regexpQuote(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// SecretText returns about size bytes of an assistant's answer about configuring a
// service, with planted values in the formats SecretPatterns looks for: some whole (the
// rules that must fire) and some cut one character short or with a wrong prefix (which
// must not). Deterministic for a seed.
func SecretText(size int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 33))
	alnum := "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	rnd := func(alpha string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alpha[r.IntN(len(alpha))]
		}
		return string(b)
	}
	prose := []string{
		"To deploy the service, set the environment variables below and restart the worker.",
		"The configuration file lives in /etc/app/config.yaml; keep it out of version control.",
		"Rotate any credential that was ever committed, even to a private repository.",
		"Here is the snippet that reads the settings at start-up:",
		"The request returns 200 with a JSON body; on 401 check the token's scopes.",
		"Use a secrets manager rather than plain environment files in production.",
	}
	planted := []string{
		"export GITHUB_TOKEN=ghp_" + rnd(alnum, 36),
		"aws_access_key_id = AKIA" + rnd("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", 16),
		"STRIPE_KEY=sk_live_" + rnd(alnum, 30) + "\n",
		"slack: xoxb-" + rnd(alnum, 24) + " ",
		`"datadog_api_key": "` + rnd("0123456789abcdef", 32) + `"`,
		"postgres://admin:" + rnd(alnum, 12) + "@db.internal.example:5432/app",
		"-----BEGIN OPENSSH PRIVATE KEY-----\n" + rnd(alnum, 64) + "\n-----END OPENSSH PRIVATE KEY-----",
		"gitlab token glpat-" + rnd(alnum, 19) + "!",                    // one short: no match
		"the id AKIB" + rnd("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", 16), // wrong prefix
	}
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		b.WriteString(prose[r.IntN(len(prose))])
		b.WriteByte(' ')
		if i%3 == 2 {
			b.WriteString("\n\n```\n" + planted[(i/3)%len(planted)] + "\n```\n\n")
		}
	}
	return b.String()[:size]
}

// PIIPatterns returns the commonest guardrail rules for personal data: card numbers,
// phone numbers, e-mail addresses, IBANs, US social security numbers and IPv4 addresses,
// in the shapes guardrail sets write them.
func PIIPatterns() []string {
	return []string{
		`\b(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|3[47][0-9]{13}|6(?:011|5[0-9]{2})[0-9]{12})\b`,
		`\b\d{4}[ -]\d{4}[ -]\d{4}[ -]\d{4}\b`,
		`\b(?:\d[ -]?){13,16}\b`,
		`(?:\+|\b00)[1-9]\d{0,2}[ .-]?\(?\d{1,4}\)?(?:[ .-]?\d{2,4}){2,4}\b`,
		`\(?\b[2-9]\d{2}\)?[ .-]?\d{3}[ .-]?\d{4}\b`,
		`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`,
		`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,3})?\b`,
		`\b\d{3}-\d{2}-\d{4}\b`,
		`\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b`,
	}
}

// PIIText returns about size bytes of an answer with planted personal data: a card
// number, a phone number, an e-mail address, an IBAN and an IP address.
func PIIText(size int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 34))
	lines := []string{
		"Your order was charged to the card ending in 4242; the full number 4111 1111 1111 1111 is on file.",
		"Call us at +44 20 7946 0958 or write to support@example.org for a refund.",
		"Transfer the balance to DE89 3704 0044 0532 0130 00 before Friday.",
		"The server at 192.168.10.24 answered; the old one, 10.0.0.300, never did.",
		"The meeting moved to 3 pm; bring the printed agenda and last week's notes.",
		"Totals for the quarter rose by 12% on the same period last year.",
	}
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(lines[r.IntN(len(lines))])
		b.WriteByte(' ')
	}
	return b.String()[:size]
}

// Words returns n distinct made-up words (banned0, banned1, …), a word list as a
// moderation rule holds it: the same list is written either as n contains_regex atoms of
// one any_of, or as one alternation (WordAlternation).
func Words(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("banned%d", i)
	}
	return out
}

// WordAlternation is the words as one rule: (?i)\b(?:w1|w2|…)\b.
func WordAlternation(words []string) string {
	return `(?i)\b(?:` + strings.Join(words, "|") + `)\b`
}

// WordAtom is one word as an atom of an any_of: (?i)\bw\b.
func WordAtom(w string) string { return `(?i)\b` + w + `\b` }
