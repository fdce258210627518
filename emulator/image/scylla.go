package image

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/elasticity-dev/elasticity/emulator"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// scyllaOption is one option the double's scylla knows: ScyllaDB's and
// Seastar's (db/config.cc, seastar's reactor options) that the image's
// command line uses, plus the emulator's own model flags.
type scyllaOption struct {
	name   string
	noArg  bool // a bool_switch such as --overprovisioned
	vector bool // a std::vector option (validate appends; may repeat)
}

var scyllaOptions = func() map[string]scyllaOption {
	m := map[string]scyllaOption{}
	for _, n := range []string{
		// SCYLLA_ARGS, DEV_MODE, CPUSET and scyllasetup.py's arguments().
		"log-to-syslog", "log-to-stdout", "network-stack", "developer-mode", "cpuset",
		"memory", "reserve-memory", "smp", "listen-address", "rpc-address", "seed-provider-parameters",
		"broadcast-address", "broadcast-rpc-address", "api-address", "alternator-address", "alternator-port",
		"alternator-https-port", "alternator-write-isolation", "authenticator", "authorizer", "cluster-name",
		"endpoint-snitch", "replace-node-first-boot", "replace-address-first-boot", "blocked-reactor-notify-ms",
		// Other common ones users pass through the entrypoint.
		"reactor-backend", "options-file", "io-properties-file", "api-port", "native-transport-port",
		"prometheus-port", "prometheus-address", "storage-port", "tablets-mode-for-new-keyspaces",
		"abort-on-lsa-bad-alloc", "abort-on-seastar-bad-alloc", "default-log-level", "logger-log-level",
		// db/config.cc options the docker backend sets for a small disk
		// (provision/docker smallDiskArgs); the double's disk is its mount.
		"commitlog-segment-size-in-mb", "commitlog-total-space-in-mb", "schema-commitlog-segment-size-in-mb",
		"target-tablet-size-in-bytes", "critical-disk-utilization-level",
	} {
		m[n] = scyllaOption{name: n}
	}
	m["overprovisioned"] = scyllaOption{name: "overprovisioned", noArg: true}
	m["experimental-features"] = scyllaOption{name: "experimental-features", vector: true}
	// The emulator's model: what it is not ScyllaDB for (the catalog
	// instance it models, capacity scale factors, fault injection).
	for _, n := range EmulatorFlags {
		m[n] = scyllaOption{name: n}
	}
	return m
}()

// EmulatorFlags are the double's own scylla options (emulator model and
// fault injection); real ScyllaDB refuses them as unrecognised.
// --disk-gb and --storage-scale-mib-per-gb are accepted but do not size the
// disk (ScyllaConfig: DiskFromFilesystem).
var EmulatorFlags = []string{"instance-type", "vcpus", "memory-gb", "disk-gb", "storage-scale-mib-per-gb",
	"ops-per-vcpu", "coordinator-units", "stream-mib-per-vcpu", "fail-startup", "slow-factor", "initial-tablets", "time-scale"}

// OptionError is a boost::program_options error as Seastar's
// app_template::run reports it (src/core/app-template.cc):
// "error: <what>\n\nTry --help.\n" on stdout, exit status 2.
type OptionError struct{ What string }

func (e *OptionError) Error() string { return e.What }

// ParseScylla parses a scylla command line the way boost::program_options
// stores it: "--name value" or "--name=value"; an unknown option is
// "unrecognised option '--x'"; a scalar option given twice is
// "option '--x' cannot be specified more than once" (boost's
// multiple_occurrences, thrown by validators::check_first_occurrence); a
// std::vector option may repeat.
func ParseScylla(args []string) (map[string][]string, error) {
	vals := map[string][]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			return nil, &OptionError{What: "too many positional options have been specified on the command line"}
		}
		name, val, hasVal := strings.Cut(a[2:], "=")
		o, ok := scyllaOptions[name]
		if !ok {
			return nil, &OptionError{What: fmt.Sprintf("unrecognised option '--%s'", name)}
		}
		if o.noArg {
			if hasVal {
				return nil, &OptionError{What: fmt.Sprintf("option '--%s' does not take any arguments", name)}
			}
			val = "true"
		} else if !hasVal {
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "--") {
				return nil, &OptionError{What: fmt.Sprintf("the required argument for option '--%s' is missing", name)}
			}
			i++
			val = args[i]
		}
		if _, seen := vals[name]; seen && !o.vector {
			return nil, &OptionError{What: fmt.Sprintf("option '--%s' cannot be specified more than once", name)}
		}
		vals[name] = append(vals[name], val)
	}
	return vals, nil
}

// rackDCPath is where GossipingPropertyFileSnitch reads the node's dc and
// rack (conf/cassandra-rackdc.properties under SCYLLA_CONF=/etc/scylla).
const rackDCPath = "/etc/scylla/cassandra-rackdc.properties"

// ScyllaConfig maps a parsed scylla command line onto the emulator's
// configuration. version is what the node reports.
func ScyllaConfig(vals map[string][]string, version string, readFile func(string) ([]byte, error)) (emulator.Config, error) {
	c := emulator.DefaultConfig()
	c.Version = version
	c.DataDir = "/var/lib/scylla" // scylla.yaml's workdir in the image
	// The disk is whatever filesystem the container has at the data
	// directory, as a real node's is: the host's (the image's volume)
	// unless the run mounts one there.
	c.DiskFromFilesystem = true
	// db/config.cc defaults.
	c.ClusterName = "Test Cluster"
	c.DC, c.Rack = "datacenter1", "rack1" // SimpleSnitch
	c.BlockedReactorNotifyMS = 25         // seastar src/core/reactor.cc default
	// node_exporter is the image's own supervised program
	// (scylla-node-exporter.conf, NodeExporterMain), not part of scylla.
	c.NodeExporterPort = 0
	one := func(name string) (string, bool) {
		if v := vals[name]; len(v) > 0 {
			return v[len(v)-1], true
		}
		return "", false
	}
	var errs []error
	num := func(name string, set func(float64)) {
		if s, ok := one(name); ok {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("the argument ('%s') for option '--%s' is invalid", s, name))
				return
			}
			set(f)
		}
	}
	if s, ok := one("listen-address"); ok {
		c.ListenAddress = s
	}
	if s, ok := one("cluster-name"); ok {
		c.ClusterName = s
	}
	if s, ok := one("seed-provider-parameters"); ok {
		// "seeds=a,b" (scyllasetup.py).
		for _, kv := range strings.Split(s, ";") {
			if k, v, ok := strings.Cut(kv, "="); ok && strings.TrimSpace(k) == "seeds" {
				c.Seeds = nil
				for _, a := range strings.Split(v, ",") {
					if a = strings.TrimSpace(a); a != "" {
						c.Seeds = append(c.Seeds, a)
					}
				}
			}
		}
	}
	if snitch, _ := one("endpoint-snitch"); strings.HasSuffix(snitch, "GossipingPropertyFileSnitch") {
		b, err := readFile(rackDCPath)
		if err != nil {
			errs = append(errs, fmt.Errorf("GossipingPropertyFileSnitch: reading %s: %w", rackDCPath, err))
		} else {
			sc := bufio.NewScanner(strings.NewReader(string(b)))
			for sc.Scan() {
				k, v, ok := strings.Cut(sc.Text(), "=")
				if !ok {
					continue
				}
				switch strings.TrimSpace(k) {
				case "dc":
					c.DC = strings.TrimSpace(v)
				case "rack":
					c.Rack = strings.TrimSpace(v)
				}
			}
		}
	}
	num("blocked-reactor-notify-ms", func(f float64) { c.BlockedReactorNotifyMS = int(f) })
	num("critical-disk-utilization-level", func(f float64) { c.CriticalDiskUtilizationLevel = f })
	// Shards: the modelled instance's vCPUs when the emulator is told,
	// else --smp.
	num("smp", func(f float64) { c.VCPUs = int(f) })
	num("vcpus", func(f float64) { c.VCPUs = int(f) })
	if s, ok := one("instance-type"); ok {
		c.InstanceType = s
	}
	if s, ok := one("authenticator"); ok {
		c.Authenticator = s
	}
	num("memory-gb", func(f float64) { c.MemoryGB = f })
	num("disk-gb", func(f float64) { c.DiskGB = f })
	num("storage-scale-mib-per-gb", func(f float64) { c.StorageScaleMiBPerGB = f })
	num("ops-per-vcpu", func(f float64) { c.OpsPerVCPU = f })
	num("coordinator-units", func(f float64) { c.CoordinatorUnits = f })
	num("stream-mib-per-vcpu", func(f float64) { c.StreamMiBPerVCPU = f })
	num("slow-factor", func(f float64) { c.SlowFactor = f })
	num("time-scale", func(f float64) { c.TimeScale = f })
	num("initial-tablets", func(f float64) { c.InitialTablets = int(f) })
	if s, ok := one("fail-startup"); ok {
		c.FailStartup = s
	}
	return c, errors.Join(errs...)
}

// ReleaseEnv names the environment variable the image sets (its
// SCYLLA_RELEASE build argument) to the release part of its version, as
// SCYLLA-VERSION-GEN makes it ("0.<date>.<commit>" in a real build).
const ReleaseEnv = "ELASTICITY_IMAGE_SCYLLA_RELEASE"

// ScyllaVersion is what `scylla --version` prints: release.cc
// scylla_version(), "<version>-<release>", which is also the image's
// org.opencontainers.image.version label (build_docker.sh).
func ScyllaVersion() string {
	version := os.Getenv(VersionEnv)
	if version == "" {
		version = emulator.DefaultVersion
	}
	if r := os.Getenv(ReleaseEnv); r != "" {
		return version + "-" + r
	}
	return version
}

// ScyllaMain is the double's /usr/bin/scylla: it prints the starting
// message (main.cc's print_starting_message, before app.run), parses the
// command line as Seastar does and runs the emulated node until ctx ends.
func ScyllaMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	version := os.Getenv(VersionEnv)
	if version == "" {
		version = emulator.DefaultVersion
	}
	// main.cc: "--version" is parsed before anything else
	// (allow_unregistered) and prints scylla_version(), "VERSION-RELEASE"
	// (release.cc).
	for _, a := range args {
		if a == "--version" {
			fmt.Fprintln(stdout, ScyllaVersion())
			return 0
		}
	}
	emulator.PrintStartingMessage(stdout, version, strings.Join(append([]string{"/usr/bin/scylla"}, args...), " "))
	vals, err := ParseScylla(args)
	if err != nil {
		// app_template::run: fmt::print("error: {}\n\nTry --help.\n", e.what()); return 2.
		fmt.Fprintf(stdout, "error: %s\n\nTry --help.\n", err)
		return 2
	}
	cfg, err := ScyllaConfig(vals, version, os.ReadFile)
	if err != nil {
		fmt.Fprintf(stdout, "error: %s\n\nTry --help.\n", err)
		return 2
	}
	cfg.Stderr = stdout // --log-to-stdout 1
	if len(vals["disk-gb"]) > 0 || len(vals["storage-scale-mib-per-gb"]) > 0 {
		// Accepted for compatibility with older command lines, but the
		// double's disk is the filesystem, never a size it is told.
		fmt.Fprint(stdout, scyllalog.Format(time.Now(), scyllalog.Warn, 0, "main", "init",
			"--disk-gb and --storage-scale-mib-per-gb do not size the image double's disk: it is the filesystem of "+DataMountpoint))
	}
	if err := emulator.Run(ctx, cfg); err != nil {
		if errors.Is(err, emulator.ErrInvalidConfig) {
			return 2
		}
		return 1
	}
	return 0
}
