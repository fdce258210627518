package sbench

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Modes are scylla-bench's -mode values this model runs (main.go GetMode;
// mixed is its 50/50 write/read).
var Modes = []string{ModeWrite, ModeRead, ModeCounterUpdate, ModeCounterRead, ModeScan, ModeMixed}

// The modes, by scylla-bench's names (which are also the operation names).
const (
	ModeWrite         = "write"
	ModeRead          = "read"
	ModeCounterUpdate = "counter_update"
	ModeCounterRead   = "counter_read"
	ModeScan          = "scan"
	ModeMixed         = "mixed"
)

// scylla-bench's defaults (main.go's flag definitions).
const (
	defaultKeyspace           = "scylla_bench"
	defaultTable              = "test"
	counterTable              = "test_counters" // main.go: counterTableName, not a flag
	defaultPartitionCount     = 10000
	defaultClusteringRowCount = 100
	defaultRowSize            = "4"
	defaultPageSize           = 1000
)

// Options are scylla-bench's options as the spec text carries them:
// "mode=write,partition-count=10000,clustering-row-size=uniform:64..128,validate-data".
// Each is the scylla-bench flag of the same name; zero values are its defaults.
type Options struct {
	Mode string // required: write, read, counter_update, counter_read, scan, mixed
	// Workload is scylla-bench's -workload: "" (keys from the scenario's
	// distribution), uniform or sequential.
	Workload string
	// PartitionCount 0: the partitions the run filled (scylla-bench's
	// 10000 when it filled none).
	PartitionCount     int64
	ClusteringRowCount int64  // default 100
	ClusteringRowSize  string // a size or a distribution (fixed:N, uniform:A..B); default 4
	RowsPerRequest     int    // default 1
	PartitionOffset    int64
	RangeCount         int // scan: token ranges the ring is split into; default 1
	ValidateData       bool
	NoRandomData       bool
	// Read variants (read and counter_read; at most one of the three).
	ProvideUpperBound, InRestriction, NoLowerBound bool
	SelectOrderBy                                  []string // none, asc, desc, rotated per read
	BypassCache                                    bool
	ConsistencyLevel                               string // default quorum
	PageSize                                       int    // default 1000
	Keyspace, Table                                string // default scylla_bench, test
}

// optionSetters are the accepted options; every other scylla-bench flag is
// refused by name (refusedOptions says why where it is not obvious).
var optionSetters = map[string]func(o *Options, v string) error{
	"mode":                 func(o *Options, v string) error { o.Mode = v; return nil },
	"workload":             func(o *Options, v string) error { o.Workload = v; return nil },
	"partition-count":      func(o *Options, v string) error { return parseInt64(v, &o.PartitionCount) },
	"clustering-row-count": func(o *Options, v string) error { return parseInt64(v, &o.ClusteringRowCount) },
	"clustering-row-size":  func(o *Options, v string) error { o.ClusteringRowSize = v; return nil },
	"rows-per-request":     func(o *Options, v string) error { return parseInt(v, &o.RowsPerRequest) },
	"partition-offset":     func(o *Options, v string) error { return parseInt64(v, &o.PartitionOffset) },
	"range-count":          func(o *Options, v string) error { return parseInt(v, &o.RangeCount) },
	"validate-data":        func(o *Options, v string) error { return parseBool(v, &o.ValidateData) },
	"no-random-data":       func(o *Options, v string) error { return parseBool(v, &o.NoRandomData) },
	"provide-upper-bound":  func(o *Options, v string) error { return parseBool(v, &o.ProvideUpperBound) },
	"in-restriction":       func(o *Options, v string) error { return parseBool(v, &o.InRestriction) },
	"no-lower-bound":       func(o *Options, v string) error { return parseBool(v, &o.NoLowerBound) },
	"bypass-cache":         func(o *Options, v string) error { return parseBool(v, &o.BypassCache) },
	"select-order-by": func(o *Options, v string) error {
		o.SelectOrderBy = append(o.SelectOrderBy, v)
		return nil
	},
	"consistency-level": func(o *Options, v string) error { o.ConsistencyLevel = v; return nil },
	"page-size":         func(o *Options, v string) error { return parseInt(v, &o.PageSize) },
	"keyspace":          func(o *Options, v string) error { o.Keyspace = v; return nil },
	"table":             func(o *Options, v string) error { o.Table = v; return nil },
}

// refusedOptions are scylla-bench flags the model does not take, with why.
var refusedOptions = map[string]string{
	"duration":           "the scenario's phases give the durations",
	"iterations":         "the scenario's phases give the durations",
	"max-rate":           "the scenario's rate gives the arrival rate (open model)",
	"concurrency":        "the scenario's rate and the load generator give the concurrency",
	"replication-factor": "the scenario's replication factor applies",
	"nodes":              "the cluster is the scenario's",
	"truncate-table":     "the run's fill writes the data the steps use",
	"extra-clause":       "arbitrary CQL cannot be checked or validated",
	"write-rate":         "timeseries workloads are not supported",
	"start-timestamp":    "timeseries workloads are not supported",
	"distribution":       "timeseries workloads are not supported; the scenario's distribution picks keys",
}

// ParseOptions reads the spec text: comma-separated name=value options or
// bare boolean flags (validate-data), names as scylla-bench's flags (a
// leading "-" is allowed). A value of select-order-by may be a list, as
// scylla-bench's: select-order-by=none,asc.
func ParseOptions(text string) (Options, error) {
	var o Options
	prev := ""
	for _, item := range strings.Split(text, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, val, hasVal := strings.Cut(item, "=")
		name = strings.TrimLeft(strings.TrimSpace(name), "-")
		val = strings.TrimSpace(val)
		if !hasVal && prev == "select-order-by" && isOrder(name) {
			o.SelectOrderBy = append(o.SelectOrderBy, name)
			continue
		}
		prev = name
		set, ok := optionSetters[name]
		if !ok {
			if why, refused := refusedOptions[name]; refused {
				return o, fmt.Errorf("option %s is not supported: %s", name, why)
			}
			return o, fmt.Errorf("option %s is not supported (supported: %s)", name, strings.Join(optionNames(), ", "))
		}
		if !hasVal {
			if _, isBool := boolOptions[name]; !isBool {
				return o, fmt.Errorf("option %s needs a value (%s=...)", name, name)
			}
			val = "true"
		}
		if err := set(&o, val); err != nil {
			return o, fmt.Errorf("option %s=%s: %w", name, val, err)
		}
	}
	return o, nil
}

var boolOptions = map[string]bool{"validate-data": true, "no-random-data": true, "provide-upper-bound": true,
	"in-restriction": true, "no-lower-bound": true, "bypass-cache": true}

func isOrder(s string) bool {
	switch strings.ToLower(s) {
	case "none", "asc", "desc":
		return true
	}
	return false
}

func optionNames() []string { return specOrder }

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,47}$`)

// check validates o as scylla-bench's main() does, returning it with the
// defaults filled in.
func (o Options) check() (Options, error) {
	var errs []error
	bad := func(option, format string, args ...any) {
		errs = append(errs, fmt.Errorf("option %s: "+format, append([]any{option}, args...)...))
	}
	switch o.Mode {
	case ModeWrite, ModeRead, ModeCounterUpdate, ModeCounterRead, ModeScan, ModeMixed:
	case "":
		bad("mode", "required (one of %s)", strings.Join(Modes, ", "))
	default:
		bad("mode", "%q is not one of %s", o.Mode, strings.Join(Modes, ", "))
	}
	switch o.Workload {
	case "", "uniform", "sequential":
	case "timeseries":
		bad("workload", "timeseries is not supported: its keys follow the wall clock (-start-timestamp, -write-rate), not a population the fill writes and validation reads back")
	default:
		bad("workload", "%q is not one of uniform, sequential", o.Workload)
	}
	if o.Mode == ModeScan && o.Workload != "" {
		bad("workload", "cannot be given with mode=scan (scylla-bench: scan has its own workload)")
	}
	if o.Mode == ModeScan && o.PartitionOffset != 0 {
		bad("partition-offset", "is not supported by the 'scan' workload (as scylla-bench)")
	}
	o.fillDefaults()
	if o.PartitionCount < 0 {
		bad("partition-count", "%d must be positive", o.PartitionCount)
	}
	if o.ClusteringRowCount < 1 {
		bad("clustering-row-count", "%d must be at least 1", o.ClusteringRowCount)
	}
	if o.RowsPerRequest < 1 {
		bad("rows-per-request", "%d must be at least 1", o.RowsPerRequest)
	}
	if o.PartitionOffset < 0 {
		bad("partition-offset", "%d must not be negative", o.PartitionOffset)
	}
	if o.RangeCount < 1 {
		bad("range-count", "%d must be at least 1", o.RangeCount)
	}
	if o.RangeCount != 1 && o.Mode != ModeScan {
		bad("range-count", "makes sense only in scan mode")
	}
	if o.RowsPerRequest > 1 && (o.Mode == ModeCounterUpdate || o.Mode == ModeScan) {
		bad("rows-per-request", "counter_update and scan send one row or range per request (scylla-bench ignores it there)")
	}
	if o.PageSize < 1 {
		bad("page-size", "%d must be at least 1", o.PageSize)
	}
	if _, err := parseSizeDist(o.ClusteringRowSize, o.ValidateData); err != nil {
		bad("clustering-row-size", "%v", err)
	}
	errs = append(errs, o.checkReadVariants()...)
	if _, err := parseCL(o.ConsistencyLevel); err != nil {
		bad("consistency-level", "%v", err)
	}
	for _, x := range []struct{ name, v string }{{"keyspace", o.Keyspace}, {"table", o.Table}} {
		if !identRE.MatchString(x.v) {
			bad(x.name, "%q is not a valid CQL identifier", x.v)
		}
	}
	if o.Table == counterTable {
		bad("table", "%q is the counter table's name", o.Table)
	}
	return o, errors.Join(errs...)
}

func (o *Options) fillDefaults() {
	if o.ClusteringRowCount == 0 {
		o.ClusteringRowCount = defaultClusteringRowCount
	}
	if o.ClusteringRowSize == "" {
		o.ClusteringRowSize = defaultRowSize
	}
	if o.RowsPerRequest == 0 {
		o.RowsPerRequest = 1
	}
	if o.RangeCount == 0 {
		o.RangeCount = 1
	}
	if o.PageSize == 0 {
		o.PageSize = defaultPageSize
	}
	if o.ConsistencyLevel == "" {
		o.ConsistencyLevel = "quorum"
	}
	if o.Keyspace == "" {
		o.Keyspace = defaultKeyspace
	}
	if o.Table == "" {
		o.Table = defaultTable
	}
	if len(o.SelectOrderBy) == 0 {
		o.SelectOrderBy = []string{"none"}
	}
}

// checkReadVariants mirrors main.go: the read tweaks make sense only in the
// read modes and are mutually exclusive; select-order-by is none, asc or desc.
func (o Options) checkReadVariants() []error {
	var errs []error
	tweaks := []string{}
	for _, t := range []struct {
		name string
		on   bool
	}{{"provide-upper-bound", o.ProvideUpperBound}, {"in-restriction", o.InRestriction}, {"no-lower-bound", o.NoLowerBound}} {
		if t.on {
			tweaks = append(tweaks, t.name)
		}
	}
	readMode := o.Mode == ModeRead || o.Mode == ModeCounterRead || o.Mode == ModeMixed
	if len(tweaks) > 0 && !readMode {
		errs = append(errs, fmt.Errorf("option %s makes sense only in the read modes (read, counter_read, mixed), not mode=%s", tweaks[0], o.Mode))
	}
	if len(tweaks) > 1 {
		errs = append(errs, fmt.Errorf("options %s are mutually exclusive (as scylla-bench's in-restriction, no-lower-bound and provide-upper-bound)", strings.Join(tweaks, " and ")))
	}
	for i, v := range o.SelectOrderBy {
		if !isOrder(v) {
			errs = append(errs, fmt.Errorf("option select-order-by[%d] %q is neither of none, asc, desc", i, v))
		}
	}
	return errs
}

// specOrder is the order Text writes options in.
var specOrder = []string{"mode", "workload", "partition-count", "clustering-row-count", "clustering-row-size",
	"rows-per-request", "partition-offset", "range-count", "validate-data", "no-random-data",
	"provide-upper-bound", "in-restriction", "no-lower-bound", "select-order-by", "bypass-cache",
	"consistency-level", "page-size", "keyspace", "table"}

// Text is o as spec text, options that differ from scylla-bench's defaults
// only, in a fixed order: ParseOptions(o.Text()) is o again.
func (o Options) Text() string {
	var parts []string
	// add writes name=v unless v is empty or one of its defaults.
	add := func(name, v string, defaults ...string) {
		if v == "" {
			return
		}
		for _, d := range defaults {
			if v == d {
				return
			}
		}
		parts = append(parts, name+"="+v)
	}
	flag := func(name string, on bool) {
		if on {
			parts = append(parts, name)
		}
	}
	add("mode", o.Mode)
	add("workload", o.Workload)
	add("partition-count", strconv.FormatInt(o.PartitionCount, 10), "0")
	add("clustering-row-count", strconv.FormatInt(o.ClusteringRowCount, 10), "0", strconv.Itoa(defaultClusteringRowCount))
	add("clustering-row-size", o.ClusteringRowSize, defaultRowSize)
	add("rows-per-request", strconv.Itoa(o.RowsPerRequest), "0", "1")
	add("partition-offset", strconv.FormatInt(o.PartitionOffset, 10), "0")
	add("range-count", strconv.Itoa(o.RangeCount), "0", "1")
	flag("validate-data", o.ValidateData)
	flag("no-random-data", o.NoRandomData)
	flag("provide-upper-bound", o.ProvideUpperBound)
	flag("in-restriction", o.InRestriction)
	flag("no-lower-bound", o.NoLowerBound)
	add("select-order-by", strings.Join(o.SelectOrderBy, ","), "none")
	flag("bypass-cache", o.BypassCache)
	add("consistency-level", o.ConsistencyLevel, "quorum")
	add("page-size", strconv.Itoa(o.PageSize), "0", strconv.Itoa(defaultPageSize))
	add("keyspace", o.Keyspace, defaultKeyspace)
	add("table", o.Table, defaultTable)
	return strings.Join(parts, ",")
}

// Spec is the model spec of o ("sb:<text>"), what a scenario's workload
// section builds for ParseModel: the scenario loader's helper.
func (o Options) Spec() string { return Form + ":" + o.Text() }

func parseInt64(v string, dst *int64) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return errors.New("not an integer")
	}
	*dst = n
	return nil
}

func parseInt(v string, dst *int) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return errors.New("not an integer")
	}
	*dst = n
	return nil
}

func parseBool(v string, dst *bool) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return errors.New("not true or false")
	}
	*dst = b
	return nil
}
