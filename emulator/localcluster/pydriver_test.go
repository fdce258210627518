package localcluster

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// pythonDriver is an interpreter that imports the Python driver (Debian's
// python3-cassandra installs it for /usr/bin/python3; .ci/run installs it).
func pythonDriver(t *testing.T) string {
	t.Helper()
	var tried []string
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		out, err := exec.Command(py, "-c", "import cassandra").CombinedOutput()
		if err == nil {
			return py
		}
		tried = append(tried, py+": "+err.Error()+" "+string(out))
	}
	t.Skipf("python3-cassandra (the Python driver, Debian package python3-cassandra) is not installed: %v", tried)
	return ""
}

// TestStaticColumnThroughPythonDriver: a table with a static column returns
// one static value per partition to the Python driver, the last one written
// (schema/schema.hh column_kind::static_column; issue 42's acceptance), and
// system_schema.columns says kind 'static'.
func TestStaticColumnThroughPythonDriver(t *testing.T) {
	py := pythonDriver(t)
	c := startCluster(t, testOptions(t, "127.0.146.1", 1))
	n := c.Nodes()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "static_python.py"), n.Addr, strconv.Itoa(CQLPort))
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("static_python.py: %v\n%s%s", err, out, stderr)
	}
	var got struct {
		Kind string  `json:"kind"`
		Rows [][]any `json:"rows"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("static_python.py output %q: %v", out, err)
	}
	if got.Kind != "static" {
		t.Errorf("system_schema.columns kind of the static column: %q", got.Kind)
	}
	want := `[[1,1,"second"],[1,2,"second"],[2,1,"other"]]`
	if b, _ := json.Marshal(got.Rows); string(b) != want {
		t.Errorf("rows read through the Python driver: %s, want %s (one static value per partition)", b, want)
	}
}
