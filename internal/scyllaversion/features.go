package scyllaversion

// What each release first has, from scylladb/scylladb at the release tags
// (git show TAG:path). Both the image double (emulator/image) and the
// docker backend (provision/docker) decide the image's flags from these;
// the emulated node and the planner decide scale-in from
// ParallelTabletDraining.

// DCRackFlags: --dc and --rack of dist/docker/commandlineparser.py,
// written to cassandra-rackdc.properties by scyllasetup.py
// write_rackdc_properties: from scylla-2025.4.0 (absent @scylla-2025.3.8).
// Before, they would reach scylla, which does not know them.
func (v Version) DCRackFlags() bool { return v.AtLeast(2025, 4, 0) }

// StallFlag: --blocked-reactor-notify-ms (default '25') of
// commandlineparser.py, passed on by scyllasetup.py arguments(): from
// 2025.4.4 (commit 793e2fa7f2 "dist/docker: add configurable
// blocked-reactor-notify-ms parameter", first in
// scylla-2025.4.4-candidate-20260223090100, first released as
// scylla-2025.4.5; present @scylla-2026.1.0-rc0). scylla-2025.1.0 to
// scylla-2025.4.3 hard-code "--blocked-reactor-notify-ms 999999999" in
// scyllasetup.py arguments() and have no such option, and a second one
// makes scylla refuse to start ("option '--blocked-reactor-notify-ms'
// cannot be specified more than once").
func (v Version) StallFlag() bool { return v.AtLeast(2025, 4, 4) }

// NodeExporter: dist/docker/etc/supervisord.conf.d/scylla-node-exporter.conf
// (and the scylla-node-exporter package in redhat/build_docker.sh) up to
// 2026.2; removed first in scylla-2026.3.0-rc0.
func (v Version) NodeExporter() bool { return !v.AtLeast(2026, 3, 0) }

// CoredumpSetup: docker-entrypoint.py calls scyllasetup.py
// coredumpSetup(), which creates <workdir>/coredump: from scylla-2026.3.0-rc0.
func (v Version) CoredumpSetup() bool { return v.AtLeast(2026, 3, 0) }

// ParallelTabletDraining: PARALLEL_TABLET_DRAINING
// (gms/feature_service.hh, first in scylla-2026.1.0-rc0, in no 2025.x tag;
// commit a009644c7d "raft_topology, tablets: Drain tablets in parallel with
// other topology operations"): every node with a leave or remove request
// drains at once, instead of one node request at a time.
func (v Version) ParallelTabletDraining() bool { return v.AtLeast(2026, 1, 0) }

// CriticalDiskMode: above critical_disk_utilization_level (db/config.cc,
// default 0.98) the database rejects user writes
// (utils/disk_space_monitor.cc, replica/database.cc): from
// scylla-2025.4.0 (the option is absent @scylla-2025.3.0). Before, a full
// disk refuses writes with "No space left on device" only.
func (v Version) CriticalDiskMode() bool { return v.AtLeast(2025, 4, 0) }
