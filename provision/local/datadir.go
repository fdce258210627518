package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/elasticity-dev/elasticity/provision"
)

// Where the nodes' data goes. An emulated node's data is throwaway (it is
// deleted with the node) and small (its emulated disk: 117 MiB for an
// i4i.large at the default scale), but it is written hard: every flush and
// compaction creates, writes, renames and removes sstables. On a VM's ext4
// that is file system journalling and page-cache writeback to a virtual
// disk, CPU the host takes from the nodes' requests; in a RAM-backed file
// system it is a copy. Measured on 2 cores (BenchmarkNodeCost, 3 filled
// i4i.large nodes at 1,300 op/s, alternating): P99 8.7-11.7 ms in /dev/shm
// against 13.8-21.0 ms on ext4, 4-5 s less kernel CPU in 45 s.

// memoryRoot is the RAM-backed file system the data goes to by default.
const memoryRoot = "/dev/shm"

// tmpfsMagic is statfs's f_type of tmpfs (linux/magic.h TMPFS_MAGIC).
const tmpfsMagic = 0x01021994

// runDataPrefix names a run's directory under a data root
// (elasticity-<run id>-<random>); ownerFile in it holds the runner's pid,
// and pid namespace, so gc and later runs can tell an abandoned one.
const (
	runDataPrefix = "elasticity-"
	ownerFile     = "owner.pid"
)

// MemoryDataRoot is the RAM-backed file system nodes keep their data in by
// default, or "" when there is none this process may write to.
func MemoryDataRoot() string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(memoryRoot, &st); err != nil || int64(st.Type) != tmpfsMagic {
		return ""
	}
	if syscall.Access(memoryRoot, 2 /* W_OK */) != nil {
		return ""
	}
	return memoryRoot
}

// DataOptions maps local.data_dir to Options.DataRoot and Options.DataFallback.
func DataOptions(dataDir string) (root string, fallback bool) {
	switch dataDir {
	case "", DataRun:
		return "", false
	case DataMemory:
		return MemoryDataRoot(), true
	}
	return dataDir, false
}

// freeBytes is what an unprivileged writer may still put in dir's file system.
func freeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("local: reading the free space of %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// placeData picks the data directory of a node whose emulated disk is
// diskBytes: under the data root when there is one (the run's directory
// there is made on first use) and, with DataFallback, only while the root
// has room for every emulated disk placed there; else <run>/nodes/<node>/data.
// It returns the directory and the root it must stay inside. Callers hold p.mu.
func (p *Provider) placeData(name string, diskBytes int64) (dir, root string, err error) {
	inRun := filepath.Join(p.dir, "nodes", name, "data")
	if p.opts.DataRoot == "" {
		return inRun, p.dir, nil
	}
	if p.dataBase == "" {
		// A runner that died (kill -9) left its nodes' data behind, and
		// in memory that holds RAM: the next run takes it back.
		res, err := p.removeAbandoned("", false)
		for _, r := range res {
			p.opts.Logf("deleting node data a run that ended without cleaning up left in %s", r.ID)
		}
		if err != nil {
			p.opts.Logf("%v", err)
		}
		if err := os.MkdirAll(p.opts.DataRoot, 0o755); err != nil {
			return "", "", fmt.Errorf("local: creating the data directory %s (local.data_dir): %w", p.opts.DataRoot, err)
		}
		base, err := os.MkdirTemp(p.opts.DataRoot, runDataPrefix+p.spec.RunID+"-")
		if err != nil {
			return "", "", fmt.Errorf("local: creating a run directory in %s (local.data_dir): %w", p.opts.DataRoot, err)
		}
		if err := os.WriteFile(filepath.Join(base, ownerFile), []byte(ownerMark()), 0o644); err != nil {
			os.RemoveAll(base)
			return "", "", fmt.Errorf("local: marking %s as this run's: %w", base, err)
		}
		p.dataBase = base
	}
	if p.opts.DataFallback {
		free, err := freeBytes(p.dataBase)
		if err != nil {
			return "", "", err
		}
		// Every emulated disk placed there may still fill up (their usage
		// so far is counted twice: a margin).
		need := diskBytes
		for _, pr := range p.procs {
			if pr.dataRoot == p.dataBase {
				need += pr.diskBytes
			}
		}
		if free < need {
			p.opts.Logf("%s keeps its data in the run directory: %s has %d MiB free, less than the %d MiB of emulated disks it would hold", name, p.opts.DataRoot, free>>20, need>>20)
			return inRun, p.dir, nil
		}
	}
	return filepath.Join(p.dataBase, name), p.dataBase, nil
}

// removeDataBase deletes the run's directory under the data root.
func (p *Provider) removeDataBase() error {
	if p.dataBase == "" {
		return nil
	}
	return removeWithin(p.opts.DataRoot, p.dataBase)
}

// removeAbandoned lists (and unless dryRun deletes) the run directories
// under the data roots, the memory one and this provider's, whose runner is
// gone (of runID only, when given): a crashed runner's nodes died with it,
// so nothing uses their data any more.
func (p *Provider) removeAbandoned(runID string, dryRun bool) ([]provision.Resource, error) {
	var out []provision.Resource
	var errs []error
	for _, dir := range p.abandonedData(runID) {
		run := strings.TrimPrefix(filepath.Base(dir), runDataPrefix)
		if i := strings.LastIndexByte(run, '-'); i >= 0 {
			run = run[:i] // the random suffix
		}
		out = append(out, provision.Resource{Kind: "data", ID: dir, Name: filepath.Base(dir), RunID: run, Expired: true})
		if !dryRun {
			if err := os.RemoveAll(dir); err != nil {
				errs = append(errs, fmt.Errorf("local: deleting abandoned node data %s: %w", dir, err))
			}
		}
	}
	return out, errors.Join(errs...)
}

// abandonedData lists the run directories under the data roots (the memory
// one and this provider's) whose runner is gone, of runID only when given.
func (p *Provider) abandonedData(runID string) []string {
	var out []string
	seen := map[string]bool{}
	for _, root := range []string{MemoryDataRoot(), p.opts.DataRoot} {
		if root == "" || seen[root] {
			continue
		}
		seen[root] = true
		ents, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, e := range ents {
			name := e.Name()
			if !e.IsDir() || !strings.HasPrefix(name, runDataPrefix) {
				continue
			}
			if runID != "" && !strings.HasPrefix(name, runDataPrefix+runID+"-") {
				continue
			}
			dir := filepath.Join(root, name)
			if dir == p.dataBase || ownerAlive(dir) {
				continue
			}
			out = append(out, dir)
		}
	}
	return out
}

// ownerMark is what ownerFile holds: this process's pid and its pid
// namespace (a pid means nothing in another one, e.g. a container sharing
// the data root).
func ownerMark() string { return strconv.Itoa(os.Getpid()) + " " + pidNamespace() + "\n" }

// pidNamespace names this process's pid namespace (Linux: pid:[inode]).
func pidNamespace() string {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return "unknown"
	}
	return ns
}

// ownerAlive reports whether the runner that made a run's data directory
// still runs (a directory without a readable owner is not ours to judge).
func ownerAlive(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	f := strings.Fields(string(b))
	if err != nil || len(f) != 2 || f[1] != pidNamespace() {
		return true // unmarked or unreadable, or a runner in another pid namespace
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return true
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
