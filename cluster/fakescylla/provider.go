package fakescylla

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
)

// Provider is a provision.Provider whose nodes are fake nodes of a Cluster,
// on consecutive loopback addresses from Base, for tests of code built on
// the cluster package (no processes, no emulator).
type Provider struct {
	FC    *Cluster
	Base  netip.Addr // node-1's address
	Ports Ports
	// Dir holds the nodes' (empty unless a test writes them) log files.
	Dir string
	// JoinAfter: added nodes stay JOINING this long.
	JoinAfter time.Duration
	// InitNode adjusts a fake node as it starts.
	InitNode func(name string, n *Node)
	// BroadcastBase, when valid, gives node-N the broadcast address
	// BroadcastBase+N-1, different from the address it serves at (as an EC2
	// instance gossips its private IP while the runner reaches its public one).
	BroadcastBase netip.Addr
	// DC, when set, is the DC every fake node's snitch reports, whatever the
	// cluster spec asked for (as Ec2Snitch names the DC after the region).
	DC string

	mu      sync.Mutex
	next    int
	Removed []string        // names given to RemoveNode, in order
	exited  map[string]bool // names whose "process" has exited
}

var _ provision.Provider = (*Provider)(nil)

// NewProvider returns a provider starting fake nodes at base, base+1 ...
func NewProvider(base string, ports Ports, dir string) *Provider {
	return &Provider{FC: New(), Base: netip.MustParseAddr(base), Ports: ports, Dir: dir, exited: map[string]bool{}}
}

// Name is "fake".
func (p *Provider) Name() string { return "fake" }

func (p *Provider) start(specs []provision.NodeSpec, joinAfter time.Duration) ([]provision.Node, error) {
	var out []provision.Node
	for _, s := range specs {
		p.mu.Lock()
		p.next++
		i := p.next
		p.mu.Unlock()
		addr, bcast := p.Base, p.BroadcastBase
		for k := 1; k < i; k++ {
			addr = addr.Next()
			if bcast.IsValid() {
				bcast = bcast.Next()
			}
		}
		name := fmt.Sprintf("node-%d", i)
		n := provision.Node{Name: name, ID: name, DC: "dc1", Rack: s.Rack, InstanceType: s.InstanceType, Address: addr.String(),
			CQLPort: p.Ports.CQL, RESTPort: p.Ports.REST, MetricsPort: p.Ports.Metrics, NodeExporterPort: p.Ports.NodeExporter}
		if p.Dir != "" {
			n.LogPath = filepath.Join(p.Dir, name+".log")
		}
		err := p.FC.Start(n.Address, p.Ports, func(fn *Node) {
			fn.JoinAfter, fn.Rack = joinAfter, s.Rack
			if bcast.IsValid() {
				fn.Broadcast = bcast.String()
			}
			if p.DC != "" {
				fn.DC = p.DC
			}
			if p.InitNode != nil {
				p.InitNode(name, fn)
			}
		})
		if err != nil {
			return out, err
		}
		out = append(out, n)
	}
	return out, nil
}

// Create starts NodesPerRack nodes per rack, interleaved across racks.
func (p *Provider) Create(ctx context.Context, spec provision.ClusterSpec) ([]provision.Node, error) {
	var specs []provision.NodeSpec
	for i := 0; i < spec.NodesPerRack; i++ {
		for _, r := range spec.Racks {
			specs = append(specs, provision.NodeSpec{Rack: r, InstanceType: spec.InstanceType})
		}
	}
	return p.start(specs, 0)
}

// AddNodes starts nodes that stay JOINING for JoinAfter.
func (p *Provider) AddNodes(ctx context.Context, specs []provision.NodeSpec) ([]provision.Node, error) {
	return p.start(specs, p.JoinAfter)
}

// StopNode closes the node's listeners and makes the others see it down.
func (p *Provider) StopNode(ctx context.Context, n provision.Node) error {
	p.FC.Stop(n.Address)
	p.FC.Update(n.Address, func(f *Node) { f.Down = true })
	return nil
}

// KillNode is StopNode.
func (p *Provider) KillNode(ctx context.Context, n provision.Node) error { return p.StopNode(ctx, n) }

// RemoveNode closes the node's listeners and records its name.
func (p *Provider) RemoveNode(ctx context.Context, n provision.Node) error {
	p.FC.Stop(n.Address)
	p.mu.Lock()
	p.Removed = append(p.Removed, n.Name)
	p.mu.Unlock()
	return nil
}

// Logs opens the node's log file (not followed).
func (p *Provider) Logs(ctx context.Context, n provision.Node) (io.ReadCloser, error) {
	if n.LogPath == "" {
		return nil, errors.New("fake: no log")
	}
	return os.Open(n.LogPath)
}

// Destroy closes every fake node.
func (p *Provider) Destroy(ctx context.Context) error { p.FC.Close(); return nil }

// SetExited marks a node's "process" as exited (see provision.ProcessChecker).
func (p *Provider) SetExited(name string) {
	p.mu.Lock()
	p.exited[name] = true
	p.mu.Unlock()
}

// NodeExited implements provision.ProcessChecker.
func (p *Provider) NodeExited(name string) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited[name] {
		return true, errors.New("exit status 1")
	}
	return false, nil
}

// RemovedNodes returns the names given to RemoveNode.
func (p *Provider) RemovedNodes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.Removed...)
}
