package tagskel

import (
	"strings"
	"testing"
)

// neutralizeInputs are 4 KB texts a tool or a user sends: no tag in the first three.
var neutralizeInputs = []struct{ name, text string }{
	{"ascii", strings.Repeat("total 0\ndrwxr-xr-x 2 root root 40 Nov 30 file.txt\n", 80)},
	{"html", strings.Repeat(`<div class="x"><a href="/q?a=1&b=2">50% &lt;off&gt;</a></div>`+"\n", 64)},
	{"cyrillic", strings.Repeat("Привет, мир! Это обычный текст без тегов.\n", 56)},
	{"one tag", strings.Repeat("total 0\ndrwxr-xr-x 2 root root 40 Nov 30 file.txt\n", 40) +
		"<system\u200b-reminder>" + strings.Repeat("total 0\ndrwxr-xr-x 2 root root 40 Nov 30 file.txt\n", 40)},
}

// BenchmarkNeutralize: the skeleton detector against a baseline that only looks for '<'
// (the old detector's first step), on the same texts.
//
//	go test -run '^$' -bench 'Neutralize' -benchmem ./internal/tagskel
func BenchmarkNeutralize(b *testing.B) {
	for _, in := range neutralizeInputs {
		b.Run(in.name+"/skeleton", func(b *testing.B) {
			b.SetBytes(int64(len(in.text)))
			b.ReportAllocs()
			for b.Loop() {
				_ = Neutralize(in.text)
			}
		})
		b.Run(in.name+"/baseline", func(b *testing.B) {
			b.SetBytes(int64(len(in.text)))
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				for s := in.text; ; {
					i := strings.IndexByte(s, '<')
					if i < 0 {
						break
					}
					n++
					s = s[i+1:]
				}
				_ = n
			}
		})
	}
}
