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
	var browser string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no chromium in PATH (apt-get install -y chromium): skipping the screenshot of the HTML report")
	}
	dir := copyRun(t, filepath.Join("testdata", "run1"))
	if _, err := Render(dir, Options{Formats: []string{FormatHTML}}); err != nil {
		t.Fatal(err)
	}
	out := *screenshot
	if out == "" {
		out = filepath.Join(t.TempDir(), "report.png")
	}
	abs, err := filepath.Abs(filepath.Join(dir, results.FileReportHTML))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
		"--user-data-dir="+t.TempDir(), "--screenshot="+out, "--window-size=1400,4200", "file://"+abs)
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
	t.Logf("screenshot of the HTML report: %s (%d kB)", out, len(png)/1000)
}
