package results

import (
	"fmt"

	"github.com/elasticity-dev/elasticity/internal/scyllaversion"
)

// How ScyllaDB executes decommission and removenode requests made together,
// by version (scylladb/scylladb at the release tags; the emulator models
// the same in emulator/node/tablet_draining.go):
//
//   - before 2026.1 the topology coordinator takes one node request at a
//     time (service/topology_coordinator.cc get_next_task): the node enters
//     the tablet_draining transition, is drained, leaves, and only then is
//     the next request taken, so removals queue;
//   - from scylla-2026.1.0 (PARALLEL_TABLET_DRAINING in
//     gms/feature_service.hh, first in scylla-2026.1.0-rc0) every node with
//     a leave or remove request is draining at once
//     (service/storage_service.cc set_draining), the load balancer moves
//     the tablets of all of them (service/tablet_allocator.cc make_plan,
//     "Will drain node ... due to leave request"), their requests stay
//     paused meanwhile, and only the final step after draining
//     (write_both_read_old to left) is one node at a time. Joins are not
//     blocked by paused requests.
const (
	ScaleInQueued   = "queued"
	ScaleInParallel = "parallel"
)

// ScaleIn is how version executes removals requested together:
// ScaleInQueued before 2026.1, ScaleInParallel from 2026.1, "" when the
// version has no year.minor (unset: the backend's default or the newest).
func ScaleIn(version string) string {
	v, ok := scyllaversion.Known(version)
	switch {
	case !ok:
		return ""
	case v.ParallelTabletDraining():
		return ScaleInParallel
	}
	return ScaleInQueued
}

const (
	scaleInQueuedNote   = "Before ScyllaDB 2026.1 the topology coordinator executes one node request at a time (scylladb service/topology_coordinator.cc get_next_task): nodes requested together are drained and leave one after another, and the last waits for the others."
	scaleInParallelNote = "From ScyllaDB 2026.1 nodes requested to leave together are drained in parallel (PARALLEL_TABLET_DRAINING: service/storage_service.cc marks each draining, service/tablet_allocator.cc moves all their tablets at once); only the final step after draining is one node at a time."
)

// ScaleInNote says in a sentence how version executes removals requested
// together, both ways when the version is not known.
func ScaleInNote(version string) string {
	switch ScaleIn(version) {
	case ScaleInQueued:
		return scaleInQueuedNote
	case ScaleInParallel:
		return scaleInParallelNote
	}
	return fmt.Sprintf("The database version is not recorded, and scale-in depends on it. %s %s", scaleInQueuedNote, scaleInParallelNote)
}

// JoinNote says how joins requested together are executed (every version:
// a bootstrapping node is in transition until it is normal).
const JoinNote = "The topology coordinator executes one join at a time (scylladb service/topology_coordinator.cc get_next_task): nodes requested together join one after another, and the last waits for the others."
