package console

import (
	"fmt"
	"html"
	"html/template"
	"strings"
)

// The charts are SVG drawn here from numbers: no library and nothing fetched. Every
// label that reaches them is escaped with html.EscapeString, so the result is safe to
// put in a page as it is.

// sparkline draws daily counts as bars, oldest first, w×h pixels; each bar has a title
// (its label and count) that a browser shows on hover. labels[i] names counts[i].
func sparkline(counts []int64, labels []string, w, h int) template.HTML {
	var top int64
	for _, n := range counts {
		top = max(top, n)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="spark" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="firings per day">`, w, h, w, h)
	fmt.Fprintf(&b, `<line x1="0" y1="%d" x2="%d" y2="%d" class="axis"/>`, h-1, w, h-1)
	if n := len(counts); n > 0 {
		bw := float64(w) / float64(n)
		for i, c := range counts {
			if c == 0 {
				continue
			}
			bh := max(1, float64(h-1)*float64(c)/float64(top))
			label := ""
			if i < len(labels) {
				label = labels[i] + ": "
			}
			fmt.Fprintf(&b, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f"><title>%s%d</title></rect>`,
				float64(i)*bw+0.5, float64(h-1)-bh, max(bw-1, 1), bh, html.EscapeString(label), c)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // numbers and escaped labels only
}

// part is one slice of a stacked bar.
type part struct {
	Label string
	N     int64
	Class string // a CSS class: the outcome's colour
}

// stackedBar draws parts side by side, each as wide as its share of the total, w×h pixels.
func stackedBar(parts []part, w, h int) template.HTML {
	var total int64
	for _, p := range parts {
		total += p.N
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="mix" width="%d" height="%d" viewBox="0 0 %d %d" preserveAspectRatio="none" role="img" aria-label="outcome mix">`, w, h, w, h)
	if total == 0 {
		fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" class="empty"/>`, w, h)
	}
	x := 0.0
	for _, p := range parts {
		if p.N == 0 {
			continue
		}
		pw := float64(w) * float64(p.N) / float64(total)
		fmt.Fprintf(&b, `<rect x="%.2f" y="0" width="%.2f" height="%d" class="%s"><title>%s: %d</title></rect>`,
			x, pw, h, html.EscapeString(p.Class), html.EscapeString(p.Label), p.N)
		x += pw
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // numbers and escaped labels only
}
