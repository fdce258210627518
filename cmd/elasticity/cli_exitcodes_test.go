package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestExitCodesUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code ExitCode
		msg  string
	}{
		{[]string{"--help"}, ExitPassed, ""},
		{[]string{"frobnicate"}, ExitInvalid, `unknown command "frobnicate"`},
		{[]string{"validate", "--no-such-flag", "x.yaml"}, ExitInvalid, "unknown flag: --no-such-flag"},
		{[]string{"plan", "--json=maybe", "x.yaml"}, ExitInvalid, "invalid argument"},
		{[]string{"validate"}, ExitInvalid, "requires at least 1 arg"},
	} {
		code, _, errs := cli(t, "", tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want %q)", tc.args, code, tc.code, errs, tc.msg)
		}
	}
}

// A bad scenario stops every command that reads one with exit 2, before anything starts.
func TestExitCodeInvalidScenario(t *testing.T) {
	bad := writeFile(t, "bad.yaml", "name: bad\ncluster:\n  racks: 0\n")
	for _, args := range [][]string{
		{"validate", bad},
		{"plan", bad},
		{"run", bad, "--out", t.TempDir()},
		{"run", "../../configs/smoke.yaml", "--set", "workload.rate=fast", "--out", t.TempDir()},
	} {
		code, _, errs := cli(t, "", args...)
		if code != ExitInvalid || !strings.Contains(errs, ":3: cluster.racks:") && !strings.Contains(errs, "--set workload.rate=fast: workload.rate: invalid rate") {
			t.Errorf("%v: exit %d, stderr:\n%s", args, code, errs)
		}
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := cli(t, "", "--version")
	if code != ExitPassed || !strings.HasPrefix(out, "elasticity version ") {
		t.Fatalf("exit %d, %q", code, out)
	}
}

// TestExitCodesPlumbing checks that codes chosen by a command reach the
// process, and that a cancelled context (Ctrl-C) becomes 130.
func TestExitCodesPlumbing(t *testing.T) {
	saved := factories
	defer func() { factories = saved }()
	factories = append(append([]commandFactory(nil), saved...), func(e *env) *cobra.Command {
		return &cobra.Command{
			Use:  "exit-test CODE",
			Args: cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				switch args[0] {
				case "failed":
					return withCode(ExitFailed, errors.New("2 thresholds failed"))
				case "error":
					return withCode(ExitRunError, errors.New("node-2 did not start"))
				case "wait":
					<-c.Context().Done()
					return c.Context().Err()
				}
				return nil
			},
		}
	})
	for arg, want := range map[string]ExitCode{"ok": ExitPassed, "failed": ExitFailed, "error": ExitRunError} {
		if code, _, errs := cli(t, "", "exit-test", arg); code != want {
			t.Errorf("%s: exit %d, want %d (%s)", arg, code, want, errs)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb strings.Builder
	code := runCLI(ctx, &env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}, []string{"exit-test", "wait"})
	if code != ExitInterrupted || !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("cancelled: exit %d, stderr %q", code, errb.String())
	}
}
