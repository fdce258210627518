package reporting

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

var screenshot = flag.String("screenshot", "", "write the PNG of testdata/run1's HTML report to this path (needs chromium)")

// TestScreenshot renders the HTML report of testdata/run1 in headless
// Chromium to a PNG, so that a person (or a reviewing agent) can look at
// the charts:
//
//	go test ./reporting -run Screenshot -screenshot=/tmp/report.png
//
// It skips when no Chromium is installed (apt-get install -y chromium) and
// in -short mode.
func TestScreenshot(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not starting a browser")
	}
	browser := chromium(t, "the HTML report")
	dir := copyRun(t, filepath.Join("testdata", "run1"))
	if _, err := Render(dir, Options{Formats: []string{FormatHTML}}); err != nil {
		t.Fatal(err)
	}
	out := *screenshot
	if out == "" {
		out = filepath.Join(t.TempDir(), "report.png")
	}
	size := screenshotPage(t, browser, filepath.Join(dir, results.FileReportHTML), out, "1400,4200")
	t.Logf("screenshot of the HTML report: %s (%d kB)", out, size/1000)
}

// chromium finds headless Chromium in PATH, or skips the test, which
// would have taken a screenshot of what.
func chromium(t *testing.T, what string) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium in PATH (apt-get install -y chromium): skipping the screenshot of " + what)
	return ""
}

// screenshotPage has browser write a PNG of the page file to out, in a
// window of size ("width,height"), checks that it looks like a screenshot
// and returns its size in bytes.
func screenshotPage(t *testing.T, browser, page, out, size string) int {
	t.Helper()
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
		"--user-data-dir="+t.TempDir(), "--screenshot="+out, "--window-size="+size, "file://"+abs)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, b)
	}
	png, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG")) || len(png) < 50_000 {
		t.Fatalf("%s is not a plausible screenshot (%d bytes)", out, len(png))
	}
	return len(png)
}
