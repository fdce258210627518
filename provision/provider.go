// Package provision creates and changes clusters on a backend. Backends live
// in sub-packages (local, docker, aws, static); they all implement Provider,
// and optional abilities are separate interfaces checked with a type
// assertion, as roachprod does.
package provision

import (
	"context"
	"io"
	"time"
)

// ClusterSpec is a cloud-agnostic description of the initial cluster.
type ClusterSpec struct {
	RunID        string            // unique per run; used in names, labels and tags
	Scenario     string            // scenario name
	Dir          string            // the run directory; providers keep per-node files below it
	ClusterName  string            // database cluster_name
	Flavour      string            // scylla | cassandra
	Version      string            // database version (image tag, AMI lookup)
	Image        string            // container image or AMI id, when given explicitly
	DC           string            // data centre name
	Racks        []string          // rack names (availability zones on AWS)
	NodesPerRack int               // initial nodes in every rack
	InstanceType string            // initial instance type, a catalog name
	ExtraArgs    []string          // extra database arguments
	Labels       map[string]string // extra labels/tags
	TTL          time.Duration     // resources may be garbage-collected after now+TTL
}

// NodeSpec asks for one more node.
type NodeSpec struct {
	Rack         string
	InstanceType string
}

// Node is a handle on a provisioned node.
type Node struct {
	Name         string // stable, human readable: node-1, node-2 ...
	ID           string // provider id: pid, container id, instance id
	DC           string
	Rack         string
	InstanceType string
	Address      string // address the runner uses for CQL, REST and metrics
	// PrivateAddress is the node's address inside the cloud network, which
	// loader machines in that network use; empty means Address.
	PrivateAddress string
	CQLPort        int
	RESTPort       int
	MetricsPort    int
	// NodeExporterPort is node_exporter's port beside the node (the data
	// filesystem's node_filesystem_*); 0 means 9100, its port on every backend.
	NodeExporterPort int
	LogPath          string // local file the node's log is streamed to (may be empty)
}

// GossipAddress is the address the backend expects the node to report for
// itself and that the other nodes' gossip, host-id and live/down lists
// hold: its private address inside a cloud network (ScyllaDB's listen and
// broadcast_rpc addresses on the machine image), else Address. The cluster
// package learns the real one from the node (cluster.Identity) and uses
// this guess only for a node that never answered.
func (n Node) GossipAddress() string {
	if n.PrivateAddress != "" {
		return n.PrivateAddress
	}
	return n.Address
}

// Provider creates, changes and destroys clusters on one backend.
type Provider interface {
	Name() string
	// Create starts the initial nodes. It returns when they are started, not
	// necessarily ready: readiness is checked through the database's own
	// interfaces by the cluster package.
	Create(ctx context.Context, spec ClusterSpec) ([]Node, error)
	// AddNodes starts new nodes that join the existing cluster.
	AddNodes(ctx context.Context, specs []NodeSpec) ([]Node, error)
	// StopNode stops a node gracefully (SIGTERM or the backend's equivalent).
	StopNode(ctx context.Context, n Node) error
	// KillNode stops a node abruptly (SIGKILL or the backend's equivalent).
	KillNode(ctx context.Context, n Node) error
	// RemoveNode releases a node's resources after it left the cluster.
	RemoveNode(ctx context.Context, n Node) error
	// Logs streams a node's log from its start, following it until ctx ends.
	Logs(ctx context.Context, n Node) (io.ReadCloser, error)
	// Destroy tears down everything the provider created for this run.
	// It is safe to call more than once and after a failed Create.
	Destroy(ctx context.Context) error
}

// Pauser is an optional capability: freeze and thaw a node (SIGSTOP/SIGCONT, docker pause).
type Pauser interface {
	PauseNode(ctx context.Context, n Node) error
	ResumeNode(ctx context.Context, n Node) error
}

// Restarter is an optional capability: start a stopped node again.
type Restarter interface {
	StartNode(ctx context.Context, n Node) error
}

// NodeExit reports that a node's process (container, instance) ended.
type NodeExit struct {
	Node Node
	Err  error // nil for exit status 0
	Time time.Time
	// Requested is true when the provider stopped it (StopNode, KillNode,
	// RemoveNode, Destroy): a death nobody needs to explain.
	Requested bool
}

// ExitNotifier is an optional capability of backends that see their nodes'
// processes end (local: the process exits; docker: the image's supervisor
// says scylla exited, or the container stops): one NodeExit per end.
// The channel is closed by Destroy.
type ExitNotifier interface {
	Exits() <-chan NodeExit
}

// ProcessChecker is an optional capability: tell whether a node's process
// has exited (with its exit error), so that waits on it fail at once
// instead of timing out. A node never started or already removed has not exited.
type ProcessChecker interface {
	NodeExited(name string) (exited bool, err error)
}

// IdentityChecker is an optional capability of backends whose nodes share
// a host's address space (local processes on loopback addresses): fail
// unless what answers on a node's address is the node the provider started.
// A node that could not bind its address dies while whoever holds it
// (another cluster, a leftover node) answers every probe; a readiness check
// must never take that for the node it waits for.
type IdentityChecker interface {
	CheckIdentity(ctx context.Context, n Node) error
}

// DiskReader is an optional capability: a node's data file system as seen
// from inside the node (docker: df in the container), for the disk monitor
// where node_exporter cannot be read.
type DiskReader interface {
	ReadDisk(ctx context.Context, n Node) (DiskUsage, error)
}

// DiskUsage is one reading of a node's data file system.
type DiskUsage struct {
	TotalBytes, UsedBytes, AvailBytes float64
	// Source says how it was read (results.NodeSample.Source).
	Source string
}

// LogCollector is an optional capability: copy every node's full log into dir.
type LogCollector interface {
	CollectLogs(ctx context.Context, dir string) error
}

// Resource is something a backend created that gc may remove.
type Resource struct {
	Kind      string // instance, container, network, security-group, process, data (a directory)
	ID        string
	Name      string
	RunID     string
	KeepUntil time.Time
	Expired   bool
}

// Sweeper is an optional capability of a backend: find (and remove) resources
// left by crashed runs whose keep-until has passed.
type Sweeper interface {
	Sweep(ctx context.Context, now time.Time, dryRun bool) ([]Resource, error)
}

// LoaderSpec asks for load-generator machines.
type LoaderSpec struct {
	Count        int
	InstanceType string // a catalog name (c6i.2xlarge ...); ignored by backends without instance types
}

// Loader is a machine that runs `elasticity stress` for the run.
type Loader struct {
	Name         string // loader-1, loader-2 ...
	ID           string // provider id (instance id, "local")
	InstanceType string
	// Address is where the runner reaches the loader (ssh), empty when Local.
	Address string
	// Local loaders are processes on the runner's own machine.
	Local bool
}

// LoaderLauncher is an optional capability: start machines for load
// generators. Destroy tears them down with the rest of the run.
type LoaderLauncher interface {
	LaunchLoaders(ctx context.Context, spec LoaderSpec) ([]Loader, error)
}
