// Package emulator runs one emulated ScyllaDB-like node: the cluster engine
// (emulator/node) behind the CQL front end (emulator/cql), the REST API and
// Prometheus metrics, all bound to the node's own loopback address.
//
// Capacity defaults are chosen so that the model, not this machine, is the
// bottleneck and so that a 3 × i4i.large cluster fills to 90% at RF=3 in
// well under a minute:
//
//   - disk: disk-gb × 0.2 MiB (i4i.large, 468 GB → 93.6 MiB of real bytes);
//   - requests: 2,000 one-unit replica operations per second per vCPU;
//   - streaming: 4 MiB/s per vCPU of the slower end of a migration.
package emulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/capacity"
	"github.com/elasticity-dev/elasticity/emulator/cql"
	"github.com/elasticity-dev/elasticity/emulator/node"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
	"github.com/spf13/pflag"
)

// Defaults of the capacity model (see the package comment).
const (
	DefaultStorageScaleMiBPerGB = 0.2
	DefaultOpsPerVCPU           = 2000
	DefaultStreamMiBPerVCPU     = 4
	DefaultVersion              = "2025.1.0-emulated"
)

// Config is one node's configuration; the flags of `elasticity node`.
type Config struct {
	ListenAddress string
	// APIAddress is where the REST API listens (scylla.yaml api_address,
	// conf/scylla.yaml: 127.0.0.1 in the packaged file); "" = ListenAddress.
	APIAddress   string
	DataDir      string
	ClusterName  string
	DC, Rack     string
	InstanceType string
	VCPUs        int
	// Authenticator is scylla.yaml's authenticator: AllowAllAuthenticator
	// (default) or PasswordAuthenticator (which brings CassandraAuthorizer's
	// grants with it; see cql.Options.Authenticator).
	Authenticator string
	MemoryGB      float64
	DiskGB        float64
	Seeds         []string
	LogFile       string
	CQLPort       int
	// ShardAwareCQLPort is native_shard_aware_transport_port (19042 in
	// ScyllaDB's db/config.cc): connections land on the shard their
	// source port names. 0 disables it.
	ShardAwareCQLPort int
	RESTPort          int
	MetricsPort       int
	// NodeExporterPort is where the node_exporter beside the node serves
	// (ScyllaDB's images run it on 9100); 0 runs none.
	NodeExporterPort     int
	InternodePort        int
	StorageScaleMiBPerGB float64
	// DiskFromFilesystem: the node's disk is the filesystem of DataDir
	// (statfs), not DiskGB × StorageScaleMiBPerGB (the image double's
	// nodes, emulator/image).
	DiskFromFilesystem bool
	// CriticalDiskUtilizationLevel is ScyllaDB's
	// critical_disk_utilization_level (db/config.cc, default 0.98): above
	// it user writes are rejected.
	CriticalDiskUtilizationLevel float64
	OpsPerVCPU                   float64
	// CoordinatorUnits: what coordinating a request costs its shard
	// (capacity.CoordinatorUnits).
	CoordinatorUnits       float64
	StreamMiBPerVCPU       float64
	BlockedReactorNotifyMS int
	// BlockedReactorReportsPerMinute is Seastar's rate limit of stall
	// reports (src/core/reactor.cc, default 5).
	BlockedReactorReportsPerMinute int
	FailStartup                    string
	// InjectError is AFTER:MESSAGE: MESSAGE ("logger - text") is logged as
	// an ERROR line AFTER the node finished starting (fault injection).
	InjectError string
	SlowFactor  float64
	// TimeScale multiplies the ScyllaDB timers the emulator mirrors (the
	// tablet load stats refresh interval, 60 s), as local.time_scale
	// multiplies a scenario's durations.
	TimeScale      float64
	Version        string
	InitialTablets int
	// TTLPeriodSeconds is scylla's --alternator-ttl-period-in-seconds: the
	// period of the per-row TTL expiration scans (db/config.cc, 86400).
	TTLPeriodSeconds float64
	// EnableUDF and ExperimentalFeatures are scylla's
	// --enable-user-defined-functions and --experimental-features
	// (db/config.cc); together with "udf" they enable CREATE FUNCTION.
	EnableUDF            bool
	ExperimentalFeatures []string
	CPUProfile           string
	// Pprof serves net/http/pprof under /debug/pprof/ on the REST port
	// (not a ScyllaDB flag: the emulator's own profiling, issue 17).
	Pprof bool
	// Stderr receives the log when LogFile is empty (default os.Stderr).
	Stderr io.Writer
	// CommandLine, when set, is printed as the node starts, as ScyllaDB
	// prints its own (PrintStartingMessage).
	CommandLine string
	// Peers is shared by the nodes this process runs (Main with AndNode):
	// their internode connections to each other are in memory.
	Peers *node.Peers

	// control is set by a Host (host.go): the node's life, and what a
	// kill closes.
	control *nodeControl
}

// PrintStartingMessage prints what ScyllaDB prints as it starts (scylladb
// main.cc print_starting_message: raw lines on stdout, no level, no
// timestamp): the version, "command used" with the whole command line
// (which tells a reader, and the framework's log watcher, the stall
// threshold the node really runs with) and the pid.
func PrintStartingMessage(w io.Writer, version, commandLine string) {
	fmt.Fprintf(w, "Scylla version %s with build-id 0 starting ...\n", version)
	fmt.Fprintf(w, "command used: \"%s\"\n", commandLine)
	fmt.Fprintf(w, "pid: %d\n", os.Getpid())
}

// DefaultConfig returns the flag defaults.
func DefaultConfig() Config {
	return Config{ListenAddress: "127.0.0.2", ClusterName: "elasticity", DC: "dc1", Rack: "rack1", InstanceType: "i4i.large",
		VCPUs: 2, MemoryGB: 16, DiskGB: 468, CQLPort: 9042, ShardAwareCQLPort: 19042, RESTPort: 10000, MetricsPort: 9180, NodeExporterPort: 9100, InternodePort: 7000,
		StorageScaleMiBPerGB: DefaultStorageScaleMiBPerGB, OpsPerVCPU: DefaultOpsPerVCPU, StreamMiBPerVCPU: DefaultStreamMiBPerVCPU,
		CoordinatorUnits: capacity.CoordinatorUnits, BlockedReactorNotifyMS: 25, BlockedReactorReportsPerMinute: 5, SlowFactor: 1, TimeScale: 1, Version: DefaultVersion, InitialTablets: 16,
		TTLPeriodSeconds: cql.DefaultTTLPeriod.Seconds()}
}

// Flags binds the node flags to c (defaults from c's current values).
func Flags(c *Config) *pflag.FlagSet {
	fs := pflag.NewFlagSet("node", pflag.ContinueOnError)
	fs.StringVar(&c.ListenAddress, "listen-address", c.ListenAddress, "address every listener binds to (a loopback address such as 127.0.0.2)")
	fs.StringVar(&c.APIAddress, "api-address", c.APIAddress, "address the REST API listens on (scylla.yaml api_address); default: --listen-address")
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "data directory (Pebble files: real bytes on disk)")
	fs.StringVar(&c.ClusterName, "cluster-name", c.ClusterName, "cluster name")
	fs.StringVar(&c.DC, "dc", c.DC, "datacenter")
	fs.StringVar(&c.Rack, "rack", c.Rack, "rack")
	fs.StringVar(&c.InstanceType, "instance-type", c.InstanceType, "instance type name (informational; sizes come from --vcpus/--memory-gb/--disk-gb)")
	fs.IntVar(&c.VCPUs, "vcpus", c.VCPUs, "vCPUs = shards of the capacity model")
	fs.StringVar(&c.Authenticator, "authenticator", c.Authenticator, "AllowAllAuthenticator (default) or PasswordAuthenticator (clients log in; superuser cassandra/cassandra)")
	fs.Float64Var(&c.MemoryGB, "memory-gb", c.MemoryGB, "memory in GB of the instance type: scaled like the disk, it sizes the row cache")
	fs.Float64Var(&c.DiskGB, "disk-gb", c.DiskGB, "disk size in GB of the instance type")
	fs.StringSliceVar(&c.Seeds, "seeds", c.Seeds, "seed addresses (the first seed creates the cluster)")
	fs.StringVar(&c.LogFile, "log-file", c.LogFile, "log file (default stderr)")
	fs.IntVar(&c.CQLPort, "cql-port", c.CQLPort, "CQL native protocol port")
	fs.IntVar(&c.ShardAwareCQLPort, "shard-aware-cql-port", c.ShardAwareCQLPort, "CQL port whose connections land on the shard their source port names (0: none)")
	fs.IntVar(&c.RESTPort, "rest-port", c.RESTPort, "REST API port")
	fs.IntVar(&c.MetricsPort, "metrics-port", c.MetricsPort, "Prometheus metrics port")
	fs.IntVar(&c.NodeExporterPort, "node-exporter-port", c.NodeExporterPort, "port of the emulated node_exporter (node_filesystem_* of the data directory; 0 = none)")
	fs.IntVar(&c.InternodePort, "internode-port", c.InternodePort, "internode RPC port")
	fs.Float64Var(&c.StorageScaleMiBPerGB, "storage-scale-mib-per-gb", c.StorageScaleMiBPerGB, "emulated disk capacity in MiB per GB of --disk-gb (0.2: i4i.large 468 GB → 93.6 MiB)")
	fs.Float64Var(&c.OpsPerVCPU, "ops-per-vcpu", c.OpsPerVCPU, "modelled replica operations per second per vCPU")
	fs.Float64Var(&c.CoordinatorUnits, "coordinator-units", c.CoordinatorUnits, "what coordinating a request costs its coordinator's shard, in replica operations")
	fs.Float64Var(&c.StreamMiBPerVCPU, "stream-mib-per-vcpu", c.StreamMiBPerVCPU, "modelled streaming bandwidth in MiB/s per vCPU (a migration runs at the slower end's)")
	fs.Float64Var(&c.CriticalDiskUtilizationLevel, "critical-disk-utilization-level", c.CriticalDiskUtilizationLevel, "disk utilization above which user writes are rejected (ScyllaDB's critical_disk_utilization_level; 0 = 0.98)")
	fs.IntVar(&c.BlockedReactorNotifyMS, "blocked-reactor-notify-ms", c.BlockedReactorNotifyMS, "stall threshold in milliseconds")
	fs.IntVar(&c.BlockedReactorReportsPerMinute, "blocked-reactor-reports-per-minute", c.BlockedReactorReportsPerMinute, "maximum number of backtraces reported by the stall detector per minute")
	fs.StringVar(&c.FailStartup, "fail-startup", c.FailStartup, "fail startup with this message (fault injection)")
	fs.StringVar(&c.InjectError, "inject-error", c.InjectError, "AFTER:MESSAGE: log MESSAGE (\"logger - text\") as an ERROR line AFTER startup completed (fault injection)")
	fs.Float64Var(&c.SlowFactor, "slow-factor", c.SlowFactor, "multiplies every service time (a slow node)")
	fs.Float64Var(&c.TimeScale, "time-scale", c.TimeScale, "multiplies ScyllaDB's own timers (tablet load stats refresh every 60 s), as local.time_scale multiplies scenario durations")
	fs.StringVar(&c.Version, "version", c.Version, "version reported by the node")
	fs.IntVar(&c.InitialTablets, "initial-tablets", c.InitialTablets, "tablets per table when the keyspace does not say")
	fs.Float64Var(&c.TTLPeriodSeconds, "alternator-ttl-period-in-seconds", c.TTLPeriodSeconds, "period of the per-row TTL expiration scans, in seconds (db/config.cc)")
	fs.BoolVar(&c.EnableUDF, "enable-user-defined-functions", c.EnableUDF, "enable user-defined functions (db/config.cc; needs --experimental-features=udf)")
	fs.StringSliceVar(&c.ExperimentalFeatures, "experimental-features", c.ExperimentalFeatures, "experimental features to enable, repeatable or a comma list (db/config.cc experimental_features_t: udf, ...)")
	fs.StringVar(&c.CPUProfile, "cpu-profile", c.CPUProfile, "write a Go CPU profile of the node to this file")
	fs.MarkHidden("cpu-profile")
	fs.BoolVar(&c.Pprof, "pprof", c.Pprof, "serve Go profiles of the node process under /debug/pprof/ on the REST port")
	return fs
}

// NodeProcess sets up a process that runs one node (`elasticity node`, and
// the test harnesses through Main): it collects garbage at 4× its live heap
// instead of 2×. With Go's default, GC marking and the stack shrinking it
// does (the request workers' stacks then grow again through Pebble) took
// about a sixth of a node's CPU under load (issue 17). GOGC still wins.
func NodeProcess() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(300)
	}
}

// AndNode separates the flags of nodes that Main runs in one process.
const AndNode = "--and-node"

// Main parses node flags from args and runs the node until ctx ends; it
// returns the process exit code (0 clean shutdown, 1 startup failure, 2 bad flags).
//
// With several nodes' flags separated by AndNode, the process runs them all,
// each with its own listeners, data, log and lifecycle, and their internode
// connections to each other are in memory (node.Peers): a message between
// two of them costs no system call and no wake-up of another process, which
// at a few thousand operations per second was most of a node's CPU
// (issue 45). The first node to fail stops the others, and the process
// exits with its code.
//
// With ControlSocketFlag PATH (and nothing else), the process is a host
// (host.go): it runs the nodes its launcher starts through the control
// endpoint on PATH, each with a life of its own, until ctx ends.
func Main(ctx context.Context, args []string, stderr io.Writer) int {
	NodeProcess()
	if len(args) > 0 && (args[0] == ControlSocketFlag || strings.HasPrefix(args[0], ControlSocketFlag+"=")) {
		socket, ok := strings.CutPrefix(args[0], ControlSocketFlag+"=")
		rest := args[1:]
		if !ok {
			if len(rest) == 0 {
				fmt.Fprintf(stderr, "elasticity node: %s needs a path\n", ControlSocketFlag)
				return 2
			}
			socket, rest = rest[0], rest[1:]
		}
		if len(rest) > 0 {
			fmt.Fprintf(stderr, "elasticity node: %s takes no node flags (nodes are started through the socket)\n", ControlSocketFlag)
			return 2
		}
		return RunHost(ctx, socket, stderr)
	}
	groups := [][]string{nil}
	for _, a := range args {
		if a == AndNode {
			groups = append(groups, nil)
			continue
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], a)
	}
	if len(groups) == 1 {
		return mainNode(ctx, args, stderr, nil)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	peers := node.NewPeers()
	codes := make(chan int, len(groups))
	for _, g := range groups {
		go func() { codes <- mainNode(ctx, g, stderr, peers) }()
	}
	code := 0
	for range groups {
		if c := <-codes; c != 0 && code == 0 {
			code = c
			cancel()
		}
	}
	return code
}

// mainNode runs one node of Main (peers: the process's other nodes, if any).
func mainNode(ctx context.Context, args []string, stderr io.Writer, peers *node.Peers) int {
	c := DefaultConfig()
	c.Stderr = stderr
	c.CommandLine = strings.Join(append([]string{os.Args[0], "node"}, args...), " ")
	c.Peers = peers
	fs := Flags(&c)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := Run(ctx, c); err != nil {
		fmt.Fprintf(stderr, "elasticity node: %v\n", err)
		if errors.Is(err, ErrInvalidConfig) {
			return 2
		}
		return 1
	}
	return 0
}

// ErrInvalidConfig marks invalid flags (exit code 2).
var ErrInvalidConfig = errors.New("invalid node configuration")

// ErrStartupFailed marks failures before the node was serving.
var ErrStartupFailed = errors.New("startup failed")

// Run runs a node until ctx ends, then flushes and stops it.
func Run(ctx context.Context, c Config) error {
	var w io.Writer = c.Stderr
	if w == nil {
		w = os.Stderr
	}
	if c.LogFile != "" {
		f, err := os.OpenFile(c.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("%w: opening log file: %v", ErrStartupFailed, err)
		}
		defer f.Close()
		w = f
	}
	ctl := c.control
	life := ctl.lifeOf()
	if life != nil {
		w = holdWriter{w, life}
	}
	if c.CommandLine != "" {
		PrintStartingMessage(w, c.Version, c.CommandLine)
	}
	log := scyllalog.New(w)
	startFail := func(err error) error {
		log.Logf(scyllalog.Error, "init", "Startup failed: %v", err)
		return fmt.Errorf("%w: %v", ErrStartupFailed, err)
	}
	if c.FailStartup != "" {
		log.Logf(scyllalog.Error, "init", "Startup failed: %s", c.FailStartup)
		return fmt.Errorf("%w: %s", ErrStartupFailed, c.FailStartup)
	}
	if c.CPUProfile != "" {
		if f, err := os.Create(strings.ReplaceAll(c.CPUProfile, "{addr}", c.ListenAddress)); err == nil {
			pprof.StartCPUProfile(f)
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	if err := validate(&c); err != nil {
		log.Logf(scyllalog.Error, "init", "Startup failed: %v", err)
		return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	// Listeners first, so that a busy port fails fast.
	listen := func(port int) (net.Listener, error) {
		return net.Listen("tcp", net.JoinHostPort(c.ListenAddress, strconv.Itoa(port)))
	}
	apiAddr := c.APIAddress
	if apiAddr == "" {
		apiAddr = c.ListenAddress
	}
	restLn, err := net.Listen("tcp", net.JoinHostPort(apiAddr, strconv.Itoa(c.RESTPort)))
	if err != nil {
		return startFail(fmt.Errorf("REST API: %w", err))
	}
	defer restLn.Close()
	ctl.onKill(func() { restLn.Close() })
	metLn, err := listen(c.MetricsPort)
	if err != nil {
		return startFail(fmt.Errorf("metrics: %w", err))
	}
	defer metLn.Close()
	ctl.onKill(func() { metLn.Close() })

	n, err := node.New(ctx, node.Config{
		ClusterName: c.ClusterName, ListenAddress: c.ListenAddress, DataDir: c.DataDir, DC: c.DC, Rack: c.Rack, Seeds: c.Seeds,
		VCPUs: c.VCPUs, CQLPort: c.CQLPort, InternodePort: c.InternodePort, RESTPort: c.RESTPort,
		DiskBytes:             int64(c.DiskGB * c.StorageScaleMiBPerGB * (1 << 20)),
		DiskFromFilesystem:    c.DiskFromFilesystem,
		RowCacheBytes:         c.rowCacheBytes(),
		CriticalDiskLevel:     c.CriticalDiskUtilizationLevel,
		OpsPerVCPU:            c.OpsPerVCPU,
		CoordinatorUnits:      c.CoordinatorUnits,
		StreamBytesPerSec:     c.StreamMiBPerVCPU * float64(c.VCPUs) * (1 << 20),
		StallThreshold:        time.Duration(c.BlockedReactorNotifyMS) * time.Millisecond,
		StallReportsPerMinute: c.BlockedReactorReportsPerMinute,
		SlowFactor:            c.SlowFactor, TimeScale: c.TimeScale, Version: c.Version, InitialTablets: c.InitialTablets, Log: log,
		Peers: c.Peers, Life: life,
	})
	if err != nil {
		return startFail(err)
	}
	ctl.onKill(n.Kill)
	var cqlUp atomic.Bool
	var restHandler http.Handler = n.RESTHandler(cqlUp.Load)
	if c.Pprof {
		restHandler = withPprof(restHandler)
	}
	restSrv := &http.Server{Handler: holdHandler(life, restHandler), ReadHeaderTimeout: 5 * time.Second}
	metSrv := &http.Server{Handler: holdHandler(life, metricsMux(n)), ReadHeaderTimeout: 5 * time.Second}
	go restSrv.Serve(restLn)
	go metSrv.Serve(metLn)
	ctl.onKill(func() { restSrv.Close(); metSrv.Close() })
	defer restSrv.Close()
	defer metSrv.Close()
	// node_exporter is a process of its own beside scylla: when it cannot
	// listen, the node still runs (and says so).
	if c.NodeExporterPort > 0 {
		if expLn, err := listen(c.NodeExporterPort); err != nil {
			log.Logf(scyllalog.Warn, "init", "node_exporter not started: %v", err)
		} else {
			mux := http.NewServeMux()
			mux.Handle("/metrics", n.NodeExporterHandler())
			expSrv := &http.Server{Handler: holdHandler(life, mux), ReadHeaderTimeout: 5 * time.Second}
			go expSrv.Serve(expLn)
			ctl.onKill(func() { expSrv.Close() })
			defer expSrv.Close()
		}
	}
	if err := n.Join(ctx); err != nil {
		n.Close()
		return startFail(err)
	}

	cqlLn, err := listen(c.CQLPort)
	if err != nil {
		n.Close()
		return startFail(fmt.Errorf("CQL: %w", err))
	}
	ctl.onKill(func() { cqlLn.Close() })
	copts := cql.Options{Shards: c.VCPUs, Authenticator: c.Authenticator, Logf: log.Logf, TTLPeriod: time.Duration(c.TTLPeriodSeconds * float64(time.Second)), UserDefinedFunctions: c.EnableUDF}
	if life != nil {
		copts.Hold = life.Hold
	}
	srv := cql.NewServer(n, copts)
	ctl.onKill(srv.Abort)
	go srv.RunExpiration(ctx)
	if c.ShardAwareCQLPort > 0 {
		saLn, err := listen(c.ShardAwareCQLPort)
		if err != nil {
			cqlLn.Close()
			n.Close()
			return startFail(fmt.Errorf("CQL shard-aware port: %w", err))
		}
		ctl.onKill(func() { saLn.Close() })
		go srv.ServeShardAware(ctx, saLn)
	}
	cqlDone := make(chan struct{})
	go func() {
		defer close(cqlDone)
		srv.Serve(ctx, cqlLn)
	}()
	cqlUp.Store(true)
	n.MarkServing()
	log.Logf(scyllalog.Info, "init", "Scylla version %s initialization completed.", c.Version)
	if c.InjectError != "" {
		after, logger, msg, _ := parseInjectError(c.InjectError)
		t := time.AfterFunc(after, func() { log.Logf(scyllalog.Error, logger, "%s", msg) })
		defer t.Stop()
	}

	select {
	case <-ctx.Done():
	case <-n.Left():
		// A decommissioned node stops serving clients but keeps running,
		// as ScyllaDB does, until it is stopped.
		log.Logf(scyllalog.Info, "storage_service", "Stopping the CQL server: this node has left the cluster")
		cqlUp.Store(false)
		srv.Close()
		<-ctx.Done()
	}
	log.Logf(scyllalog.Info, "init", "Signal received; shutting down")
	cqlUp.Store(false)
	srv.Close()
	cqlLn.Close()
	<-cqlDone
	restSrv.Close()
	metSrv.Close()
	if err := n.Close(); err != nil {
		log.Logf(scyllalog.Error, "init", "Shutdown: %v", err)
		return err
	}
	log.Logf(scyllalog.Info, "init", "Scylla version %s shutdown complete.", c.Version)
	return nil
}

func metricsMux(n *node.Node) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", n.MetricsHandler())
	return mux
}

// rowCacheBytes is the node's row cache: its memory scaled like its disk
// (node.RowCacheBytes). A disk read from the file system (the image
// double's) has no scale: the cache is then sized from it.
func (c Config) rowCacheBytes() int64 {
	if c.DiskFromFilesystem {
		return 0
	}
	return node.RowCacheBytes(c.MemoryGB, c.StorageScaleMiBPerGB)
}

func validate(c *Config) error {
	var errs []string
	if net.ParseIP(c.ListenAddress) == nil {
		errs = append(errs, fmt.Sprintf("--listen-address %q is not an IP address", c.ListenAddress))
	}
	if c.APIAddress != "" && net.ParseIP(c.APIAddress) == nil {
		errs = append(errs, fmt.Sprintf("--api-address %q is not an IP address", c.APIAddress))
	}
	if c.DataDir == "" {
		errs = append(errs, "--data-dir is required")
	}
	if c.TimeScale <= 0 || c.TimeScale > 1 {
		errs = append(errs, fmt.Sprintf("--time-scale %g must be in (0, 1]", c.TimeScale))
	}
	if c.InjectError != "" {
		if _, _, _, err := parseInjectError(c.InjectError); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if c.VCPUs < 1 {
		errs = append(errs, "--vcpus must be at least 1")
	}
	switch strings.TrimPrefix(c.Authenticator, "org.apache.cassandra.auth.") {
	case "", cql.AllowAllAuthenticator, cql.PasswordAuthenticator:
	default:
		errs = append(errs, fmt.Sprintf("--authenticator %q: want AllowAllAuthenticator or PasswordAuthenticator", c.Authenticator))
	}
	if c.DiskGB < 0 || c.StorageScaleMiBPerGB < 0 {
		errs = append(errs, "--disk-gb and --storage-scale-mib-per-gb must not be negative")
	}
	if c.OpsPerVCPU <= 0 || c.StreamMiBPerVCPU <= 0 {
		errs = append(errs, "--ops-per-vcpu and --stream-mib-per-vcpu must be positive")
	}
	if c.CoordinatorUnits < 0 {
		errs = append(errs, "--coordinator-units must not be negative")
	}
	if c.SlowFactor <= 0 {
		errs = append(errs, "--slow-factor must be positive")
	}
	for _, p := range []int{c.CQLPort, c.RESTPort, c.MetricsPort, c.InternodePort} {
		if p <= 0 || p > 65535 {
			errs = append(errs, fmt.Sprintf("port %d out of range", p))
		}
	}
	if c.ShardAwareCQLPort < 0 || c.ShardAwareCQLPort > 65535 {
		errs = append(errs, fmt.Sprintf("--shard-aware-cql-port %d out of range", c.ShardAwareCQLPort))
	}
	if c.NodeExporterPort < 0 || c.NodeExporterPort > 65535 {
		errs = append(errs, fmt.Sprintf("--node-exporter-port %d out of range", c.NodeExporterPort))
	}
	errs = append(errs, experimentalErrors(c)...)
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// withPprof adds net/http/pprof's handlers under /debug/pprof/ in front of h.
func withPprof(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", httppprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", httppprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", httppprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", httppprof.Trace)
	mux.Handle("/", h)
	return mux
}

// parseInjectError splits --inject-error AFTER:MESSAGE; MESSAGE is
// "logger - text" as ScyllaDB's lines are (no logger: "database").
func parseInjectError(v string) (after time.Duration, logger, msg string, err error) {
	a, m, ok := strings.Cut(v, ":")
	if ok {
		after, err = time.ParseDuration(a)
	}
	if !ok || err != nil || after < 0 || strings.TrimSpace(m) == "" {
		return 0, "", "", fmt.Errorf("--inject-error %q is not AFTER:MESSAGE (e.g. 3s:compaction - Compaction failed)", v)
	}
	logger, msg = "database", strings.TrimSpace(m)
	if l, rest, ok := strings.Cut(msg, " - "); ok && l != "" && !strings.ContainsAny(l, " \t") {
		logger, msg = l, rest
	}
	return after, logger, msg, nil
}
