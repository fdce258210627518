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
	"strconv"
	"strings"
	"syscall"
)

// nodeExporterArgs is SCYLLA_NODE_EXPORTER_ARGS
// (dist/common/sysconfig/scylla-node-exporter) of branch-2025.1 to 2025.3;
// branch-2025.4 adds the ethtool collector.
func nodeExporterArgs(v Version) []string {
	args := []string{"--collector.interrupts"}
	if v.AtLeast(2025, 4) {
		args = append(args, "--collector.ethtool.metrics-include='(bw_in_allowance_exceeded|bw_out_allowance_exceeded|conntrack_allowance_exceeded|conntrack_allowance_available|linklocal_allowance_exceeded)'", "--collector.ethtool")
	}
	return append(args, "--no-collector.hwmon", "--no-collector.bcache", "--no-collector.btrfs", "--no-collector.fibrechannel",
		"--no-collector.infiniband", "--no-collector.ipvs", "--no-collector.nfs", "--no-collector.nfsd", "--no-collector.powersupplyclass",
		"--no-collector.rapl", "--no-collector.tapestats", "--no-collector.thermal_zone", "--no-collector.udp_queues", "--no-collector.zfs")
}

// Main runs one of the image's programs, args[0] naming it: "entrypoint"
// (the image's ENTRYPOINT, PID 1), "scylla", "node-exporter" (started by the
// supervisor) or "supervisorctl" (for docker exec). It returns the exit status.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if len(args) == 0 {
		fmt.Fprintln(stderr, "image: want entrypoint, scylla, node-exporter or supervisorctl")
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
	}
	fmt.Fprintf(stderr, "image: unknown program %q\n", args[0])
	return 2
}

// EntrypointMain is dist/docker/docker-entrypoint.py: parse the flags,
// prepare scylla's command line, then run supervisord until stopped.
func EntrypointMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	vs := os.Getenv(VersionEnv)
	v, err := ParseVersion(vs)
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
	s := &Supervisor{Log: stdout, LogTwice: v.AtLeast(2025, 2)}
	// dist/docker/etc/supervisord.conf.d/scylla-server.conf: stopwaitsecs=900,
	// other settings supervisord's defaults.
	s.Add(Program{Name: "scylla", Command: append([]string{self, "image", "scylla"}, scyllaCmd...),
		StopWaitSecs: 900, Stdout: stdout, Stderr: stderr})
	// scylla-node-exporter.conf: defaults.
	neArgs := append(nodeExporterArgs(v), "--emulated-size-bytes", strconv.FormatInt(emulatedDiskBytes(scyllaCmd), 10))
	s.Add(Program{Name: "scylla-node-exporter", Command: append([]string{self, "image", "node-exporter"}, neArgs...),
		Stdout: stdout, Stderr: stderr})
	if ln, err := net.Listen("tcp", ControlAddress); err == nil {
		go s.Serve(ctx, ln)
	}
	s.Run(ctx)
	return 0
}

// emulatedDiskBytes is the emulated disk of a scylla command line (the
// node's own model: --disk-gb × --storage-scale-mib-per-gb MiB).
func emulatedDiskBytes(scyllaCmd []string) int64 {
	vals, err := ParseScylla(scyllaCmd)
	if err != nil {
		return 0
	}
	c, _ := ScyllaConfig(vals, "", func(string) ([]byte, error) { return nil, os.ErrNotExist })
	return int64(c.DiskGB * c.StorageScaleMiBPerGB * (1 << 20))
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
