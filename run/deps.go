package run

import (
	"context"

	"github.com/elasticity-dev/elasticity/cluster"
	"github.com/elasticity-dev/elasticity/nemesis"
	"github.com/elasticity-dev/elasticity/plan"
	"github.com/elasticity-dev/elasticity/results"
)

// Cluster is the running cluster as the runner sees it: the nemesis's view
// plus creation, readiness, description and teardown.
type Cluster interface {
	nemesis.Cluster
	// Create provisions the initial nodes and waits until they are ready.
	Create(ctx context.Context) error
	// Hosts are the CQL contact points.
	Hosts() []string
	// DataCenter is the DC the nodes report (the keyspace names it).
	DataCenter() (string, error)
	// Info describes every node that was ever part of the run.
	Info() []results.NodeInfo
	// CollectLogs copies every node's log into dir.
	CollectLogs(ctx context.Context, dir string) error
	// Flush writes every node's memtables to disk (nodetool flush).
	Flush(ctx context.Context) error
	// Compactions reads the running compactions of every node, by name
	// (monitor.Compactions); errors.Is(err, monitor.ErrNotExported) when
	// the nodes do not export them.
	Compactions(ctx context.Context) (map[string]int, error)
	// Destroy tears every node down; safe to call twice and after a failed Create.
	Destroy(ctx context.Context) error
}

// KeyspaceCleaner is what a Cluster may also do: nodetool cleanup of a
// keyspace on a node (a vnodes keyspace after a grow).
type KeyspaceCleaner interface {
	KeyspaceCleanup(ctx context.Context, n *cluster.Node, keyspace string) error
}

// Disk watches disk usage (it also appends samples to metrics.jsonl).
type Disk interface {
	// Run samples until ctx ends.
	Run(ctx context.Context)
	// Snapshot reads every node now.
	Snapshot(ctx context.Context) ([]results.NodeDisk, results.NodeDisk, error)
	// ClusterUsagePercent is the latest cluster-wide usage.
	ClusterUsagePercent() float64
	// MaxUsagePercent is the latest usage of the fullest node.
	MaxUsagePercent() float64
	// DataBytes is the latest total used bytes (all replicas), for timeouts.
	DataBytes() float64
}

// Load is the workload generator bound to the cluster.
type Load interface {
	// CreateSchema creates the keyspace and table (RF, tablets).
	CreateSchema(ctx context.Context) error
	// Fill writes new keys until done() is true, the keys written (counted
	// over every fill, as progress reports them) reach upTo when it is > 0,
	// or ctx ends. It returns that count.
	Fill(ctx context.Context, upTo int64, done func() bool, sink func(results.LatencyRecord), progress func(keys int64)) (int64, error)
	// Calibrate measures the sustainable rate (CapacityOps, ops/s) and
	// what the load generator saw of its own host meanwhile.
	Calibrate(ctx context.Context) (results.CapacityProbe, error)
	// Run applies the mixed workload at rate ops/s until ctx ends.
	Run(ctx context.Context, rate float64, sink func(results.LatencyRecord)) error
	// Close releases the sessions.
	Close()
}

// Env is what dependency constructors get from the runner.
type Env struct {
	Plan  *plan.Plan
	RunID string
	Dir   string
	Emit  func(results.Event)
	Logf  func(format string, args ...any)
	// Metrics appends one line to metrics.jsonl; MetricsWriter is the same file.
	Metrics       func(results.NodeSample)
	MetricsWriter *results.JSONLWriter
	// Fail ends the run with an error from outside the runner's own calls
	// (an unexpected node death, a load generator that gave up).
	Fail func(error)
}

// Deps builds the runner's collaborators. The real ones are wired by
// DefaultDeps; tests pass fakes.
type Deps struct {
	NewCluster func(ctx context.Context, env *Env) (Cluster, error)
	NewDisk    func(ctx context.Context, env *Env, c Cluster) (Disk, error)
	NewLoad    func(ctx context.Context, env *Env, c Cluster) (Load, error)
	// Finalize computes result.json and the reports from the run directory.
	Finalize func(dir, status, reason string) (*results.Result, error)
}
