package matrix

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Hook names, as a failed pass names them.
const (
	HookBeforeEach = "before-each"
	HookAfterEach  = "after-each"
)

// Environment of the hooks.
const (
	EnvCell    = "ELASTICITY_CELL"    // the pass's directory name
	EnvVariant = "ELASTICITY_VARIANT" // the cell's label: mode=serial load_percent=70
	EnvRepeat  = "ELASTICITY_REPEAT"  // 1-based
	EnvRunDir  = "ELASTICITY_RUN_DIR" // where the run writes (absent before it starts)
	EnvSets    = "ELASTICITY_SETS"    // every path=value, space separated
	// EnvSetPrefix + the axis path upper-cased, non-alphanumerics as _:
	// ELASTICITY_SET_NEMESIS_0_GROW_CLUSTER_MODE=serial.
	EnvSetPrefix = "ELASTICITY_SET_"
)

// HookEnv is the environment a hook gets besides the matrix's own.
func HookEnv(c Cell, dir string) []string {
	env := []string{EnvCell + "=" + c.Name, EnvVariant + "=" + c.Label, EnvRepeat + "=" + strconv.Itoa(c.Repeat),
		EnvRunDir + "=" + dir, EnvSets + "=" + strings.Join(c.Sets, " ")}
	for _, s := range c.Sets {
		path, v, _ := strings.Cut(s, "=")
		env = append(env, EnvSetPrefix+envName(path)+"="+v)
	}
	return env
}

func envName(path string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(path) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// runHook runs cmd with sh -c (nothing when cmd is empty), its output in
// out/hooks/<cell>.<hook>.log. Its error names the hook, the command, how
// it ended and the last line it printed.
func runHook(ctx context.Context, name, cmd string, c Cell, dir, out string) error {
	if cmd == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(out, DirHooks), 0o755); err != nil {
		return fmt.Errorf("%s hook: %w", name, err)
	}
	logPath := filepath.Join(out, DirHooks, c.Name+"."+name+".log")
	var buf bytes.Buffer
	x := exec.CommandContext(ctx, "sh", "-c", cmd)
	x.Env = append(os.Environ(), HookEnv(c, dir)...)
	x.Stdout, x.Stderr = &buf, &buf
	err := x.Run()
	if werr := os.WriteFile(logPath, buf.Bytes(), 0o644); werr != nil && err == nil {
		err = werr
	}
	if err == nil {
		return nil
	}
	msg := fmt.Sprintf("%s hook %q failed: %v", name, cmd, err)
	if last := lastLine(buf.String()); last != "" {
		msg += ": " + last
	}
	return fmt.Errorf("%s (output in %s)", msg, logPath)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = l[:200] + "…"
	}
	return l
}
