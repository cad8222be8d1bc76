package workload

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRealisticTextSize(t *testing.T) {
	for _, size := range []int{0, 1, 17, 512, 4096, 65536} {
		for _, fire := range []string{"", FireText} {
			text := RealisticText(size, int64(size), fire)
			if len(text) != size || !utf8.ValidString(text) {
				t.Errorf("RealisticText(%d, %q): len %d valid %v", size, fire, len(text), utf8.ValidString(text))
			}
			if fire != "" && size > 2*len(fire) && !strings.Contains(text, fire) {
				t.Errorf("RealisticText(%d) lost the fire text", size)
			}
		}
	}
}
