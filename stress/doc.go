// Package stress is the load generator of elasticity: a fixed-rate open-model
// workload of any workload Model (model.go: the built-in key/value table,
// kv.go, and the forms registered by stress/models; package sched has the
// schedule and its catch-up policy),
// fill mode, a closed-loop calibration probe, per-interval HDR measurements
// written as results.LatencyRecord lines (latency.jsonl), and the CQL glue:
// sessions with token- and shard-aware routing, the schema and prepared
// statements of the key/value table.
//
// The generator only speaks CQL through the ScyllaDB fork of gocql, so it runs
// unchanged against emulated nodes and real ScyllaDB or Cassandra clusters.
package stress
