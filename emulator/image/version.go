// Package image is the double of the official scylladb/scylla container
// image (scylladb/scylladb dist/docker/), built from this repository's
// static binary (Dockerfile.emulator) and tagged with the ScyllaDB version
// it poses as. It mirrors, per version:
//
//   - the entrypoint (dist/docker/docker-entrypoint.py): its command-line
//     flags (dist/docker/commandlineparser.py, parsed as argparse's
//     parse_known_args does) and the scylla command line it writes
//     (dist/docker/scyllasetup.py, run by dist/common/supervisor/scylla-server.sh);
//   - ScyllaDB's refusal of a repeated option (Seastar's app_template::run
//     through boost::program_options, src/core/app-template.cc);
//   - supervisord as PID 1 with the image's programs
//     (dist/docker/etc/supervisord.conf.d/*.conf) and supervisord's restart
//     rules (supervisor/process.py, supervisor/options.py defaults);
//   - node_exporter on 9100 as a separate supervised program
//     (scylla-node-exporter.conf).
//
// The node itself is the emulator (package emulator). Nothing here imports
// the framework; which release has which of the above is
// internal/scyllaversion, which the docker backend reads too.
package image

// VersionEnv names the environment variable the image sets (from its build
// argument) to say which ScyllaDB version it poses as.
const VersionEnv = "ELASTICITY_IMAGE_SCYLLA_VERSION"
