package reporting

import (
	"encoding/xml"
	"math"
	"strings"
	"testing"
)

func TestRatioChartSelfContained(t *testing.T) {
	svg := RatioChart([]RatioItem{
		{Label: "scale_out_seconds: mode=parallel / mode=serial", Ratio: 0.55, Lo: 0.5, Hi: 0.61, HasCI: true, Limit: 0.8, Op: "<=", Verdict: "PASS"},
		{Label: `"New node(s) ready": a<b / c&d`, Ratio: 0.9, Lo: math.Inf(-1), Hi: math.Inf(1), HasCI: true, Limit: 0.8, Op: "<=", Verdict: "INCONCLUSIVE"},
		{Label: "one pass", Ratio: 1.4, Limit: 1.2, Op: "<", Verdict: "INCONCLUSIVE"},
	})
	// Well-formed XML (labels escaped), no external reference.
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		if _, err := d.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not well-formed: %v\n%s", err, svg)
			}
			break
		}
	}
	for _, bad := range []string{"href", "<script", "NaN", "Inf"} {
		if strings.Contains(svg, bad) {
			t.Errorf("chart contains %q", bad)
		}
	}
	// One point per item, open ends drawn as arrows.
	if n := strings.Count(svg, "<circle"); n != 3 {
		t.Errorf("%d points, want 3", n)
	}
	if n := strings.Count(svg, "<path"); n != 2 {
		t.Errorf("%d open ends, want 2", n)
	}
	if RatioChart(nil) != "" {
		t.Error("empty chart")
	}
}
