package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
)

// Environment variables that mark a node process, so that gc can find the
// nodes of crashed runs (Linux: read from /proc/<pid>/environ).
const (
	EnvRunID     = "ELASTICITY_RUN_ID"
	EnvNode      = "ELASTICITY_NODE"
	EnvKeepUntil = "ELASTICITY_KEEP_UNTIL" // RFC 3339
	EnvRunDir    = "ELASTICITY_RUN_DIR"
)

// DefaultTTL is the keep-until of nodes of a spec without TTL.
const DefaultTTL = 24 * time.Hour

var _ provision.Sweeper = (*Provider)(nil)

// markEnv returns the variables that identify pr's process.
func (p *Provider) markEnv(pr *proc) []string {
	ttl := p.spec.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return []string{
		EnvRunID + "=" + p.spec.RunID,
		EnvNode + "=" + pr.node.Name,
		EnvKeepUntil + "=" + time.Now().Add(ttl).UTC().Format(time.RFC3339Nano),
		EnvRunDir + "=" + p.dir,
	}
}

// Sweep finds node processes of other runs (process group leaders carrying
// EnvRunID) and, unless dryRun, stops those whose keep-until has passed
// (SIGTERM to the group, SIGKILL after 5 s). Nodes of this provider are left alone.
func (p *Provider) Sweep(ctx context.Context, now time.Time, dryRun bool) ([]provision.Resource, error) {
	return p.sweep(ctx, now, dryRun, "")
}

// SweepRun lists the node processes of one run and, unless dryRun, stops
// them whatever their keep-until (elasticity gc --run-id).
func (p *Provider) SweepRun(ctx context.Context, runID string, dryRun bool) ([]provision.Resource, error) {
	if runID == "" {
		return nil, errors.New("local: SweepRun needs a run id")
	}
	return p.sweep(ctx, time.Now(), dryRun, runID)
}

// sweep lists marked node processes (of runID only, when given) and, unless
// dryRun, stops the expired ones (all of runID's, when given).
func (p *Provider) sweep(ctx context.Context, now time.Time, dryRun bool, runID string) ([]provision.Resource, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("local: listing processes: %w", err)
	}
	own := map[int]bool{}
	p.mu.Lock()
	for _, pr := range p.procs {
		if pr.proc != nil {
			own[pr.proc.Pid] = true
		}
	}
	p.mu.Unlock()
	var out []provision.Resource
	var errs []error
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || own[pid] || pid == os.Getpid() || !groupLeader(pid) {
			continue
		}
		env := readEnviron(pid)
		if env[EnvRunID] == "" && env[EnvNode] == "" {
			continue
		}
		r := provision.Resource{Kind: "process", ID: strconv.Itoa(pid), Name: env[EnvNode], RunID: env[EnvRunID]}
		if t, err := time.Parse(time.RFC3339, env[EnvKeepUntil]); err == nil {
			r.KeepUntil = t
			r.Expired = now.After(t)
		}
		if runID != "" && r.RunID != runID {
			continue
		}
		out = append(out, r)
		if (r.Expired || runID != "") && !dryRun {
			if err := stopGroup(ctx, pid); err != nil {
				errs = append(errs, err)
			}
		}
	}
	data, err := p.removeAbandoned(runID, dryRun)
	return append(out, data...), errors.Join(append(errs, err)...)
}

func groupLeader(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// Fields after the ")" that ends the command name: state ppid pgrp ...
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(string(b[i+1:]))
	return len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pid)
}

func readEnviron(pid int) map[string]string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return nil
	}
	env := map[string]string{}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if k, v, ok := strings.Cut(string(kv), "="); ok && strings.HasPrefix(k, "ELASTICITY_") {
			env[k] = v
		}
	}
	return env
}

// stopGroup stops a process group that is not our child: we cannot wait for
// it, so we poll until the leader is gone.
func stopGroup(ctx context.Context, pid int) error {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	_ = syscall.Kill(-pid, syscall.SIGCONT)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if !groupLeader(pid) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	time.Sleep(100 * time.Millisecond)
	if groupLeader(pid) {
		return fmt.Errorf("local: process group %d survived SIGKILL", pid)
	}
	return nil
}
