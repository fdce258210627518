package nemesis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// DefaultHookTimeout bounds a hook when the scenario says nothing.
const DefaultHookTimeout = 5 * time.Minute

// HookEnv is what every hook gets in its environment besides its own variables.
func HookEnv(env *Env, s Step) []string {
	var addrs, nodeNames []string
	for _, n := range env.Cluster.Nodes() {
		addrs = append(addrs, n.Address)
		nodeNames = append(nodeNames, n.Name)
	}
	out := append(os.Environ(),
		"ELASTICITY_STEP="+s.Name,
		"ELASTICITY_NODES="+strings.Join(nodeNames, ","),
		"ELASTICITY_HOSTS="+strings.Join(addrs, ","),
	)
	keys := make([]string, 0, len(s.HookEnv))
	for k := range s.HookEnv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+s.HookEnv[k])
	}
	return out
}

func runHook(ctx context.Context, env *Env, s Step) error {
	if len(s.Command) == 0 {
		return errors.New("hook has no command")
	}
	t := Timeout{Soft: DefaultHookTimeout, Hard: DefaultHookTimeout}
	if ov, ok := s.Timeouts[WaitHook]; ok {
		if ov.Soft > 0 {
			t.Soft = ov.Soft
		}
		if ov.Hard > 0 {
			t.Hard = ov.Hard
		}
	}
	if s.Duration > 0 { // a hook's duration is its timeout
		t.Hard = s.Duration
	}
	if t.Soft > t.Hard {
		t.Soft = t.Hard
	}
	base := results.Event{Step: s.Name, Kind: results.KindHook}
	ev := base
	ev.Type, ev.Message = results.EventStepRequested, strings.Join(s.Command, " ")
	env.emit(ev)
	env.progress(fmt.Sprintf("%s: running %s (timeout %s)", s.Name, strings.Join(s.Command, " "), t.Hard))

	var out bytes.Buffer
	var w io.Writer = &out
	if env.LogDir != "" {
		dir := filepath.Join(env.LogDir, "hooks")
		if err := os.MkdirAll(dir, 0o755); err == nil {
			if f, err := os.Create(filepath.Join(dir, safeName(s.Name)+".log")); err == nil {
				defer f.Close()
				w = io.MultiWriter(&out, f)
			}
		}
	}
	err := wait(ctx, env, s.Name+": hook", t, nil, func(ctx context.Context) error {
		cmd := exec.CommandContext(ctx, s.Command[0], s.Command[1:]...)
		cmd.Env = HookEnv(env, s)
		cmd.Stdout, cmd.Stderr = w, w
		// Own process group, so a timeout ends the hook's children too.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 2 * time.Second
		return cmd.Run()
	})
	tail := lastLines(out.String(), 5)
	env.logf("%s: hook output: %s", s.Name, tail)
	ev = base
	ev.Type, ev.Message = results.EventStepEnd, tail
	if err != nil {
		ev.Status = "error"
		env.emit(ev)
		err = fmt.Errorf("hook %s: %w (output: %s)", strings.Join(s.Command, " "), err, tail)
		if s.IgnoreFailure && ctx.Err() == nil {
			env.warn(err.Error() + " (ignored)")
			return nil
		}
		return err
	}
	env.emit(ev)
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == os.PathSeparator {
			return '_'
		}
		return r
	}, s)
}
