package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// The data path: replica selection, coordinator-side writes and reads at a
// consistency level, and the local reads and writes replicas serve.

// ---- replication ----

// replicasOf returns the natural and pending replicas of a token.
func (v *view) replicasOf(ks *engine.Keyspace, t *engine.Table, token int64) ([]Replica, []Replica) {
	if tm := v.tablets[t.ID]; tm != nil && len(tm.Tablets) > 0 {
		tb := &tm.Tablets[tm.index(token)]
		if tb.Pending != nil {
			return tb.Replicas, []Replica{*tb.Pending}
		}
		return tb.Replicas, nil
	}
	return vnodeReplicas(v.ring, ks, token, v.dcs), nil
}

func blockFor(cl engine.Consistency, rf int) int {
	switch cl {
	case engine.Any, engine.One, engine.LocalOne:
		return 1
	case engine.Two:
		return 2
	case engine.Three:
		return 3
	case engine.All:
		return rf
	}
	return rf/2 + 1
}

func (n *Node) lookup(v *view, ks, table string) (*engine.Keyspace, *engine.Table, error) {
	k := v.m.Keyspaces[ks]
	if k == nil {
		return nil, nil, engine.Errorf(engine.CodeInvalid, "Keyspace %s does not exist", ks)
	}
	t := v.m.Tables[ks][table]
	if t == nil {
		return nil, nil, engine.Errorf(engine.CodeInvalid, "unconfigured table %s", table)
	}
	return k, t, nil
}

// Write implements engine.Backend.
func (n *Node) Write(ctx context.Context, ms []engine.Mutation, cl engine.Consistency) error {
	start := time.Now()
	defer func() { n.met.writeLatency.Observe(float64(time.Since(start).Microseconds())) }()
	if len(ms) == 1 {
		return n.writeOne(ctx, &ms[0], cl)
	}
	// The mutations of a partition that one of them deletes (a row or the
	// whole partition) are applied in order, one after the other: the CQL
	// layer puts a batch's deletions before the writes they do not cover,
	// as ScyllaDB applies one merged mutation per partition
	// (batch_statement.cc). Everything else in parallel, as before.
	type pkey struct{ ks, table, pk string }
	deleted := map[pkey]bool{}
	for i := range ms {
		if ms[i].Delete {
			deleted[pkey{ms[i].Keyspace, ms[i].Table, string(ms[i].PartitionKey)}] = true
		}
	}
	var groups [][]int
	seq := map[pkey]int{}
	for i := range ms {
		k := pkey{ms[i].Keyspace, ms[i].Table, string(ms[i].PartitionKey)}
		if !deleted[k] {
			groups = append(groups, []int{i})
			continue
		}
		g, ok := seq[k]
		if !ok {
			g = len(groups)
			seq[k] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	errs := make(chan error, len(groups))
	engine.WillWait(ctx)
	for _, g := range groups {
		go func() {
			for _, i := range g {
				if err := n.writeOne(ctx, &ms[i], cl); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var first error
	for range groups {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (n *Node) writeOne(ctx context.Context, m *engine.Mutation, cl engine.Consistency) error {
	if m.Counters != nil {
		return n.writeCounter(ctx, m, cl)
	}
	return n.replicate(ctx, m, cl, false, false)
}

// replicate sends m to its replicas and waits for cl. With counter set, m
// holds counter shards from this node as their leader (see counter.go),
// which has applied them locally already (localDone).
func (n *Node) replicate(ctx context.Context, m *engine.Mutation, cl engine.Consistency, counter, localDone bool) error {
	v := n.view.Load()
	ks, t, err := n.lookup(v, m.Keyspace, m.Table)
	if err != nil {
		return err
	}
	if !counter { // a counter's coordinator was charged in writeCounter
		if err := n.coordinate(ctx, v, t, m.PartitionKey); err != nil {
			return err
		}
	}
	reps, pending := v.replicasOf(ks, t, Token(m.PartitionKey))
	need := blockFor(cl, len(reps))
	targets := make([]string, 0, len(reps)+len(pending))
	alive := 0
	for _, r := range reps {
		if n.isUp(r.Host) {
			alive++
			targets = append(targets, r.Host)
		}
	}
	if alive < need || len(reps) == 0 {
		n.met.unavailable.Inc()
		return &engine.Error{Code: engine.CodeUnavailable, Message: fmt.Sprintf("Cannot achieve consistency level for cl %s. Requires %d, alive %d", cl, need, alive),
			Consistency: cl, Required: need, Alive: alive}
	}
	for _, p := range pending {
		if n.isUp(p.Host) {
			targets = append(targets, p.Host)
			need++
		}
	}
	res := make(chan error, len(targets))
	one := []engine.Mutation{*m}
	local := false
	op := opWrite
	if counter {
		op = opCounterApply
	}
	acked := func(_ *msg, err error) { res <- err }
	for _, h := range targets {
		if h == n.hostID {
			local = true
			continue
		}
		n.callAsync(ctx, h, &msg{Op: op, Muts: one}, acked)
	}
	if local && localDone {
		res <- nil
	} else if local {
		res <- n.localWrite(ctx, one, counter)
	}
	acks, fails := 0, 0
	var lastErr error
	for range targets {
		// An answer there already is taken without looking at ctx.Done,
		// which would arm the request's timer (cql's reqCtx).
		var err error
		select {
		case err = <-res:
		default:
			engine.WillWait(ctx)
			select {
			case err = <-res:
			case <-ctx.Done():
				return n.writeTimeout(cl, need, acks)
			}
		}
		if err == nil {
			acks++
			if acks >= need {
				return nil
			}
			continue
		}
		fails++
		lastErr = err
		if len(targets)-fails < need {
			var ee *engine.Error
			if errors.As(err, &ee) && (ee.Code == engine.CodeOverloaded || ee.Code == engine.CodeWriteFailure) {
				e := *ee
				e.Consistency, e.Required, e.Alive, e.Failures = cl, need, acks, fails
				if e.WriteType == "" {
					e.WriteType = "SIMPLE"
				}
				return &e
			}
			if errors.Is(err, context.DeadlineExceeded) {
				return n.writeTimeout(cl, need, acks)
			}
			return &engine.Error{Code: engine.CodeWriteFailure, Message: fmt.Sprintf("Operation failed for %s - received %d responses and %d failures: %v", cl, acks, fails, lastErr),
				Consistency: cl, Required: need, Alive: acks, Failures: fails, WriteType: "SIMPLE"}
		}
	}
	return n.writeTimeout(cl, need, acks)
}

func (n *Node) writeTimeout(cl engine.Consistency, need, acks int) error {
	n.met.writeTimeouts.Inc()
	return &engine.Error{Code: engine.CodeWriteTimeout, Message: fmt.Sprintf("Operation timed out for %s - received only %d responses from %d CL=%s.", "write", acks, need, cl),
		Consistency: cl, Required: need, Alive: acks, WriteType: "SIMPLE"}
}

// shardOf is the shard owning a token on this node.
func (n *Node) shardOf(v *view, t *engine.Table, token int64) int {
	if tm := v.tablets[t.ID]; tm != nil && len(tm.Tablets) > 0 {
		tb := tm.Tablets[tm.index(token)]
		for _, r := range tb.Replicas {
			if r.Host == n.hostID {
				return r.Shard
			}
		}
		if tb.Pending != nil && tb.Pending.Host == n.hostID {
			return tb.Pending.Shard
		}
	}
	return int(uint64(token) % uint64(n.cfg.VCPUs))
}

// coordinate charges the coordinator's own work on a request for the
// partition pk of t (the CQL layer and storage_proxy: parsing,
// executing, sending to the replicas and collecting their answers) to the
// shard that owns the key here, where a shard-aware driver sends it.
// Without it every cycle of a scale-out moved replica work only, and the
// small nodes kept coordinating a third of each tablet they gave away.
func (n *Node) coordinate(ctx context.Context, v *view, t *engine.Table, pk []byte) error {
	if n.cfg.CoordinatorUnits <= 0 {
		return nil
	}
	return n.cap.Do(ctx, n.shardOf(v, t, Token(pk)), n.cfg.CoordinatorUnits)
}

// localWrite applies mutations as a replica; counter says they hold
// counter shards.
func (n *Node) localWrite(ctx context.Context, ms []engine.Mutation, counter bool) error {
	v := n.view.Load()
	ids := make([][16]byte, len(ms))
	tables := make([]*engine.Table, len(ms))
	for i := range ms {
		_, t, err := n.lookup(v, ms[i].Keyspace, ms[i].Table)
		if err != nil {
			return err
		}
		ids[i], tables[i] = t.ID, t
		if err := n.cap.Do(ctx, n.shardOf(v, t, Token(ms[i].PartitionKey)), 1); err != nil {
			return err
		}
		check := n.disk.CheckMutation
		if internalKeyspace(ms[i].Keyspace) || !n.criticalDiskMode {
			check = n.disk.CheckWrite
		}
		if err := check(mutationSize(&ms[i])); err != nil {
			return err
		}
	}
	if n.store.writesStalled() {
		engine.WillWait(ctx)
	}
	if err := n.store.Apply(ms, ids, counter); err != nil {
		n.log.Logf(scyllalog.Error, "storage_proxy", "Failed to apply mutation: %v", err)
		return engine.Errorf(engine.CodeWriteFailure, "applying mutation: %v", err)
	}
	n.met.replicaWrites.Add(float64(len(ms)))
	for i := range ms {
		n.topSampler.sample(true, tables[i], ms[i].PartitionKey)
	}
	return nil
}

// readTable reads r from this replica's store once the caller has looked
// its table up in view v.
func (n *Node) readTable(ctx context.Context, v *view, t *engine.Table, r engine.Read) ([]engine.Row, error) {
	if err := n.cap.Do(ctx, n.shardOf(v, t, Token(r.PartitionKey)), 1); err != nil {
		return nil, err
	}
	n.topSampler.sample(false, t, r.PartitionKey)
	hidden := t.ReaddedColumns()
	wantMeta := r.CellMeta
	r.CellMeta = r.CellMeta || hidden != nil
	var rows []engine.Row
	var err error
	if len(r.ClusteringPrefix) == 0 && !hasClustering(t) {
		rows, err = n.store.ReadRow(t.ID, r)
	} else {
		rows, err = n.store.Read(t.ID, r)
	}
	for i := range rows {
		engine.HideDropped(&rows[i], hidden, wantMeta)
	}
	return rows, err
}

func hasClustering(t *engine.Table) bool {
	for _, c := range t.Columns {
		if c.Kind == engine.Clustering {
			return true
		}
	}
	return false
}

// Read implements engine.Backend.
func (n *Node) Read(ctx context.Context, r engine.Read, cl engine.Consistency) ([]engine.Row, error) {
	start := time.Now()
	defer func() { n.met.readLatency.Observe(float64(time.Since(start).Microseconds())) }()
	v := n.view.Load()
	ks, t, err := n.lookup(v, r.Keyspace, r.Table)
	if err != nil {
		return nil, err
	}
	reps, _ := v.replicasOf(ks, t, Token(r.PartitionKey))
	alive, need, err := n.liveReplicas(v, reps, cl)
	if err != nil {
		return nil, err
	}
	if err := n.coordinate(ctx, v, t, r.PartitionKey); err != nil {
		return nil, err
	}
	n.hwlbOrder(t.ID, alive, need)
	type result struct {
		rows []engine.Row
		err  error
	}
	// Ask the replicas the level needs; a failure or a slow answer
	// (speculativeRetry) brings in one more live replica, as ScyllaDB's
	// speculative retry does, so one paused replica does not fail reads.
	res := make(chan result, len(alive))
	send := func(h string) {
		if h == n.hostID {
			n.pool.run(func() {
				rows, err := n.readTable(ctx, v, t, r)
				res <- result{rows, err}
			})
			return
		}
		// No goroutine for a remote replica: the connection's reader
		// delivers the answer (res has room for every replica).
		n.callAsync(ctx, h, &msg{Op: opRead, Read: &r}, func(m *msg, err error) {
			if err != nil {
				res <- result{nil, err}
				return
			}
			n.peerHeat.set(t.ID, h, m.Temp, time.Now())
			res <- result{m.Rows, nil}
		})
	}
	// The local replica's read runs on this goroutine once the remote
	// requests are out, when its shard serves it at once: handing it to a
	// worker cost a wake-up per read (issue 17). A local read that would
	// queue still goes to a worker, so the speculative retry below runs
	// while it waits (scylladb service/storage_proxy.cc: a speculating read
	// executor sends one more data request once the retry delay passes).
	sentAt := time.Now()
	sent, inline := 0, false
	for ; sent < need; sent++ {
		if alive[sent] == n.hostID && n.cap.Immediate(n.shardOf(v, t, Token(r.PartitionKey)), 1) {
			inline = true
			continue
		}
		send(alive[sent])
	}
	if inline {
		rows, err := n.readTable(ctx, v, t, r)
		res <- result{rows, err}
	}
	// The speculative retry's timer starts when the read first waits: one
	// whose replicas answered on this goroutine (the local one, and nodes
	// of this process: mempeers.go) needs none.
	var spec *time.Timer
	var specC <-chan time.Time
	defer func() {
		if spec != nil {
			spec.Stop()
		}
	}()
	var got [][]engine.Row
	fails := 0
	var lastErr error
	for len(got)+fails < sent {
		// An answer there already is taken without looking at ctx.Done,
		// which would arm the request's timer (cql's reqCtx).
		var rr result
		select {
		case rr = <-res:
		default:
			if spec == nil {
				spec = time.NewTimer(max(0, speculativeRetry-time.Since(sentAt)))
				specC = spec.C
			}
			engine.WillWait(ctx)
			select {
			case <-specC:
				if sent < len(alive) {
					send(alive[sent])
					sent++
				}
				continue
			case rr = <-res:
			case <-ctx.Done():
				n.met.readTimeouts.Inc()
				return nil, &engine.Error{Code: engine.CodeReadTimeout, Message: fmt.Sprintf("Operation timed out for read - received only %d responses from %d CL=%s.", len(got), need, cl),
					Consistency: cl, Required: need, Alive: len(got)}
			}
		}
		if rr.err != nil {
			fails++
			lastErr = rr.err
			if sent < len(alive) {
				send(alive[sent])
				sent++
				continue
			}
			if len(alive)-fails < need {
				var ee *engine.Error
				if errors.As(rr.err, &ee) && ee.Code == engine.CodeOverloaded {
					return nil, ee
				}
				return nil, &engine.Error{Code: engine.CodeReadFailure, Message: fmt.Sprintf("Operation failed for %s - received %d responses and %d failures: %v", cl, len(got), fails, lastErr),
					Consistency: cl, Required: need, Alive: len(got), Failures: fails}
			}
			continue
		}
		got = append(got, rr.rows)
		if len(got) >= need {
			if isCounterTable(t) {
				rows := mergeCounterRows(got)
				if r.Limit > 0 && len(rows) > r.Limit {
					rows = rows[:r.Limit]
				}
				finishCounterRows(rows)
				return rows, nil
			}
			return mergeRows(got, r.Limit), nil
		}
	}
	return nil, &engine.Error{Code: engine.CodeReadFailure, Message: fmt.Sprintf("read failed: %v", lastErr), Consistency: cl, Required: need, Alive: len(got), Failures: fails}
}

// mergeRows merges replica answers by clustering key, newest row winning.
func mergeRows(sets [][]engine.Row, limit int) []engine.Row {
	if len(sets) == 1 {
		return sets[0]
	}
	if rows, ok := mergeSingleRows(sets); ok {
		return rows
	}
	return mergeRowsByKey(sets, limit)
}

// mergeRowsByKey is mergeRows for any answers.
func mergeRowsByKey(sets [][]engine.Row, limit int) []engine.Row {
	by := map[string]engine.Row{}
	for _, s := range sets {
		for _, r := range s {
			k := string(r.Clustering)
			if o, ok := by[k]; !ok || r.Timestamp > o.Timestamp {
				by[k] = r
			}
		}
	}
	out := make([]engine.Row, 0, len(by))
	for _, r := range by {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Clustering, out[j].Clustering) < 0 })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// mergeSingleRows merges answers of at most one row each, all of one
// clustering key (a single-row read, a client operation's usual answer),
// without mergeRows' map: the newest row, the first of equally new ones,
// as mergeRows picks. ok is false for other answers.
func mergeSingleRows(sets [][]engine.Row) (rows []engine.Row, ok bool) {
	var best *engine.Row
	for _, s := range sets {
		switch len(s) {
		case 0:
			continue
		case 1:
		default:
			return nil, false
		}
		if best == nil {
			best = &s[0]
			continue
		}
		if !bytes.Equal(best.Clustering, s[0].Clustering) {
			return nil, false
		}
		if s[0].Timestamp > best.Timestamp {
			best = &s[0]
		}
	}
	if best == nil {
		return []engine.Row{}, true
	}
	return []engine.Row{*best}, true
}

// liveReplicas is the live part of reps and how many answers cl needs, or
// ScyllaDB's Unavailable error when fewer are alive. The live hosts come
// nearest first, as storage_proxy orders a read's replicas
// (locator/topology.cc do_sort_by_proximity): this node, then its rack,
// then its DC, then other DCs, equally near ones in random order. A QUORUM
// read's remote data request then goes to either other replica, not always
// to the tablet's first one (which served two thirds of the remote reads).
func (n *Node) liveReplicas(v *view, reps []Replica, cl engine.Consistency) (alive []string, need int, err error) {
	need = blockFor(cl, len(reps))
	for _, rp := range reps {
		if n.isUp(rp.Host) {
			alive = append(alive, rp.Host)
		}
	}
	if len(alive) < need || len(reps) == 0 {
		n.met.unavailable.Inc()
		return nil, need, &engine.Error{Code: engine.CodeUnavailable, Message: fmt.Sprintf("Cannot achieve consistency level for cl %s. Requires %d, alive %d", cl, need, len(alive)),
			Consistency: cl, Required: need, Alive: len(alive)}
	}
	me := v.m.Nodes[n.hostID]
	distance := func(h string) int {
		nm := v.m.Nodes[h]
		switch {
		case h == n.hostID:
			return 0
		case me == nil || nm == nil || nm.DC != me.DC:
			return 3
		case nm.Rack != me.Rack:
			return 2
		}
		return 1
	}
	rand.Shuffle(len(alive), func(i, j int) { alive[i], alive[j] = alive[j], alive[i] })
	slices.SortStableFunc(alive, func(a, b string) int { return distance(a) - distance(b) })
	return alive, need, nil
}

// internalKeyspace: ScyllaDB's critical disk utilization mode spares the
// tables of internal keyspaces, but for system_traces
// (replica/database.cc add_column_family: eligible unless
// is_internal(), or the tracing keyspace).
func internalKeyspace(ks string) bool {
	return strings.HasPrefix(ks, "system") && ks != "system_traces"
}
