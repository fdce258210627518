package acceptance

import (
	"context"
	"fmt"
	"time"

	"github.com/elasticity-dev/elasticity/cluster/scyllarest"
)

const dataMount = "/var/lib/scylla"

// tnode is one node of a test cluster as the framework sees it.
type tnode struct {
	Addr, Rack, Type string
	LogPath          string
	REST             *scyllarest.Client
	MetricsURL       string
	ExporterURL      string // node_exporter's /metrics (port 9100)
}

func (n *tnode) metric(ctx context.Context, name string, labels ...string) (float64, error) {
	fams, err := scrape(ctx, n.MetricsURL)
	if err != nil {
		return 0, err
	}
	v, ok := metricSum(fams, name, labels...)
	if !ok {
		return 0, fmt.Errorf("%s: no metric %s%v", n.Addr, name, labels)
	}
	return v, nil
}

// disk returns node_filesystem_{size,avail}_bytes of the data mountpoint,
// from node_exporter.
func (n *tnode) disk(ctx context.Context) (size, avail float64, err error) {
	fams, err := scrape(ctx, n.ExporterURL)
	if err != nil {
		return 0, 0, err
	}
	size, ok1 := metricSum(fams, "node_filesystem_size_bytes", "mountpoint", dataMount)
	avail, ok2 := metricSum(fams, "node_filesystem_avail_bytes", "mountpoint", dataMount)
	if !ok1 || !ok2 || size <= 0 {
		return 0, 0, fmt.Errorf("%s: no node_filesystem_{size,avail}_bytes{mountpoint=%q}", n.Addr, dataMount)
	}
	return size, avail, nil
}

func (n *tnode) diskUsage(ctx context.Context) (float64, error) {
	size, avail, err := n.disk(ctx)
	if err != nil {
		return 0, err
	}
	return 1 - avail/size, nil
}

// samplePeakUsage samples the disk usage of nodes every interval until the
// returned stop is called, which returns the peak usage per node.
func samplePeakUsage(ctx context.Context, nodes []*tnode, every time.Duration) (stop func() map[string]float64) {
	ctx, cancel := context.WithCancel(ctx)
	out := make(chan map[string]float64, 1)
	go func() {
		peak := map[string]float64{}
		for {
			for _, n := range nodes {
				if u, err := n.diskUsage(ctx); err == nil && u > peak[n.Addr] {
					peak[n.Addr] = u
				}
			}
			select {
			case <-ctx.Done():
				out <- peak
				return
			case <-time.After(every):
			}
		}
	}()
	return func() map[string]float64 {
		cancel()
		return <-out
	}
}
