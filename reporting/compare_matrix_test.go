package reporting

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var compareScreenshot = flag.String("compare-screenshot", "", "write the PNG of the three-variant comparison.html to this path (needs chromium)")

// loadMatrix writes the runs of a load_percent=50,70,80 matrix as
// `elasticity matrix` names them: the fixture run at each load, the
// scale-out slower and its latency higher as the load rises; at 80%
// compaction falls behind in Cycle #1 and Cycle #2 is host-bound.
func loadMatrix(t testing.TB) []string {
	t.Helper()
	root := t.TempDir()
	var dirs []string
	for i, load := range []float64{50, 70, 80} {
		f := smallFixture
		f.load = load
		f.join = time.Duration(float64(f.join) * load / 50) // ×1, ×1.4, ×1.6
		f.balance = time.Duration(float64(f.balance) * load / 50)
		dir := filepath.Join(root, []string{"01", "02", "03"}[i]+"-load_percent="+[]string{"50", "70", "80"}[i])
		if err := writeFixture(dir, f); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

// compareLoadMatrix writes the comparison of loadMatrix's runs.
func compareLoadMatrix(t testing.TB) (out, md, html string) {
	t.Helper()
	out = filepath.Join(t.TempDir(), "cmp")
	if err := Compare(loadMatrix(t), out, CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	m, err := os.ReadFile(filepath.Join(out, FileCompareMD))
	if err != nil {
		t.Fatal(err)
	}
	h, err := os.ReadFile(filepath.Join(out, FileCompareHTML))
	if err != nil {
		t.Fatal(err)
	}
	return out, string(m), string(h)
}

// The comparison of three variants in markdown, as pasted into an issue.
func TestCompareGoldenThreeVariants(t *testing.T) {
	_, md, _ := compareLoadMatrix(t)
	golden(t, "compare-load-50-70-80.golden.md", []byte(md))
}

// The answer comes first: before any other table, P99 per cycle × variant
// with the ratios to each variant's own Cycle #0 and the threshold
// colours, then the scale-out durations per variant, then compaction and
// host per variant; the long tables follow, grouped, n once per column.
func TestCompareAnswersFirst(t *testing.T) {
	_, md, html := compareLoadMatrix(t)
	heads := regexp.MustCompile(`(?m)^## (.*)$`).FindAllStringSubmatch(md, -1)
	var names []string
	for _, h := range heads {
		names = append(names, h[1])
	}
	if len(names) < 4 || !strings.HasPrefix(names[0], "P99 per cycle and variant") || !strings.HasPrefix(names[1], "Scale-out durations per variant") ||
		names[2] != "Compaction and host per variant" || names[3] != "Charts" {
		t.Fatalf("sections in order %q", names)
	}
	p99 := md[strings.Index(md, "## P99"):strings.Index(md, "## Scale-out")]
	for _, want := range []string{
		"| cycle    | load_percent=50 P99 write [ms] | load_percent=50 P99 read [ms] | load_percent=70 P99 write [ms]",
		"| Cycle #0 | $${\\color{green}", // thresholds colour the values
		"$${\\color{red}",                // Cycle #1 is past write_p99_ms ≤ 10
		"}$$ ×",                          // the ratio follows the coloured value
	} {
		if !strings.Contains(p99, want) {
			t.Errorf("P99 table lacks %q:\n%s", want, p99)
		}
	}
	// Cycle #1's ratio to Cycle #0 grows with the load.
	ratio := regexp.MustCompile(`\| Cycle #1 \|.*`).FindString(p99)
	var rs []float64
	for _, m := range regexp.MustCompile(`×([0-9.]+)`).FindAllStringSubmatch(ratio, -1) {
		r, _ := strconv.ParseFloat(m[1], 64)
		rs = append(rs, r)
	}
	if len(rs) != 6 || !(rs[0] > 1 && rs[0] < rs[2] && rs[2] < rs[4]) {
		t.Errorf("Cycle #1 write ratios %v do not grow with the load: %q", rs, ratio)
	}
	dur := md[strings.Index(md, "## Scale-out"):strings.Index(md, "## Compaction and host")]
	for _, want := range []string{"| variant         | runs | Add new node(s)", "New node(s) ready", "data balanced", "latency recovered", "| load_percent=80 | 1    |"} {
		if !strings.Contains(dur, want) {
			t.Errorf("durations table lacks %q:\n%s", want, dur)
		}
	}
	health := md[strings.Index(md, "## Compaction and host"):strings.Index(md, "## Charts")]
	for _, want := range []string{"| load_percent=50 | 1    | $${\\color{red}failed}$$ | $${\\color{green}yes}$$", "$${\\color{red}no: Cycle #1 (node-", "$${\\color{orange}Cycle #2 (lag up to "} {
		if !strings.Contains(health, want) {
			t.Errorf("health table lacks %q:\n%s", want, health)
		}
	}
	// The long tables come after, grouped, with n in the header once.
	for _, want := range []string{"## Latency per variant [ms]", "## Throughput per variant [op/s]", "## Host, compaction, stalls and errors per variant", "## Durations per variant [s]",
		"| figure                | load_percent=50 (n=1) |", "Cycle #1.compaction_backlog"} {
		if !strings.Contains(md, want) {
			t.Errorf("comparison lacks %q", want)
		}
	}
	if strings.Contains(md, "(n=1) |\n| Cycle") || strings.Contains(md, "2.34 (n=1)") {
		t.Error("n repeated in cells")
	}
	// comparison.html: the charts, self-contained.
	if n := strings.Count(html, "<svg"); n < 3 {
		t.Errorf("comparison.html has %d charts, want at least 3", n)
	}
	for _, bad := range []string{"http://", "https://", " src=", "<script", "<link", "url("} {
		if strings.Contains(html, bad) {
			t.Errorf("comparison.html loads an external resource or runs a script: %q", bad)
		}
	}
	for _, want := range []string{"P99 per cycle and variant (log scale", "Write P99 per interval, from the first topology request", "Read P99 per interval", "Scale-out durations per variant (bar: mean",
		`<th colspan="2" class="group">load_percent=80</th>`} {
		if !strings.Contains(html, want) {
			t.Errorf("comparison.html lacks %q", want)
		}
	}
}

// Repeats of a variant: the answer shows the mean with n in the group's
// header, the durations their spread, the chart a whisker.
func TestCompareRepeats(t *testing.T) {
	dirs := loadMatrix(t)
	root := filepath.Dir(dirs[0])
	var runs []string
	for _, d := range dirs[:2] {
		for _, r := range []string{"-r1", "-r2"} {
			dst := filepath.Join(root, filepath.Base(d)+r)
			if err := os.Rename(d, dst); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if r == "-r1" {
				continue
			}
			// the second repeat: the first one's files, copied.
			src := filepath.Join(root, filepath.Base(d)+"-r1")
			copyDir(t, src, dst)
		}
		runs = append(runs, filepath.Join(root, filepath.Base(d)+"-r1"), filepath.Join(root, filepath.Base(d)+"-r2"))
	}
	out := filepath.Join(t.TempDir(), "cmp")
	if err := Compare(runs, out, CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, FileCompareMD))
	html, _ := os.ReadFile(filepath.Join(out, FileCompareHTML))
	for _, want := range []string{"load_percent=50 (n=2) P99 write [ms]", "| load_percent=70 | 2    |", " ± 0s", "| figure                | load_percent=50 (n=2) |", "## Variants (mean ± stddev over repeats)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("comparison of repeats lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(string(html), `stroke="#1b1f23" stroke-width="1.2"`) {
		t.Error("the durations chart draws no spread of the repeats")
	}
}

func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCompareScreenshot renders the three-variant comparison.html in
// headless Chromium, as TestScreenshot does the run report:
//
//	go test ./reporting -run CompareScreenshot -compare-screenshot=/tmp/comparison.png
func TestCompareScreenshot(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not starting a browser")
	}
	browser := chromium(t, "the comparison")
	dir, _, _ := compareLoadMatrix(t)
	out := *compareScreenshot
	if out == "" {
		out = filepath.Join(t.TempDir(), "comparison.png")
	}
	size := screenshotPage(t, browser, filepath.Join(dir, FileCompareHTML), out, "1400,2600")
	t.Logf("screenshot of the comparison: %s (%d kB)", out, size/1000)
}
