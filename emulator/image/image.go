package image

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/elasticity-dev/elasticity/internal/scyllaversion"
)

// nodeExporterArgs is SCYLLA_NODE_EXPORTER_ARGS
// (dist/common/sysconfig/scylla-node-exporter) at the version's tag: the
// ethtool collector from scylla-2025.4.1 (commit cbf6250021, absent
// @scylla-2025.4.0), the systemd collector from scylla-2026.2.0-rc0.
func nodeExporterArgs(v scyllaversion.Version) []string {
	args := []string{"--collector.interrupts"}
	if v.AtLeast(2025, 4, 1) {
		args = append(args, "--collector.ethtool.metrics-include='(bw_in_allowance_exceeded|bw_out_allowance_exceeded|conntrack_allowance_exceeded|conntrack_allowance_available|linklocal_allowance_exceeded)'", "--collector.ethtool")
	}
	if v.AtLeast(2026, 2, 0) {
		args = append(args, "--collector.systemd", `--collector.systemd.unit-include='^(scylla-server|systemd-coredump.*)\.service$'`)
	}
	return append(args, "--no-collector.hwmon", "--no-collector.bcache", "--no-collector.btrfs", "--no-collector.fibrechannel",
		"--no-collector.infiniband", "--no-collector.ipvs", "--no-collector.nfs", "--no-collector.nfsd", "--no-collector.powersupplyclass",
		"--no-collector.rapl", "--no-collector.tapestats", "--no-collector.thermal_zone", "--no-collector.udp_queues", "--no-collector.zfs")
}

// Main runs one of the image's programs, args[0] naming it: "entrypoint"
// (the image's ENTRYPOINT, PID 1), "scylla", "node-exporter" (started by the
// supervisor), "supervisorctl" or "df" (for docker exec). It returns the
// exit status.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if len(args) == 0 {
		fmt.Fprintln(stderr, "image: want entrypoint, scylla, node-exporter, supervisorctl or df")
		return 2
	}
	switch args[0] {
	case "entrypoint":
		return EntrypointMain(ctx, args[1:], stdout, stderr)
	case "scylla":
		return ScyllaMain(ctx, args[1:], stdout, stderr)
	case "node-exporter":
		return NodeExporterMain(ctx, args[1:], stdout, stderr)
	case "supervisorctl":
		return SupervisorctlMain(ctx, args[1:], stdout, stderr)
	case "df":
		return DfMain(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "image: unknown program %q\n", args[0])
	return 2
}

// PathPrograms are the image's programs installed on its PATH as symbolic
// links to the one binary (Dockerfile.emulator: /usr/bin/NAME ->
// /elasticity), as the real image has them in /usr/bin: `docker exec C df
// ...` or `docker exec C scylla --version` runs the binary with argv[0]
// NAME.
var PathPrograms = []string{"scylla", "supervisorctl", "df"}

// ProgramFor is the program a binary started as argv0 runs: the base name
// when it is one of PathPrograms.
func ProgramFor(argv0 string) (string, bool) {
	base := filepath.Base(argv0)
	for _, p := range PathPrograms {
		if base == p {
			return p, true
		}
	}
	return "", false
}

// EntrypointMain is dist/docker/docker-entrypoint.py: parse the flags,
// prepare scylla's command line, then run supervisord until stopped.
func EntrypointMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	vs := os.Getenv(VersionEnv)
	v, err := scyllaversion.Parse(vs)
	if err != nil {
		fmt.Fprintf(stderr, "docker-entrypoint: %s: %v (the image sets it from its SCYLLA_VERSION build argument)\n", VersionEnv, err)
		return 2
	}
	p, err := ParseEntrypoint(v, args)
	if err == ErrHelp {
		fmt.Fprintln(stdout, usage(entrypointOptions(v)))
		return 0
	}
	if err != nil {
		// argparse: usage and error on stderr, SystemExit(2) (not caught by
		// docker-entrypoint.py's `except Exception`): the container exits.
		fmt.Fprintln(stderr, err)
		return 2
	}
	fmt.Fprintf(stdout, "running: (['/opt/scylladb/scripts/scylla_dev_mode_setup', '--developer-mode', '%s'],)\n", p.Values["developerMode"])
	if v.CoredumpSetup() {
		// scyllasetup.py coredumpSetup (2026.3): <workdir>/coredump; the
		// double has no core_pattern to change.
		if err := os.MkdirAll(filepath.Join(DataMountpoint, "coredump"), 0o755); err != nil {
			fmt.Fprintf(stdout, "WARNING:root:Could not create coredump directory %s: %v\n", filepath.Join(DataMountpoint, "coredump"), err)
		}
	}
	setup, err := BuildSetup(v, p, hostIP())
	if err == nil && setup.RackDC != "" {
		err = os.WriteFile(rackDCPath, []byte(setup.RackDC), 0o644)
	}
	if err != nil {
		// docker-entrypoint.py: `except Exception: logging.exception('failed!')`,
		// then the script ends with status 0.
		fmt.Fprintf(stdout, "failed!\nTraceback (most recent call last):\nRuntimeError: %v\n", err)
		return 0
	}
	_ = os.WriteFile("/etc/scylla.d/docker.conf", []byte(fmt.Sprintf("SCYLLA_DOCKER_ARGS=%q\n", setup.DockerArgs)), 0o644)
	self, err := os.Executable()
	if err != nil {
		self = "/elasticity"
	}
	scyllaCmd := setup.ScyllaCommandLine()
	s := &Supervisor{Log: stdout, LogTwice: v.AtLeast(2025, 2, 0)}
	// dist/docker/etc/supervisord.conf.d/scylla-server.conf: stopwaitsecs=900,
	// other settings supervisord's defaults.
	s.Add(Program{Name: "scylla", Command: append([]string{self, "image", "scylla"}, scyllaCmd...),
		StopWaitSecs: 900, Stdout: stdout, Stderr: stderr})
	if v.NodeExporter() {
		// scylla-node-exporter.conf: defaults.
		s.Add(Program{Name: "scylla-node-exporter", Command: append([]string{self, "image", "node-exporter"}, nodeExporterArgs(v)...),
			Stdout: stdout, Stderr: stderr})
	}
	if ln, err := net.Listen("tcp", ControlAddress); err == nil {
		go s.Serve(ctx, ln)
	}
	s.Run(ctx)
	return 0
}

// hostIP is the container's address as `hostname -i` gives it.
func hostIP() string {
	if h, err := os.Hostname(); err == nil {
		if addrs, err := net.LookupHost(h); err == nil {
			for _, a := range addrs {
				if ip := net.ParseIP(a); ip != nil && ip.To4() != nil && !ip.IsLoopback() {
					return a
				}
			}
		}
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
				return n.IP.String()
			}
		}
	}
	return "127.0.0.1"
}

// SupervisorctlMain: `supervisorctl status` and `supervisorctl signal SIG
// name` against the supervisor's control address.
func SupervisorctlMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	base := "http://" + ControlAddress
	var resp *http.Response
	var err error
	switch {
	case len(args) == 0 || args[0] == "status":
		resp, err = http.Get(base + "/status")
	case args[0] == "signal" && len(args) == 3:
		resp, err = http.PostForm(base+"/signal", url.Values{"signal": {args[1]}, "name": {args[2]}})
	default:
		fmt.Fprintf(stderr, "%s: want status | signal SIG NAME\n", filepath.Base(os.Args[0]))
		return 2
	}
	if err != nil {
		fmt.Fprintf(stdout, "unix:///var/run/supervisor.sock no such file\n")
		return 7
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	stdout.Write(b)
	if strings.Contains(string(b), "ERROR") {
		return 1
	}
	return 0
}
