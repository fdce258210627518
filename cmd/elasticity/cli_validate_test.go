package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cli runs the whole CLI in-process with its own stdout, stderr and environment.
func cli(t *testing.T, stdin string, args ...string) (code ExitCode, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(stdin), Getenv: func(string) string { return "" }}
	code = runCLI(context.Background(), e, args)
	return code, out.String(), errb.String()
}

func configs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../configs/*.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("configs: %v %v", files, err)
	}
	return files
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidateConfigs(t *testing.T) {
	files := configs(t)
	code, out, errs := cli(t, "", append([]string{"validate"}, files...)...)
	if code != ExitPassed {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(files) {
		t.Fatalf("want one line per file, got:\n%s", out)
	}
	for i, f := range files {
		if !strings.HasPrefix(lines[i], "OK "+f+" ") {
			t.Errorf("line %d = %q, want OK %s", i, lines[i], f)
		}
	}
}

func TestValidateInvalid(t *testing.T) {
	bad := writeFile(t, "bad.yaml", `name: bad
workload:
  mix:
    write: -1
    read: 1
nemesis:
  - grow_cluster:
      mode: sideways
`)
	good := configs(t)[0]
	code, out, errs := cli(t, "", "validate", good, bad)
	if code != ExitInvalid {
		t.Fatalf("exit %d, want %d", code, ExitInvalid)
	}
	if !strings.Contains(out, "OK "+good) {
		t.Errorf("valid file not reported OK:\n%s", out)
	}
	for _, want := range []string{
		bad + ":4: workload.mix.write: must be >= 0",
		bad + `:8: nemesis.0.grow_cluster.mode: "sideways" is not one of serial, parallel`,
		"1 of 2 scenario file(s) invalid",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}

func TestValidateSetAndStdin(t *testing.T) {
	f := configs(t)[0]
	code, _, errs := cli(t, "", "validate", "--set", "workload.load_percent=lots", f)
	if code != ExitInvalid || !strings.Contains(errs, "--set workload.load_percent=lots: workload.load_percent: invalid percentage") {
		t.Fatalf("exit %d:\n%s", code, errs)
	}
	code, out, errs := cli(t, "", "validate", "--set", "nemesis.0.grow_cluster.mode=parallel", "--set", "workload.load_percent=70", f)
	if code != ExitPassed || !strings.Contains(out, "OK ") {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	code, out, errs = cli(t, "name: from-stdin\n", "validate", "-")
	if code != ExitPassed || !strings.Contains(out, "OK - (from-stdin") {
		t.Fatalf("stdin: exit %d:\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, "warning: <stdin>: nemesis: no nemesis steps") {
		t.Errorf("no warning on stderr: %q", errs)
	}
	code, _, errs = cli(t, "name: x\nbogus: 1\n", "validate", "-")
	if code != ExitInvalid || !strings.Contains(errs, "<stdin>:2: bogus: unknown field") {
		t.Fatalf("stdin invalid: exit %d:\n%s", code, errs)
	}
}

func TestValidateMissingFile(t *testing.T) {
	code, _, errs := cli(t, "", "validate", "does/not/exist.yaml")
	if code != ExitInvalid || !strings.Contains(errs, "does/not/exist.yaml: cannot read scenario") {
		t.Fatalf("exit %d:\n%s", code, errs)
	}
}

func TestValidateDirectory(t *testing.T) {
	code, out, errs := cli(t, "", "validate", "../../configs")
	if code != ExitPassed || strings.Count(out, "OK ") != len(configs(t)) {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	if code, _, errs := cli(t, "", "validate", t.TempDir()); code != ExitInvalid || !strings.Contains(errs, "no *.yaml or *.yml files") {
		t.Fatalf("empty dir: exit %d: %s", code, errs)
	}
}
