package console

import (
	"strings"
	"testing"
)

func TestSparkline(t *testing.T) {
	got := string(sparkline([]int64{0, 2, 4}, []string{"d1", "d<2>", "d3"}, 30, 11))
	for _, want := range []string{
		`<svg class="spark" width="30" height="11"`,
		`<rect x="10.50" y="5.00" width="9.00" height="5.00"><title>d&lt;2&gt;: 2</title></rect>`,
		`<rect x="20.50" y="0.00" width="9.00" height="10.00"><title>d3: 4</title></rect>`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("sparkline lacks %s\n%s", want, got)
		}
	}
	if strings.Count(got, "<rect") != 2 {
		t.Errorf("a zero day drew a bar:\n%s", got)
	}
	if empty := string(sparkline(nil, nil, 30, 11)); strings.Contains(empty, "<rect") || !strings.HasSuffix(empty, "</svg>") {
		t.Errorf("no counts: %s", empty)
	}
}

func TestStackedBar(t *testing.T) {
	got := string(stackedBar([]part{{"corrected", 3, "o-corrected"}, {"kept", 0, "o-kept"}, {`<b>`, 1, `x"y`}}, 100, 10))
	for _, want := range []string{
		`<rect x="0.00" y="0" width="75.00" height="10" class="o-corrected"><title>corrected: 3</title></rect>`,
		`<rect x="75.00" y="0" width="25.00" height="10" class="x&#34;y"><title>&lt;b&gt;: 1</title></rect>`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("bar lacks %s\n%s", want, got)
		}
	}
	if strings.Contains(got, "kept") {
		t.Error("a zero part was drawn")
	}
	if !strings.Contains(string(stackedBar(nil, 100, 10)), `class="empty"`) {
		t.Error("no parts: no empty bar")
	}
}
