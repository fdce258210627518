// Package csstress is the "cs" workload form: a cassandra-stress command
// line (`workload.stress_cmd`) as a stress.Model, spec "cs:<command line>".
//
// Accepted, with cassandra-stress's meaning (scylladb/cassandra-stress
// tools/stress settings/*.java, named at each option): the commands write,
// read, mixed ratio(...), counter_write and counter_read with cl=, keysize=,
// add=; -rate threads= fixed= throttle=; -pop seq= dist=; -col size= n=
// names= timestamp=; -schema replication(...) keyspace= compaction(...)
// compression=; -mode cql3 native. Options that give way to the scenario
// (n=, duration=, no-warmup, -node, -port, -log, -mode's connection
// settings, -errors ignore) are accepted with a Note that says so; every
// other option is an error naming it. The user command is parsed here
// (ParseUser) and built by the profile form.
//
// Beyond the stress.Model contract, *Model implements stress.RateSetter: the
// command line's -rate (fixed=/throttle= as an arrival rate, threads= as the
// bound on operations in flight), for the job to use.
//
// Keys and values: the population index i (1-based, as cassandra-stress's
// seeds) is the row's identity; its key is keysize hex characters of a
// bijective permutation of i, every cell value a function of i and the
// column, so rows are regenerable (Regenerable is true without counters)
// and *Model is a stress.Validator: data validation reads standard1's rows
// back (validation's key k is the fill's row, index k+1).
package csstress
