package localcluster

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/node"
)

// storeAloneCPU is what the mixed load's replica work costs the stores
// alone: three node stores (node.OpenStore, the nodes' Pebble shape for
// diskBytes) opened in this process, and at rate for d, with the mixed
// load's keys and open-model arrivals, each write applied to all three
// (RF=3) and each read answered by two (QUORUM), called straight, with no
// CQL, internode or node code around them. The CPU is this process's
// (getrusage), less the same driver's with calls that do nothing, so the
// figure is the stores' own: the part of a node's data path no change
// outside Pebble can remove.
func storeAloneCPU(ctx context.Context, b *testing.B, diskBytes int64, value []byte, keys, rate int, d time.Duration) float64 {
	// The node processes run with GOGC=300 (NodeEnv): so do the stores here.
	defer debug.SetGCPercent(debug.SetGCPercent(300))
	var stores []*node.Store
	for i := range 3 {
		s, err := node.OpenStore(fmt.Sprintf("%s/store-%d", b.TempDir(), i), diskBytes)
		if err != nil {
			b.Fatalf("opening store %d: %v", i, err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	id := [16]byte{1}
	ids := [][16]byte{id}
	var n atomic.Int64
	op := func(k int64) error {
		k %= int64(keys)
		pk := binary.BigEndian.AppendUint64(nil, uint64(k))
		i := int(k % 3)
		if n.Add(1)%2 == 1 {
			m := []engine.Mutation{{PartitionKey: pk, Cells: map[string][]byte{"v": value}, Timestamp: time.Now().UnixMicro()}}
			for _, s := range stores {
				if err := s.Apply(m, ids, false); err != nil {
					return err
				}
			}
			return nil
		}
		for _, s := range []*node.Store{stores[i], stores[(i+1)%3]} {
			if _, err := s.ReadRow(id, engine.Read{PartitionKey: pk}); err != nil {
				return err
			}
		}
		return nil
	}
	// Each store as the mixed load left the nodes' (a warm-up at the
	// rate), then the measured interval, then the driver alone.
	drive(ctx, rate, time.Second, op)
	cpu0 := selfCPU()
	lat, failed := drive(ctx, rate, d, op)
	cpu := selfCPU() - cpu0
	if failed > 0 {
		b.Fatalf("the stores alone: %d of %d operations failed", failed, failed+len(lat))
	}
	cpu0 = selfCPU()
	idle, _ := drive(ctx, rate, d, func(int64) error { return nil })
	driver := selfCPU() - cpu0
	return us(cpu)/float64(len(lat)) - us(driver)/float64(len(idle))
}

// selfCPU is this process's CPU time (user and system).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
