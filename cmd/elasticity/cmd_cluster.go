package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/localcluster"
	"github.com/elasticity-dev/elasticity/provision"
	"github.com/spf13/cobra"
)

// clusterStateFile records a detached local cluster's processes in its dir.
const clusterStateFile = "cluster.json"

type clusterState struct {
	Cluster string               `json:"cluster_name"`
	Nodes   []*localcluster.Node `json:"nodes"`
	// HostSocket: the nodes share a host process (--process shared).
	HostSocket string `json:"host_socket,omitempty"`
}

func init() {
	addCommand(func(e *env) *cobra.Command {
		root := &cobra.Command{
			Use:   "cluster",
			Short: "Start or stop a local emulated cluster",
			Long: `cluster up starts a detached local cluster of emulated nodes (on 127.0.0.2, 127.0.0.3, ...,
all in one process, or one process per node with --process per-node; pids recorded in --dir), waits until every node is NORMAL and
prints one JSON line with hosts, ports and each node's pid and host id. A node is NORMAL
only when its own process holds the address that answered; a node that dies fails the
start with its log. A taken --base-address fails, naming a free one; without
--base-address a taken default range moves to a free one. cluster down stops it.`,
		}
		var (
			dir, itype, base, name string
			nodes, racks           int
			extra                  []string
			timeout                time.Duration
			process                string
		)
		up := &cobra.Command{
			Use:   "up",
			Short: "Start a detached local cluster and wait until it is NORMAL",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, args []string) error {
				if dir == "" {
					return withCode(ExitInvalid, errors.New("cluster up: --dir is required"))
				}
				it, err := provision.LookupInstanceType(itype)
				if err != nil {
					return withCode(ExitInvalid, fmt.Errorf("cluster up: %w", err))
				}
				abs, err := filepath.Abs(dir)
				if err != nil {
					return withCode(ExitInvalid, err)
				}
				if process != "per-node" && process != "shared" {
					return withCode(ExitInvalid, fmt.Errorf("cluster up: --process %q: want per-node or shared", process))
				}
				if _, err := os.Stat(filepath.Join(abs, clusterStateFile)); err == nil {
					return withCode(ExitInvalid, fmt.Errorf("cluster up: %s already holds a cluster; run cluster down --dir %s first", abs, dir))
				}
				if base, err = baseAddress(c, base, nodes, e); err != nil {
					return withCode(ExitRunError, fmt.Errorf("cluster up: %w", err))
				}
				exe := e.Executable
				if exe == "" {
					exe, _ = os.Executable()
				}
				opts := localcluster.Options{Binary: exe, BinaryArgs: []string{"node"}, Nodes: nodes, Racks: racks,
					InstanceType: it.Name, VCPUs: it.VCPUs, MemoryGB: it.MemoryGB, DiskGB: it.StorageGB, Dir: abs,
					BaseAddress: base, ClusterName: name, ExtraNodeArgs: extra, StartTimeout: timeout, Detached: true,
					SharedProcess: process == "shared"}
				fmt.Fprintf(e.Stderr, "starting %d × %s nodes in %s\n", nodes, it.Name, abs)
				cl, err := localcluster.Start(c.Context(), opts)
				if err != nil {
					return withCode(ExitRunError, fmt.Errorf("cluster up: %w", err))
				}
				st := clusterState{Cluster: name, Nodes: cl.Nodes(), HostSocket: cl.HostSocket()}
				b, _ := json.MarshalIndent(st, "", "  ")
				if err := os.WriteFile(filepath.Join(abs, clusterStateFile), b, 0o644); err != nil {
					cl.Close()
					return withCode(ExitRunError, fmt.Errorf("cluster up: recording pids: %w", err))
				}
				out := map[string]any{"cluster_name": name, "dir": abs, "hosts": cl.Hosts(),
					"cql_port": localcluster.CQLPort, "rest_port": localcluster.RESTPort,
					"metrics_port": localcluster.MetricsPort, "internode_port": localcluster.InternodePort, "nodes": cl.Nodes()}
				line, _ := json.Marshal(out)
				fmt.Fprintln(e.Stdout, string(line))
				return nil
			},
		}
		up.Flags().StringVar(&dir, "dir", "", "directory for data, logs and the pid file (required)")
		up.Flags().IntVar(&nodes, "nodes", 3, "number of nodes")
		up.Flags().IntVar(&racks, "racks", 3, "number of racks (nodes round-robin)")
		up.Flags().StringVar(&itype, "instance-type", "i4i.large", "instance type from the catalog (vCPUs, memory, disk)")
		up.Flags().StringVar(&base, "base-address", "127.0.0.2", "address of the first node (when not given and 127.0.0.2... is taken, the first free range)")
		up.Flags().StringVar(&name, "cluster-name", "elasticity-local", "cluster name")
		up.Flags().StringSliceVar(&extra, "node-arg", nil, "extra flag passed to every node (repeatable), e.g. --node-arg=--ops-per-vcpu=5000")
		up.Flags().DurationVar(&timeout, "timeout", 60*time.Second, "how long to wait for each node to be NORMAL")
		up.Flags().StringVar(&process, "process", "shared", "shared: every node in one process, internode messages in memory (each node keeps its own listeners, data and log); per-node: a process per node")

		var downDir string
		var grace time.Duration
		down := &cobra.Command{
			Use:   "down",
			Short: "Stop a cluster started by cluster up (SIGTERM, then SIGKILL)",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, args []string) error {
				if downDir == "" {
					return withCode(ExitInvalid, errors.New("cluster down: --dir is required"))
				}
				path := filepath.Join(downDir, clusterStateFile)
				b, err := os.ReadFile(path)
				if err != nil {
					return withCode(ExitInvalid, fmt.Errorf("cluster down: %w", err))
				}
				var st clusterState
				if err := json.Unmarshal(b, &st); err != nil {
					return withCode(ExitInvalid, fmt.Errorf("cluster down: parsing %s: %w", path, err))
				}
				var errs []error
				stopped := map[int]bool{} // a shared process once
				for _, n := range st.Nodes {
					if stopped[n.Pid] || !ourNode(n, st.HostSocket) {
						continue
					}
					stopped[n.Pid] = true
					if err := localcluster.StopPid(n.Pid, grace, nil); err != nil {
						errs = append(errs, err)
					}
					fmt.Fprintf(e.Stderr, "stopped node %d (%s, pid %d)\n", n.Index+1, n.Addr, n.Pid)
				}
				if err := errors.Join(errs...); err != nil {
					return withCode(ExitRunError, fmt.Errorf("cluster down: %w", err))
				}
				os.Remove(path)
				return nil
			},
		}
		down.Flags().StringVar(&downDir, "dir", "", "directory given to cluster up (required)")
		down.Flags().DurationVar(&grace, "timeout", 20*time.Second, "SIGKILL nodes that have not exited after this long")
		root.AddCommand(up, down)
		return root
	})
}

// baseAddress is the cluster's first address: the one asked for, which must
// be free (the error names a free one), or, when --base-address was not
// given and the default range is taken, the first free range, said on stderr.
func baseAddress(c *cobra.Command, base string, nodes int, e *env) (string, error) {
	err := localcluster.CheckRange(base, nodes)
	var taken *localcluster.AddressTakenError
	if err == nil || !errors.As(err, &taken) || taken.Free == "" {
		return base, err
	}
	if c.Flags().Changed("base-address") {
		return base, fmt.Errorf("%w: use --base-address %s", err, taken.Free)
	}
	fmt.Fprintf(e.Stderr, "%s is in use; starting on %s instead (give --base-address to choose)\n", taken.Busy, taken.Free)
	return taken.Free, nil
}

// ourNode checks that pid still runs this node (not a recycled pid): its
// data directory, or the host socket of a shared process, is on its
// command line.
func ourNode(n *localcluster.Node, hostSocket string) bool {
	if syscall.Kill(n.Pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", n.Pid))
	if err != nil {
		return true // no /proc: trust the pid file
	}
	if hostSocket != "" {
		return strings.Contains(string(b), localcluster.ControlSocketFlag+"\x00"+hostSocket)
	}
	return strings.Contains(string(b), n.DataDir)
}
