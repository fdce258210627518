package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/argus/argustest"
)

func argusCLI(t *testing.T, token string, args ...string) (ExitCode, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), Getenv: func(k string) string {
		if k == EnvArgusToken {
			return token
		}
		return ""
	}}
	code := runCLI(context.Background(), e, args)
	return code, out.String(), errb.String()
}

func TestArgusSubmitCommand(t *testing.T) {
	const tok = "tok-123456"
	dir := reportFixture(t, filepath.Join(t.TempDir(), "run1"))
	if code, _, errs := cli(t, "", "report", dir); code != ExitPassed && code != ExitFailed {
		t.Fatalf("report: exit %d %s", code, errs)
	}
	srv := argustest.New(tok)
	defer srv.Close()

	// A job that is no Argus test: called out, exit 2, no table sent.
	code, out, errs := argusCLI(t, tok, "argus", "submit", dir, "--url", srv.URL)
	if code != ExitInvalid || !strings.Contains(errs, `job "elasticity/90pct-scaleout" is not a registered Argus test`) ||
		!strings.Contains(errs, `Build System Id is "elasticity/90pct-scaleout"`) {
		t.Errorf("unregistered job: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	for _, c := range srv.Calls() {
		if strings.HasSuffix(c.Path, "/submit_results") {
			t.Errorf("a table was sent for an unregistered job: %s", c.Path)
		}
	}
	srv.RegisterTest("elasticity/90pct-scaleout")

	// The fixture fails read_p90_ms in Cycle #1: Argus's validation fails that table.
	code, out, errs = argusCLI(t, tok, "argus", "submit", dir, "--url", srv.URL)
	if code != ExitFailed || !strings.Contains(errs, "failed Argus's validation: mixed - grow - latencies") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	if !strings.Contains(out, "status failed") || !strings.Contains(out, "replay log: ") {
		t.Errorf("stdout %s", out)
	}
	if strings.Contains(out+errs, tok) {
		t.Error("the token was printed")
	}
	if n := len(srv.Calls()); n < 4 {
		t.Errorf("%d calls", n)
	}

	// --dry-run sends nothing and needs no token.
	before := len(srv.Calls())
	code, out, errs = argusCLI(t, "", "argus", "submit", dir, "--url", srv.URL, "--dry-run")
	if code != ExitPassed || !strings.Contains(out, "POST "+srv.URL) || !strings.Contains(out, "dry run: ") || len(srv.Calls()) != before {
		t.Errorf("dry run: exit %d\n%s\n%s", code, out, errs)
	}

	// Bad input: exit 2, nothing sent.
	for name, args := range map[string][]string{
		"no token":   {"argus", "submit", dir, "--url", srv.URL},
		"no url":     {"argus", "submit", dir},
		"bad url":    {"argus", "submit", dir, "--url", "argus.example"},
		"bad run id": {"argus", "submit", dir, "--url", srv.URL, "--run-id", "nope"},
		"not a run":  {"argus", "submit", t.TempDir(), "--url", srv.URL},
	} {
		token := tok
		if name == "no token" {
			token = ""
		}
		before := len(srv.Calls())
		code, _, errs := argusCLI(t, token, args...)
		if code != ExitInvalid || len(srv.Calls()) != before || errs == "" {
			t.Errorf("%s: exit %d, %d calls, %s", name, code, len(srv.Calls())-before, errs)
		}
	}

	// A server that rejects the token: exit 3, the token not printed.
	code, out, errs = argusCLI(t, "wrong-token", "argus", "submit", dir, "--url", srv.URL)
	if code != ExitRunError || !strings.Contains(errs, "User not found for supplied token") || strings.Contains(out+errs, "wrong-token") {
		t.Errorf("rejected token: exit %d\n%s\n%s", code, out, errs)
	}
}
