package image

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/elasticity-dev/elasticity/emulator/cpustat"
)

// NodeExporterPort is node_exporter's default --web.listen-address (:9100).
const NodeExporterPort = 9100

// DataMountpoint is the data volume of the image (bconfig --volume /var/lib/scylla).
const DataMountpoint = "/var/lib/scylla"

// NodeExporterMain is the double's node_exporter (the image's
// scylla-node-exporter program, dist/common/supervisor/scylla-node-exporter.sh
// with SCYLLA_NODE_EXPORTER_ARGS, up to 2026.2): the filesystem collector's
// node_filesystem_{size,avail,free}_bytes of the container's mounts, from
// statfs as node_exporter reads them (so /var/lib/scylla is the host's
// filesystem unless a run mounts one there), and the cpu collector's
// node_cpu_seconds_total. Collector flags are accepted and ignored.
func NodeExporterMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	listen := fmt.Sprintf(":%d", NodeExporterPort)
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(args[i], "=")
		switch name {
		case "--web.listen-address":
			if !hasVal {
				if i+1 >= len(args) {
					fmt.Fprintf(stderr, "node_exporter: error: expected argument for flag '%s'\n", name)
					return 1
				}
				i++
				val = args[i]
			}
			listen = val
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
	reg := prometheus.NewRegistry()
	reg.MustRegister(filesystemCollector{})
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

// node_exporter's collector/filesystem_linux.go defaults: mount points and
// filesystem types it leaves out.
var (
	fsMountPointsExcluded = regexp.MustCompile(`^/(dev|proc|run/credentials/.+|sys|var/lib/docker/.+|var/lib/containers/storage/.+)($|/)`)
	fsTypesExcluded       = regexp.MustCompile(`^(autofs|binfmt_misc|bpf|cgroup2?|configfs|debugfs|devpts|devtmpfs|fusectl|hugetlbfs|iso9660|mqueue|nsfs|overlay|proc|procfs|pstore|rpc_pipefs|securityfs|selinuxfs|squashfs|erofs|sysfs|tracefs)$`)
)

var fsLabels = []string{"device", "fstype", "mountpoint"}

var (
	fsSize  = prometheus.NewDesc("node_filesystem_size_bytes", "Filesystem size in bytes.", fsLabels, nil)
	fsFree  = prometheus.NewDesc("node_filesystem_free_bytes", "Filesystem free space in bytes.", fsLabels, nil)
	fsAvail = prometheus.NewDesc("node_filesystem_avail_bytes", "Filesystem space available to non-root users in bytes.", fsLabels, nil)
	fsRO    = prometheus.NewDesc("node_filesystem_readonly", "Filesystem read-only status.", fsLabels, nil)
)

// filesystemCollector is node_exporter's filesystem collector
// (collector/filesystem_linux.go): every mount of /proc/1/mountinfo (else
// /proc/self/mountinfo) not excluded by default, size/free/avail as
// Blocks/Bfree/Bavail × Bsize of statfs. A mount point listed twice (an
// over-mount) is reported once, for the mount on top.
type filesystemCollector struct{}

func (filesystemCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{fsSize, fsFree, fsAvail, fsRO} {
		ch <- d
	}
}

func (filesystemCollector) Collect(ch chan<- prometheus.Metric) {
	mounts, err := readMountinfo("/proc/1/mountinfo")
	if os.IsNotExist(err) {
		mounts, _ = readMountinfo("/proc/self/mountinfo")
	}
	top := map[string]mountEntry{}
	var order []string
	for _, m := range mounts {
		if fsMountPointsExcluded.MatchString(m.target) || fsTypesExcluded.MatchString(m.fstype) {
			continue
		}
		if _, seen := top[m.target]; !seen {
			order = append(order, m.target)
		}
		top[m.target] = m
	}
	for _, mp := range order {
		m := top[mp]
		var st syscall.Statfs_t
		if syscall.Statfs(mp, &st) != nil {
			continue
		}
		bs := float64(st.Bsize)
		lv := []string{m.source, m.fstype, mp}
		ro := 0.0
		if st.Flags&0x1 != 0 { // ST_RDONLY
			ro = 1
		}
		ch <- prometheus.MustNewConstMetric(fsSize, prometheus.GaugeValue, float64(st.Blocks)*bs, lv...)
		ch <- prometheus.MustNewConstMetric(fsFree, prometheus.GaugeValue, float64(st.Bfree)*bs, lv...)
		ch <- prometheus.MustNewConstMetric(fsAvail, prometheus.GaugeValue, float64(st.Bavail)*bs, lv...)
		ch <- prometheus.MustNewConstMetric(fsRO, prometheus.GaugeValue, ro, lv...)
	}
}
