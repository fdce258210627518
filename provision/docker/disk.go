package docker

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	tcexec "github.com/testcontainers/testcontainers-go/exec"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
)

var _ provision.DiskReader = (*Provider)(nil)

// dfCommand reads the data file system from inside a container: GNU
// coreutils' df (in ScyllaDB's image; the image double answers the same
// command) in POSIX format (-P: one line per file system, never wrapped)
// with 1-byte blocks.
var dfCommand = []string{"df", "-P", "-B1", DataDir}

// ReadDisk implements provision.DiskReader: df of /var/lib/scylla run in
// the node's container, so the figures are the node's own mount (or, with
// docker.data_mount none, the host's file system, and the source says so).
func (p *Provider) ReadDisk(ctx context.Context, n provision.Node) (provision.DiskUsage, error) {
	m, err := p.member(n)
	if err != nil {
		return provision.DiskUsage{}, err
	}
	code, r, err := m.c.Exec(ctx, dfCommand, tcexec.Multiplexed())
	if err != nil {
		return provision.DiskUsage{}, fmt.Errorf("docker exec %s %s: %w", n.Name, strings.Join(dfCommand, " "), err)
	}
	out, err := io.ReadAll(io.LimitReader(r, 64<<10))
	if err != nil {
		return provision.DiskUsage{}, fmt.Errorf("docker exec %s df: reading its output: %w", n.Name, err)
	}
	if code != 0 {
		return provision.DiskUsage{}, fmt.Errorf("docker exec %s %s: exit status %d: %s", n.Name, strings.Join(dfCommand, " "), code, strings.TrimSpace(string(out)))
	}
	u, err := ParseDF(string(out))
	if err != nil {
		return u, fmt.Errorf("docker exec %s df: %w", n.Name, err)
	}
	u.Source = results.DiskSourceContainerDF
	if !p.Mounted() {
		u.Source = results.DiskSourceContainerDFHost
	}
	return u, nil
}

// ParseDF reads `df -P -B1 PATH`'s output (POSIX.1 df -P, GNU coreutils'
// print_table): a header, then "Filesystem 1-blocks Used Available
// Capacity Mounted-on" for PATH's file system. Used is total − available,
// as node_exporter's figures are read (size − avail): blocks reserved for
// root count as used.
func ParseDF(out string) (provision.DiskUsage, error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "Filesystem") {
		return provision.DiskUsage{}, fmt.Errorf("unexpected df output %q", out)
	}
	f := strings.Fields(lines[len(lines)-1])
	if len(f) < 6 {
		return provision.DiskUsage{}, fmt.Errorf("df line %q: want 6 fields", lines[len(lines)-1])
	}
	var v [3]float64
	for i := range v {
		n, err := strconv.ParseUint(f[1+i], 10, 64)
		if err != nil {
			return provision.DiskUsage{}, fmt.Errorf("df line %q: field %d: %w", lines[len(lines)-1], 2+i, err)
		}
		v[i] = float64(n)
	}
	total, avail := v[0], v[2]
	if total <= 0 {
		return provision.DiskUsage{}, fmt.Errorf("df line %q: a file system of 0 bytes", lines[len(lines)-1])
	}
	return provision.DiskUsage{TotalBytes: total, AvailBytes: avail, UsedBytes: max(total-avail, 0)}, nil
}
