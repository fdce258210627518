package reporting

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/elasticity-dev/elasticity/results"
)

// EmulatedNote is what every report of an emulated run says.
const EmulatedNote = "Emulated run: the nodes are elasticity's ScyllaDB-like emulator, so the numbers are shapes, not ScyllaDB's absolute figures."

// SetupLine describes the run in one sentence, like the reference reports.
// Topology steps say what they actually added when the result knows it.
func SetupLine(res *results.Result) string {
	s := &res.Setup
	var parts []string
	// Initial cluster, grouped by instance type.
	var order []string
	count, vcpu := map[string]int{}, map[string]int{}
	for _, n := range s.InitialNodes {
		if count[n.InstanceType] == 0 {
			order = append(order, n.InstanceType)
		}
		count[n.InstanceType]++
		vcpu[n.InstanceType] = n.VCPUs
	}
	var nodes []string
	for _, t := range order {
		d := fmt.Sprintf("%d × %s", count[t], orDash(t))
		if vcpu[t] > 0 {
			d += fmt.Sprintf(" (%d vCPU)", vcpu[t])
		}
		nodes = append(nodes, d)
	}
	if len(nodes) == 0 {
		nodes = []string{"unknown cluster"}
	}
	cl := strings.Join(nodes, " + ")
	if len(s.Racks) > 0 {
		cl += fmt.Sprintf(" in %d rack%s", len(s.Racks), plural(len(s.Racks)))
	}
	parts = append(parts, cl)
	if s.RF > 0 {
		parts = append(parts, fmt.Sprintf("RF=%d", s.RF))
	}
	if s.Tablets > 0 {
		parts = append(parts, fmt.Sprintf("tablets %d", s.Tablets))
	} else {
		parts = append(parts, "vnodes")
	}
	if len(s.FillTargets) > 0 {
		var f []string
		for _, t := range s.FillTargets {
			f = append(f, fmt.Sprintf("%g%%", t.TargetPercent))
		}
		parts = append(parts, "filled to "+strings.Join(f, " then "))
	}
	w := workload(s)
	if s.RateOpsPerSec > 0 {
		w += " at " + Thousands(s.RateOpsPerSec) + " op/s"
	}
	if s.LoadPercent > 0 {
		w += fmt.Sprintf(" (%g%% of capacity)", s.LoadPercent)
	}
	parts = append(parts, w)
	for _, n := range s.Nemesis {
		parts = append(parts, nemesisText(n, res.Nodes))
	}
	db := "ScyllaDB"
	if strings.EqualFold(s.Flavour, "cassandra") {
		db = "Cassandra"
	}
	if s.DatabaseVersion != "" {
		db += " " + s.DatabaseVersion
	}
	if s.Emulated {
		db += " (emulated)"
	}
	parts = append(parts, db)
	return strings.Join(parts, ", ")
}

func workload(s *results.Setup) string {
	mix := mixText(s)
	if m := s.Model; m != nil {
		var ops []string
		for _, o := range m.Ops {
			ops = append(ops, fmt.Sprintf("%s %g%%", o.Name, o.SharePct))
		}
		return fmt.Sprintf("%s on %s.%s (%s; %s)", m.Kind, m.Keyspace, m.Table, strings.Join(ops, ", "), mix)
	}
	return mix
}

// mixText is the write:read mix of the setup.
func mixText(s *results.Setup) string {
	w, r := s.WriteRatio, s.ReadRatio
	switch {
	case w > 0 && r > 0:
		a, b := math.Round(w*100), math.Round(r*100)
		g := gcd(int(a), int(b))
		if g == 0 {
			g = 1
		}
		return fmt.Sprintf("mixed %d:%d (write:read)", int(a)/g, int(b)/g)
	case w > 0:
		return "write-only"
	case r > 0:
		return "read-only"
	}
	return "workload"
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func nemesisText(n results.NemesisInfo, nodes []results.NodeInfo) string {
	mode := ""
	if n.Mode != "" {
		mode = ", " + n.Mode
	}
	switch n.Kind {
	case results.KindGrow:
		var added, racks []string
		seen := map[string]bool{}
		for _, nd := range nodes {
			if nd.AddedBy == n.Name && n.Name != "" {
				added = append(added, nd.Name)
				if nd.Rack != "" && !seen[nd.Rack] {
					seen[nd.Rack] = true
					racks = append(racks, nd.Rack)
				}
			}
		}
		if len(racks) > 0 && len(added) != max(n.CountPerRack, 1)*len(racks) || len(racks) == 1 {
			return fmt.Sprintf("grow by %d × %s in %s%s", len(added), orDash(n.InstanceType), strings.Join(racks, ", "), mode)
		}
		return fmt.Sprintf("grow by %d × %s per rack%s", max(n.CountPerRack, 1), orDash(n.InstanceType), mode)
	case results.KindShrink:
		return fmt.Sprintf("shrink by %d per rack%s", max(n.CountPerRack, 1), mode)
	case results.KindDrain:
		return fmt.Sprintf("drain %d per rack%s", max(n.CountPerRack, 1), mode)
	case results.KindHold:
		return "hold (" + n.Name + ")"
	}
	return string(n.Kind) + " " + n.Name
}

func orDash(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Answers are the derived answers, one sentence each.
func Answers(res *results.Result) []string {
	d := res.Derived
	if d == nil {
		return nil
	}
	var out []string
	if d.ScaleOutSeconds > 0 {
		s := fmt.Sprintf("Time to scale: %s from the first request", HMS(d.ScaleOutSeconds))
		var b []string
		if d.NodesNormalSeconds > 0 {
			b = append(b, "all nodes normal after "+HMS(d.NodesNormalSeconds))
		}
		if d.DataBalancedSeconds > 0 {
			b = append(b, "data balanced after "+HMS(d.DataBalancedSeconds))
		}
		if d.LatencyRecoveredSeconds > 0 {
			b = append(b, "latency recovered after "+HMS(d.LatencyRecoveredSeconds))
		} else {
			b = append(b, "latency recovery not recorded")
		}
		out = append(out, s+" ("+strings.Join(b, ", ")+").")
	}
	if d.Mode != "" {
		out = append(out, fmt.Sprintf("Nodes were added/removed: %s.", d.Mode))
	}
	if d.OpsPerVCPUBefore > 0 {
		s := fmt.Sprintf("Throughput per vCPU: %s op/s per vCPU before (Cycle #0, %d vCPUs)", Thousands(d.OpsPerVCPUBefore), d.VCPUsBefore)
		if d.OpsPerVCPUAfter > 0 {
			s += fmt.Sprintf(", %s after (last cycle, %d vCPUs)", Thousands(d.OpsPerVCPUAfter), d.VCPUsAfter)
		}
		out = append(out, s+" (the offered rate, not the capacity).")
	}
	if d.CapacityPerVCPUBefore > 0 {
		out = append(out, capacityAnswer(res))
	}
	if a := latencyAnswer(res.Cycles); a != "" {
		out = append(out, a)
	}
	if a := reactorAnswer(res.Cycles); a != "" {
		out = append(out, a)
	}
	if a := cacheAnswer(res.Cycles); a != "" {
		out = append(out, a)
	}
	if a := compactionAnswer(res.Cycles); a != "" {
		out = append(out, a)
	}
	if len(d.DiskBalancePerRackPct) > 0 {
		var p []string
		for _, r := range sortedKeys(d.DiskBalancePerRackPct) {
			p = append(p, fmt.Sprintf("%s %.1f", r, d.DiskBalancePerRackPct[r]))
		}
		out = append(out, "Disk balance per rack at the last snapshot (max − min usage, percentage points): "+strings.Join(p, ", ")+".")
	}
	return out
}

// latencyAnswer is every cycle's P99 (write/read) with its ratio to the
// first cycle's, the steady state's; and the same of the nodes' own P99
// where they export it, so that a rise the load generator or the host
// added shows as one the nodes did not see. "" with fewer than two cycles.
func latencyAnswer(cycles []results.Cycle) string {
	if len(cycles) < 2 {
		return ""
	}
	line := func(p99 func(c results.Cycle) (float64, float64)) string {
		w0, r0 := p99(cycles[0])
		parts := []string{fmt.Sprintf("%s %.2f/%.2f ms", cycles[0].Name, w0, r0)}
		for _, c := range cycles[1:] {
			w, r := p99(c)
			parts = append(parts, fmt.Sprintf("%s %.2f/%.2f ms (%s/%s)", c.Name, w, r, orDash(ratioText(w, w0)), orDash(ratioText(r, r0))))
		}
		return strings.Join(parts, ", ")
	}
	s := "P99 write/read per cycle, and against " + cycles[0].Name + ": " +
		line(func(c results.Cycle) (float64, float64) { return c.WriteP99MS, c.ReadP99MS })
	node := false
	for _, c := range cycles {
		node = node || c.NodeWriteP99MS > 0 || c.NodeReadP99MS > 0
	}
	if node {
		s += "; the nodes' own (their coordinators' latency): " +
			line(func(c results.Cycle) (float64, float64) { return c.NodeWriteP99MS, c.NodeReadP99MS })
	}
	return s + "."
}

// cacheAnswer gives, per cycle, the row cache's hit rate over the nodes and
// the coldest node's: a node that joined with a cold cache gets few reads
// from the coordinators until it warms, and the old replicas serve its
// share. "" when no cycle has the counters.
func cacheAnswer(cycles []results.Cycle) string {
	parts := perCycle(cycles, func(c results.Cycle) string {
		h := c.Cache
		if h == nil {
			return ""
		}
		p := fmt.Sprintf("%s %.0f%%", c.Name, h.HitPct)
		if h.ColdestNode != "" {
			p += fmt.Sprintf(" (coldest %s %.0f%%)", h.ColdestNode, h.ColdestHitPct)
		}
		return p
	})
	if parts == "" {
		return ""
	}
	return "Row cache hits per cycle (partitions reads found in cache, scylla_cache_partition_hits and _misses; " +
		"coordinators send a replica with a cold cache fewer reads, so the others serve its share until it warms): " +
		parts + "."
}

// perCycle joins what part says of each cycle, leaving out the cycles it
// says nothing of ("").
func perCycle(cycles []results.Cycle, part func(results.Cycle) string) string {
	var parts []string
	for _, c := range cycles {
		if p := part(c); p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ", ")
}

// reactorAnswer names, per cycle, the node whose busiest shard was the
// most utilized, and how long it was saturated: a P99 that rose with a
// saturated shard is the cluster's own queueing, where a host-bound
// cycle's is the machine's. "" when no cycle has the reading.
func reactorAnswer(cycles []results.Cycle) string {
	parts := perCycle(cycles, func(c results.Cycle) string {
		b := c.BusiestReactor
		if b == nil {
			return ""
		}
		p := fmt.Sprintf("%s %s %.0f%%", c.Name, b.Node, b.PeakPct)
		if s := math.Round(b.SaturatedS); s > 0 {
			p += fmt.Sprintf(" (saturated %s s)", Thousands(s))
		}
		if c.HostBound {
			p += " (host-bound)"
		}
		return p
	})
	if parts == "" {
		return ""
	}
	return fmt.Sprintf("Busiest reactor per cycle (the node whose busiest shard was the most utilized, scylla_reactor_utilization; "+
		"a shard at %d%% or more is saturated and queues its requests): %s.", results.ReactorSaturatedPct, parts)
}

// capacityAnswer is the capacity per vCPU before and after. A probe the
// host bounded (or that did not saturate the cluster) gives only a floor:
// "at least", with why, and a smaller figure after is then not a drop.
func capacityAnswer(res *results.Result) string {
	d := res.Derived
	s := fmt.Sprintf("Capacity per vCPU: %s%s op/s per vCPU before (calibrated %s op/s on %d vCPUs%s; the offered %s op/s is %s%.0f%% of it)",
		atLeast(d.CapacityBeforeLowerBound), Thousands(d.CapacityPerVCPUBefore), Thousands(res.Setup.CapacityOps), d.VCPUsBefore,
		probeBound(d.CapacityBeforeLowerBound, res.Probe(results.ProbeBefore)), Thousands(res.Setup.RateOpsPerSec), atMost(d.CapacityBeforeLowerBound), d.OfferedPctBefore)
	if d.CapacityPerVCPUAfter > 0 {
		s += fmt.Sprintf(", %s%s after (probed after the last step: %s op/s on %d vCPUs%s; the offered rate is %s%.0f%% of it)",
			atLeast(d.CapacityAfterLowerBound), Thousands(d.CapacityPerVCPUAfter), Thousands(res.CapacityAfterOps), d.VCPUsAfter,
			probeBound(d.CapacityAfterLowerBound, res.Probe(results.ProbeAfter)), atMost(d.CapacityAfterLowerBound), d.OfferedPctAfter)
	}
	s += "."
	if d.CapacityAfterLowerBound && d.CapacityPerVCPUAfter < d.CapacityPerVCPUBefore {
		s += " The smaller figure after is the probe's limit, not a drop in the cluster's capacity per vCPU."
	}
	return s
}

func atLeast(lowerBound bool) string {
	if lowerBound {
		return "at least "
	}
	return ""
}

func atMost(lowerBound bool) string {
	if lowerBound {
		return "at most "
	}
	return ""
}

// probeBound says why a probe's figure is a lower bound: what of the host
// bounded it (CapacityProbe.HostBound), that the nodes' reactors stayed
// far from saturated (CapacityProbe.ReactorsUnsaturated), or that it ended
// unsaturated.
func probeBound(lowerBound bool, p *results.CapacityProbe) string {
	if !lowerBound || p == nil {
		return ""
	}
	var why []string
	if p.HostBound {
		var h []string
		if p.MachineBusyPct >= results.HostBoundBusyPct {
			h = append(h, fmt.Sprintf("the load generator's machine %.0f%% busy", p.MachineBusyPct))
		}
		if p.HostLagMSPerS > 0 {
			h = append(h, fmt.Sprintf("node lag %.0f ms/s", p.HostLagMSPerS))
		}
		if p.LoaderLagMSPerS > 0 {
			h = append(h, fmt.Sprintf("load generator lag %.0f ms/s", p.LoaderLagMSPerS))
		}
		if p.CPUStealPct > 0 {
			h = append(h, fmt.Sprintf("CPU steal %.1f%%", p.CPUStealPct))
		}
		why = append(why, "the host bounded the probe: "+strings.Join(h, ", "))
	}
	if p.ReactorsUnsaturated && p.ReactorUtilizationPct != nil {
		why = append(why, fmt.Sprintf("the nodes' reactors were at most %.0f%% busy (busiest shard; a saturated one reads about 100%%), so their CPU did not end the probe: the load generator's host, or the nodes' disks or network, did",
			*p.ReactorUtilizationPct))
	}
	if p.Unsaturated {
		why = append(why, "the probe ended with P99 still under its ceiling")
	}
	return ", a lower bound as " + strings.Join(why, "; and ")
}

// compactionAnswer says whether compaction kept up with the writes, from
// the cycles' compaction backlog; "" when the nodes exported none.
func compactionAnswer(cycles []results.Cycle) string {
	var top *results.BacklogGrowth
	var topCycle string
	for _, c := range cycles {
		g := c.CompactionBacklog
		if g == nil {
			continue
		}
		if top == nil || g.End > top.End {
			top, topCycle = g, c.Name
		}
	}
	behind := results.CompactionBehindCycles(cycles)
	switch {
	case top == nil:
		return ""
	case len(behind) > 0:
		return fmt.Sprintf("Sustained load: no, compaction fell behind in %s (its backlog kept growing; see the latency tables): the offered load is more than the cluster sustains.", strings.Join(behind, ", "))
	}
	return fmt.Sprintf("Sustained load: yes, compaction kept up in every cycle (highest normalized backlog at a cycle's end %.1f, %s in %s).", top.End, top.Node, topCycle)
}

// Limitations lists what a reader should keep in mind.
func Limitations(res *results.Result) []string {
	var out []string
	if res.Setup.Emulated {
		out = append(out, EmulatedNote)
	}
	if res.Setup.TimeScale > 0 && res.Setup.TimeScale != 1 {
		out = append(out, fmt.Sprintf("Scenario durations were multiplied by %g for the %s backend.", res.Setup.TimeScale, res.Setup.Backend))
	}
	if res.Status == results.StatusInterrupted {
		out = append(out, "The run did not finish: the last cycle ends at the last record written.")
	}
	out = append(out, res.Setup.Limitations...)
	var off []string
	for _, n := range sortedKeys(res.Stalls.ThresholdMS) {
		if res.Stalls.ThresholdMS[n] >= results.NoStallReportsMS {
			off = append(off, n)
		}
	}
	if len(off) > 0 {
		out = append(out, fmt.Sprintf("No reactor stalls can be counted on %s: started with --blocked-reactor-notify-ms %s (the scylladb/scylla images of 2025.1–2025.3 hard-code it, dist/docker/scyllasetup.py), so Seastar reports none.",
			strings.Join(off, ", "), strconv.FormatFloat(res.Stalls.ThresholdMS[off[0]], 'f', -1, 64)))
	}
	out = append(out, "Latencies are response times measured from each operation's intended start (coordinated omission corrected), merged as HDR histograms per cycle.")
	return out
}
