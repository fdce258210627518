package sbench

import (
	"fmt"
	"sync/atomic"

	"github.com/elasticity-dev/elasticity/stress"
	"github.com/elasticity-dev/elasticity/stress/keygen"
)

// picker chooses the rows of an operation: scylla-bench's uniform workload
// (workloads.go RandomUniform: pk and each ck uniform), its sequential one
// (SequentialVisitAll: every row in pk, ck order, a batch not crossing a
// partition's end; here it wraps around instead of ending), or, without
// workload=, the scenario's key distribution for the pk and uniform cks.
type picker struct {
	dist       keygen.Distribution // nil: sequential
	partitions int64               // the population: pks offset .. offset+partitions-1
	rows       int64               // clustering rows per partition
	offset     int64
	salt       uint64       // from the binding's seed
	next       atomic.Int64 // sequential: the next row (pk index × rows + ck)
}

// newPicker builds the picker of an operation binding.
func (m *Model) newPicker(b stress.Binding) (*picker, error) {
	p := &picker{partitions: m.partitions(b), rows: m.o.ClusteringRowCount, offset: m.o.PartitionOffset}
	i, n := b.Share()
	if m.o.Workload == "sequential" {
		// Loader i of n visits its own part of the partitions, as SCT
		// runs scylla-bench's sequential writes with a -partition-offset
		// per loader (configurations/performance/*-steps-stress.yaml).
		p.offset, p.partitions = keygen.Part(p.offset, p.partitions, i, n)
	}
	if b.Seed != 0 {
		p.salt = keygen.Mix64(b.Seed)
	}
	switch m.o.Workload {
	case "sequential":
		return p, nil
	case "uniform":
		p.dist, _ = keygen.Parse(keygen.Uniform)
		return p, nil
	}
	d, err := keygen.Parse(b.Distribution)
	if err != nil {
		return nil, fmt.Errorf("key distribution: %w", err)
	}
	p.dist = keygen.ForLoader(d, i, n)
	return p, nil
}

// partitions is the population the operations address: partition-count
// when given, else the partitions the run filled, else scylla-bench's
// default.
func (m *Model) partitions(b stress.Binding) int64 {
	switch {
	case m.o.PartitionCount > 0:
		return m.o.PartitionCount
	case b.Keys > 0:
		return b.Keys
	}
	return defaultPartitionCount
}

// pick fills cks with up to len(cks) clustering keys of one partition and
// returns its pk and how many it filled: all of them for random rows, up to
// the partition's end for sequential ones.
func (p *picker) pick(seq uint64, cks []int64) (pk int64, n int) {
	if p.dist == nil {
		return p.sequential(cks)
	}
	s := seq ^ p.salt
	pk = p.offset + p.dist.Key(s, p.partitions)
	h := keygen.Mix64(s ^ 0x636b2d726f77) // independent of the pk's draw
	for i := range cks {
		cks[i] = int64(keygen.Mix64(h+uint64(i)) % uint64(p.rows))
	}
	return pk, len(cks)
}

// sequential takes the next rows in order, never past a partition's end.
func (p *picker) sequential(cks []int64) (int64, int) {
	for {
		r := p.next.Load()
		ck := r % p.rows
		n := min(int64(len(cks)), p.rows-ck)
		if !p.next.CompareAndSwap(r, r+n) {
			continue
		}
		for i := range n {
			cks[i] = ck + i
		}
		return p.offset + (r/p.rows)%p.partitions, int(n)
	}
}
