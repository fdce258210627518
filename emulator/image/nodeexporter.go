package image

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/elasticity-dev/elasticity/emulator/cpustat"
	"github.com/elasticity-dev/elasticity/emulator/diskmodel"
)

// NodeExporterPort is node_exporter's default --web.listen-address (:9100).
const NodeExporterPort = 9100

// DataMountpoint is the data volume of the image (bconfig --volume /var/lib/scylla).
const DataMountpoint = "/var/lib/scylla"

// NodeExporterMain is the double's node_exporter (the image's
// scylla-node-exporter program, dist/common/supervisor/scylla-node-exporter.sh
// with SCYLLA_NODE_EXPORTER_ARGS): the filesystem collector's
// node_filesystem_{size,avail,free}_bytes for the data volume, as if it
// were a filesystem of the emulated disk's size holding the data
// directory's real bytes, and the cpu collector's node_cpu_seconds_total.
// Collector flags are accepted and ignored. --emulated-size-bytes is the
// double's own.
func NodeExporterMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	listen := fmt.Sprintf(":%d", NodeExporterPort)
	var size int64
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(args[i], "=")
		switch name {
		case "--web.listen-address", "--emulated-size-bytes":
			if !hasVal {
				if i+1 >= len(args) {
					fmt.Fprintf(stderr, "node_exporter: error: expected argument for flag '%s'\n", name)
					return 1
				}
				i++
				val = args[i]
			}
			if name == "--web.listen-address" {
				listen = val
			} else {
				n, err := strconv.ParseInt(val, 10, 64)
				if err != nil {
					fmt.Fprintf(stderr, "node_exporter: error: invalid --emulated-size-bytes %q\n", val)
					return 1
				}
				size = n
			}
		default:
			if !strings.HasPrefix(name, "--collector.") && !strings.HasPrefix(name, "--no-collector.") {
				fmt.Fprintf(stderr, "node_exporter: error: unknown long flag '%s', try --help\n", name)
				return 1
			}
		}
	}
	logf := func(format string, a ...any) {
		// node_exporter logs in logfmt (go-kit/slog).
		fmt.Fprintf(stderr, "ts=%s caller=node_exporter.go:193 level=info %s\n", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), fmt.Sprintf(format, a...))
	}
	logf(`msg="Starting node_exporter" version="(version=1.8.2, emulated)"`)
	disk := diskmodel.New(DataMountpoint, size, nil)
	reg := prometheus.NewRegistry()
	labels := prometheus.Labels{"device": "/dev/md0", "fstype": "xfs", "mountpoint": DataMountpoint}
	gauge := func(name, help string, f func() float64) {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels}, f))
	}
	gauge("node_filesystem_size_bytes", "Filesystem size in bytes.", func() float64 { return float64(disk.Capacity()) })
	gauge("node_filesystem_avail_bytes", "Filesystem space available to non-root users in bytes.", func() float64 { return float64(disk.Avail()) })
	gauge("node_filesystem_free_bytes", "Filesystem free space in bytes.", func() float64 { return float64(disk.Avail()) })
	gauge("node_filesystem_readonly", "Filesystem read-only status.", func() float64 { return 0 })
	if c, err := cpustat.Collector(); err == nil {
		reg.MustRegister(c) // the cpu collector's node_cpu_seconds_total
	} else {
		logf(`msg="collector failed" name=cpu err=%q`, err.Error())
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintf(stderr, "ts=%s caller=node_exporter.go:247 level=error err=%q\n", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), err.Error())
		return 1
	}
	logf(`msg="Listening on" address=%s`, ln.Addr())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	_ = srv.Serve(ln)
	return 0
}
