package streamrules

import (
	"regexp"
	"strings"
	"testing"

	corpus "github.com/streamrules/streamrules/internal/workload"
)

// TestSecretShapesValidate: the secret-scanning shapes that wide counted classes and word
// boundaries kept out (more than 128 wide instructions, or a thread estimate past the
// bound, where the DFA is in fact small) validate, and judge planted tokens, near misses
// and the secrets workload's text as regexp does. Of the 221-rule set, exactly the
// case-insensitive private-key header with a counted class is refused.
func TestSecretShapesValidate(t *testing.T) {
	t.Parallel()
	hex40 := strings.Repeat("0123456789abcdef", 3)[:40]
	tests := []struct {
		name, pattern string
		texts         []string
	}{
		{"sgp", secretShapes[4], []string{"token " + hex40 + " end", "sgp_local_" + hex40, "x" + hex40 + "x", hex40[:39]}},
		{"hvs", secretShapes[3], []string{"VAULT_TOKEN=hvs." + strings.Repeat("aB3_-", 20) + "\n", "hvs." + strings.Repeat("a", 89) + " ", "s.ABCDEFGHIJKLMNOPQRSTUVWX;", "xs.ABCDEFGHIJKLMNOPQRSTUVWX;"}},
		{"hex40", `\b[a-fA-F0-9]{40}\b`, []string{hex40, "g" + hex40, hex40 + "中"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j, err := NewJudge(textRule(tt.name, tt.pattern), testEnvs...)
			if err != nil {
				t.Fatalf("%q: %v", tt.pattern, err)
			}
			re := regexp.MustCompile(tt.pattern)
			for _, text := range append(tt.texts, corpus.SecretText(4096, 1)) {
				if got, want := j.Check(text, nil).Status == StatusViolation, re.MatchString(text); got != want {
					t.Errorf("%q on %.60q: fired %v, regexp %v", tt.pattern, text, got, want)
				}
			}
		})
	}
	var refused []string
	for _, p := range corpus.SecretPatterns(221) {
		if checkRegex("condition", p) != nil {
			refused = append(refused, p)
		}
	}
	if want := []string{`(?i)-----BEGIN[ A-Z0-9_-]{0,20}PRIVATE KEY(?: BLOCK)?-----`}; strings.Join(refused, "\n") != strings.Join(want, "\n") {
		t.Errorf("refused of the 221: %q; want %q", refused, want)
	}
}
