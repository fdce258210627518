package monitor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/elasticity-dev/elasticity/cluster"
)

// CompactionsMetric is ScyllaDB's gauge of running compactions per shard
// (compaction/compaction_manager.cc, register_metrics: "compactions",
// "Holds the number of currently active compactions."). SCT's
// wait_no_compactions_running waits for its sum to be 0 (sdcm/tester.py,
// is_compaction_running).
const CompactionsMetric = "scylla_compaction_manager_compactions"

// CompactionBacklogMetric is ScyllaDB's compaction backlog per shard
// normalized by the shard's memory (compaction_manager.cc,
// register_metrics: "normalized_backlog", since 2022): the compaction
// controller's input, which gives the compaction group 50 shares at 0, 100
// at 1.5 and its maximum, 1000, from 30 (backlog_controller.hh,
// compaction_controller::normalization_factor).
const CompactionBacklogMetric = "scylla_compaction_manager_normalized_backlog"

// ErrNotExported says a node's metrics have no series the caller needs
// (an old image, a database that is not ScyllaDB): match it with errors.Is.
var ErrNotExported = errors.New("metric not exported")

// NotExportedError names the metric and the nodes whose endpoint answered
// without it. errors.Is(err, ErrNotExported) holds.
type NotExportedError struct {
	Metric string
	Nodes  []string
}

func (e *NotExportedError) Error() string {
	return fmt.Sprintf("%s: no %s series on %s", ErrNotExported, e.Metric, strings.Join(e.Nodes, ", "))
}

// Is makes errors.Is(err, ErrNotExported) true.
func (e *NotExportedError) Is(target error) bool { return target == ErrNotExported }

// Compactions reads the running compactions of every node
// (scylla_compaction_manager_compactions summed over shards) from its
// ScyllaDB metrics endpoint, by node name. A node whose endpoint answers
// without the series makes it a *NotExportedError (the cluster's
// compactions cannot be known); nodes that could not be read are named in
// the error, and the others are still returned.
func Compactions(ctx context.Context, nodes []*cluster.Node) (map[string]int, error) {
	type reading struct {
		n       int
		err     error
		missing bool
	}
	out := make([]reading, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fams, err := scrape(ctx, oneShot, n.Address, n.MetricsPort)
			if err != nil {
				out[i].err = fmt.Errorf("%s: %w", n.Name, err)
				return
			}
			f := fams[CompactionsMetric]
			if f == nil || len(f.Metric) == 0 {
				out[i].missing = true
				return
			}
			var sum float64
			for _, m := range f.Metric {
				sum += value(m)
			}
			out[i].n = int(sum + 0.5)
		}()
	}
	wg.Wait()
	running := map[string]int{}
	var missing []string
	var errs []error
	for i, r := range out {
		switch {
		case r.missing:
			missing = append(missing, nodes[i].Name)
		case r.err != nil:
			errs = append(errs, r.err)
		default:
			running[nodes[i].Name] = r.n
		}
	}
	if len(missing) > 0 {
		return running, &NotExportedError{Metric: CompactionsMetric, Nodes: missing}
	}
	return running, errors.Join(errs...)
}
