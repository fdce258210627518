package plan

// Where the data sits and what a topology change moves, as the tablet load
// balancer places it: it equalizes tablets per shard, a node's load being
// its tablets over its shard count (scylladb service/tablet_allocator.cc,
// the load_balancer comment: "The algorithm aims to equalize tablet count
// on each shard"), and keeps a tablet's replicas on distinct racks, so with
// as many racks as replicas each rack holds a whole copy and tablets move
// within their rack (the emulator's balancer evens out per rack the same
// way, emulator/node/tablet_balancer.go). A node so holds its rack's data
// times its shards over the rack's shards: an i4i.4xlarge (16 shards)
// joining an i4i.large (2) takes 16/18 of the rack's data, not 1/N of the
// cluster's. Shards are vCPUs, as the emulated nodes have them.

// rackShards is the shards of each rack's nodes.
func rackShards(nodes []node) map[string]int {
	s := map[string]int{}
	for _, n := range nodes {
		s[n.rack] += max(1, n.it.VCPUs)
	}
	return s
}

// allShards is the shards of every rack.
func allShards(racks map[string]int) int {
	t := 0
	for _, s := range racks {
		t += s
	}
	return t
}

// rackData is what one rack holds: the data on disk split evenly over the
// racks that have nodes.
func (e *estimator) rackData() float64 {
	if r := len(rackShards(e.nodes)); r > 0 {
		return e.onDisk / float64(r)
	}
	return 0
}

// rackMove is one rack's part of a topology change: bytes that change
// node within the rack, streamed from the shards that give them (from)
// to those that take them (to), each shard at the streaming bandwidth per
// vCPU. It takes as long as the side with fewer shards needs: a migration
// runs at its slower end's per-shard rate, and concurrent ones share a
// shard's bandwidth (emulator/node/pacing.go).
type rackMove struct {
	bytes    float64
	from, to int // shards on each side
}

func (mv rackMove) seconds(bytesPerShard float64) float64 {
	if mv.bytes <= 0 {
		return 0
	}
	return mv.bytes / (bytesPerShard * float64(max(1, min(mv.from, mv.to))))
}

// joinMoves is what adding nodes (joining, with the racks' shards before
// them in old) moves, per rack: each new node takes its shards' share of
// its rack's data from the rack's old nodes. A rack that had no node gets
// its copy from every shard of the old cluster.
func joinMoves(old map[string]int, joining []node, rackData float64) []rackMove {
	total := allShards(old)
	var moves []rackMove
	for rack, s := range rackShards(joining) {
		o := old[rack]
		if o == 0 {
			moves = append(moves, rackMove{bytes: rackData, from: total, to: s})
			continue
		}
		moves = append(moves, rackMove{bytes: rackData * float64(s) / float64(o+s), from: o, to: s})
	}
	return moves
}

// leaveMoves is what removing nodes (leaving, from racks whose shards,
// theirs included, are in all) moves, per rack: each leaving node's data
// goes to the rest of its rack, or, if none is left there, to the rest of
// the cluster.
func leaveMoves(all map[string]int, leaving []node, rackData float64) []rackMove {
	total := allShards(all)
	var moves []rackMove
	for rack, s := range rackShards(leaving) {
		a := all[rack]
		rest := a - s
		if rest <= 0 {
			rest = total - a
		}
		moves = append(moves, rackMove{bytes: rackData * float64(s) / float64(max(1, a)), from: s, to: rest})
	}
	return moves
}

// batchSeconds is how long racks' moves made at once take: the slowest
// rack's, racks streaming in parallel; and the bytes they move.
func batchSeconds(moves []rackMove, bytesPerShard float64) (seconds, bytes float64) {
	for _, mv := range moves {
		seconds = max(seconds, mv.seconds(bytesPerShard))
		bytes += mv.bytes
	}
	return seconds, bytes
}
