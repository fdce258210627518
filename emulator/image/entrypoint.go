package image

import (
	"fmt"
	"sort"
	"strings"

	"github.com/elasticity-dev/elasticity/internal/scyllaversion"
)

// argOption is one add_argument of dist/docker/commandlineparser.py.
type argOption struct {
	flag    string
	dest    string
	action  string // "store" (default), "store_true", "append"
	choices []string
	def     string
}

// entrypointOptions are the entrypoint's flags for a version, from
// dist/docker/commandlineparser.py at its release tag: identical from
// scylla-2025.1.0 to scylla-2025.3.8; scylla-2025.4.0 adds --dc and --rack;
// scylla-2025.4.4 (released as 2025.4.5) --blocked-reactor-notify-ms
// (default '25').
func entrypointOptions(v scyllaversion.Version) []argOption {
	opts := []argOption{
		{flag: "--developer-mode", dest: "developerMode", choices: []string{"0", "1"}, def: "1"},
		{flag: "--experimental-features", dest: "experimental_features", action: "append"},
		{flag: "--seeds", dest: "seeds"},
		{flag: "--cpuset", dest: "cpuset"},
		{flag: "--smp", dest: "smp"},
		{flag: "--memory", dest: "memory"},
		{flag: "--reserve-memory", dest: "reserveMemory"},
		{flag: "--overprovisioned", dest: "overprovisioned", choices: []string{"0", "1"}},
		{flag: "--io-setup", dest: "io_setup", choices: []string{"0", "1"}, def: "1"},
		{flag: "--listen-address", dest: "listenAddress"},
		{flag: "--rpc-address", dest: "rpcAddress"},
		{flag: "--broadcast-address", dest: "broadcastAddress"},
		{flag: "--broadcast-rpc-address", dest: "broadcastRpcAddress"},
		{flag: "--api-address", dest: "apiAddress"},
		{flag: "--alternator-address", dest: "alternatorAddress"},
		{flag: "--alternator-port", dest: "alternatorPort"},
		{flag: "--alternator-https-port", dest: "alternatorHttpsPort"},
		{flag: "--alternator-write-isolation", dest: "alternatorWriteIsolation"},
		{flag: "--disable-version-check", dest: "disable_housekeeping", action: "store_true"},
		{flag: "--authenticator", dest: "authenticator"},
		{flag: "--authorizer", dest: "authorizer"},
		{flag: "--cluster-name", dest: "clusterName"},
		{flag: "--endpoint-snitch", dest: "endpointSnitch"},
		{flag: "--replace-node-first-boot", dest: "replaceNodeFirstBoot"},
		{flag: "--replace-address-first-boot", dest: "replaceAddressFirstBoot"},
	}
	if v.DCRackFlags() {
		opts = append(opts, argOption{flag: "--dc", dest: "dc"}, argOption{flag: "--rack", dest: "rack"})
	}
	if v.StallFlag() {
		opts = append(opts, argOption{flag: "--blocked-reactor-notify-ms", dest: "blocked_reactor_notify_ms", def: "25"})
	}
	return opts
}

// EntrypointFlags lists the flags the entrypoint of version v accepts (for
// tests and documentation).
func EntrypointFlags(v scyllaversion.Version) []string {
	var out []string
	for _, o := range entrypointOptions(v) {
		out = append(out, o.flag)
	}
	return out
}

// Parsed is what commandlineparser.parse() returns: the known arguments
// (by dest; unset ones absent) and the extra ones, passed on to scylla.
type Parsed struct {
	Values       map[string]string
	Experimental []string
	Extra        []string
}

func (p Parsed) get(dest string) (string, bool) {
	v, ok := p.Values[dest]
	return v, ok
}

// UsageError is argparse's error exit: usage and message on stderr, status 2.
type UsageError struct {
	Usage, Msg string
}

func (e *UsageError) Error() string {
	return fmt.Sprintf("%s\ndocker-entrypoint.py: error: %s", e.Usage, e.Msg)
}

// ErrHelp: -h/--help was given (argparse prints the help and exits 0).
var ErrHelp = fmt.Errorf("help requested")

func usage(opts []argOption) string {
	var b strings.Builder
	b.WriteString("usage: docker-entrypoint.py [-h]")
	for _, o := range opts {
		switch {
		case o.action == "store_true":
			fmt.Fprintf(&b, " [%s]", o.flag)
		case len(o.choices) > 0:
			fmt.Fprintf(&b, " [%s {%s}]", o.flag, strings.Join(o.choices, ","))
		default:
			fmt.Fprintf(&b, " [%s %s]", o.flag, strings.ToUpper(o.dest))
		}
	}
	return b.String()
}

// ParseEntrypoint parses the container's arguments as
// argparse.ArgumentParser.parse_known_args does with the options of
// commandlineparser.py: long options by exact name or unambiguous prefix
// (allow_abbrev), "--flag value" or "--flag=value", choices checked, later
// occurrences of a store option overriding earlier ones, and everything
// unknown kept in order as extra arguments.
func ParseEntrypoint(v scyllaversion.Version, args []string) (Parsed, error) {
	opts := entrypointOptions(v)
	p := Parsed{Values: map[string]string{}}
	for _, o := range opts {
		if o.def != "" {
			p.Values[o.dest] = o.def
		}
	}
	fail := func(format string, a ...any) (Parsed, error) {
		return Parsed{}, &UsageError{Usage: usage(opts), Msg: fmt.Sprintf(format, a...)}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			p.Extra = append(p.Extra, args[i:]...)
			break
		}
		if a == "-h" || a == "--help" {
			return Parsed{}, ErrHelp
		}
		if !strings.HasPrefix(a, "--") || len(a) == 2 {
			p.Extra = append(p.Extra, a)
			continue
		}
		name, inline, hasInline := strings.Cut(a, "=")
		o, err := lookup(opts, name)
		if err != nil {
			return fail("%v", err)
		}
		if o == nil {
			p.Extra = append(p.Extra, a)
			continue
		}
		if o.action == "store_true" {
			if hasInline {
				return fail("argument %s: ignored explicit argument '%s'", o.flag, inline)
			}
			p.Values[o.dest] = "True"
			continue
		}
		val := inline
		if !hasInline {
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") && !isNegativeNumber(args[i+1]) {
				return fail("argument %s: expected one argument", o.flag)
			}
			i++
			val = args[i]
		}
		if len(o.choices) > 0 && !contains(o.choices, val) {
			q := make([]string, len(o.choices))
			for k, c := range o.choices {
				q[k] = "'" + c + "'"
			}
			return fail("argument %s: invalid choice: '%s' (choose from %s)", o.flag, val, strings.Join(q, ", "))
		}
		if o.action == "append" {
			p.Experimental = append(p.Experimental, val)
			continue
		}
		p.Values[o.dest] = val
	}
	return p, nil
}

// lookup finds an option by its exact flag or, as argparse's allow_abbrev
// does, by a prefix that matches only one flag; nil when unknown.
func lookup(opts []argOption, name string) (*argOption, error) {
	var matches []*argOption
	for i := range opts {
		if opts[i].flag == name {
			return &opts[i], nil
		}
		if strings.HasPrefix(opts[i].flag, name) {
			matches = append(matches, &opts[i])
		}
	}
	switch len(matches) {
	case 0:
		return nil, nil
	case 1:
		return matches[0], nil
	}
	var names []string
	for _, m := range matches {
		names = append(names, m.flag)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("ambiguous option: %s could match %s", name, strings.Join(names, ", "))
}

func isNegativeNumber(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	for _, r := range s[1:] {
		if (r < '0' || r > '9') && r != '.' {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Setup is what the entrypoint prepares before starting supervisord.
type Setup struct {
	// DockerArgs is SCYLLA_DOCKER_ARGS of /etc/scylla.d/docker.conf.
	DockerArgs string
	// DevMode is DEV_MODE of /etc/scylla.d/dev-mode.conf.
	DevMode string
	// CPUSet is CPUSET of /etc/scylla.d/cpuset.conf.
	CPUSet string
	// RackDC, when not empty, is written to
	// /etc/scylla/cassandra-rackdc.properties (2025.4's --dc/--rack).
	RackDC string
}

// scyllaArgs is SCYLLA_ARGS of /etc/default/scylla-server as the image's
// build script sets it (dist/docker/*/build_docker.sh: sed on SCYLLA_ARGS).
var scyllaArgs = []string{"--log-to-syslog", "0", "--log-to-stdout", "1", "--network-stack", "posix"}

// BuildSetup mirrors ScyllaSetup (dist/docker/scyllasetup.py):
// developerMode (scylla_dev_mode_setup writes DEV_MODE=--developer-mode=1),
// cpuSet, write_rackdc_properties (2025.4) and arguments(). hostIP is what
// `hostname -i` (2025.1) / gethostbyname(gethostname()) (2025.2+) gives.
func BuildSetup(v scyllaversion.Version, p Parsed, hostIP string) (Setup, error) {
	var s Setup
	if dm, _ := p.get("developerMode"); dm != "0" {
		s.DevMode = "--developer-mode=1"
	}
	if cs, ok := p.get("cpuset"); ok {
		s.CPUSet = "--cpuset " + cs
	}
	snitch, hasSnitch := p.get("endpointSnitch")
	if v.DCRackFlags() {
		dc, hasDC := p.get("dc")
		rack, hasRack := p.get("rack")
		if hasDC || hasRack {
			if !hasSnitch {
				snitch, hasSnitch = "GossipingPropertyFileSnitch", true
			}
			if snitch != "GossipingPropertyFileSnitch" {
				return Setup{}, fmt.Errorf("Cannot use dc and rack parameters together with endpoint snitch '%s'. "+
					"The dc and rack parameters are only supported with the endpoint snitch 'GossipingPropertyFileSnitch'.", snitch)
			}
			if !hasDC {
				dc = "datacenter1"
			}
			if !hasRack {
				rack = "rack1"
			}
			s.RackDC = fmt.Sprintf("dc=%s\nrack=%s\n", dc, rack)
		}
	}
	var args []string
	add := func(dest, flag string) {
		if v, ok := p.get(dest); ok {
			args = append(args, flag+" "+v)
		}
	}
	add("memory", "--memory")
	add("reserveMemory", "--reserve-memory")
	add("smp", "--smp")
	_, hasCPUSet := p.get("cpuset")
	if op, ok := p.get("overprovisioned"); op == "1" || !ok && !hasCPUSet {
		args = append(args, "--overprovisioned")
	}
	listen, ok := p.get("listenAddress")
	if !ok {
		listen = hostIP
	}
	rpc, ok := p.get("rpcAddress")
	if !ok {
		rpc = listen
	}
	alternator, ok := p.get("alternatorAddress")
	if !ok {
		alternator = listen
	}
	seeds, ok := p.get("seeds")
	if !ok {
		if b, ok := p.get("broadcastAddress"); ok {
			seeds = b
		} else {
			seeds = listen
		}
	}
	args = append(args, "--listen-address "+listen, "--rpc-address "+rpc, "--seed-provider-parameters seeds="+seeds)
	add("broadcastAddress", "--broadcast-address")
	add("broadcastRpcAddress", "--broadcast-rpc-address")
	add("apiAddress", "--api-address")
	args = append(args, "--alternator-address "+alternator)
	add("alternatorPort", "--alternator-port")
	add("alternatorHttpsPort", "--alternator-https-port")
	add("alternatorWriteIsolation", "--alternator-write-isolation")
	add("authenticator", "--authenticator")
	add("authorizer", "--authorizer")
	for _, f := range p.Experimental {
		args = append(args, "--experimental-features "+f)
	}
	add("clusterName", "--cluster-name")
	if hasSnitch {
		// write_rackdc_properties (2025.4) sets the snitch it defaults.
		args = append(args, "--endpoint-snitch "+snitch)
	}
	if _, ok := p.get("replaceNodeFirstBoot"); ok {
		add("replaceNodeFirstBoot", "--replace-node-first-boot")
	} else {
		add("replaceAddressFirstBoot", "--replace-address-first-boot")
	}
	if v.StallFlag() {
		// scylla-2025.4.4 and later: the entrypoint flag, default 25.
		ms, _ := p.get("blocked_reactor_notify_ms")
		args = append(args, "--blocked-reactor-notify-ms "+ms)
	} else {
		// scylla-2025.1.0 to 2025.4.3: hard-coded, whatever the user
		// passes (a user's own goes on as an extra argument, and scylla
		// then refuses the repeated option).
		args = append(args, "--blocked-reactor-notify-ms 999999999")
	}
	s.DockerArgs = strings.Join(args, " ") + " " + strings.Join(p.Extra, " ")
	return s, nil
}

// ScyllaCommandLine is the scylla command of
// dist/common/supervisor/scylla-server.sh: "$bindir"/scylla $SCYLLA_ARGS
// $SEASTAR_IO $DEV_MODE $CPUSET $SCYLLA_DOCKER_ARGS, the variables
// unquoted and so split on whitespace by the shell. SEASTAR_IO is empty:
// scylla_io_setup writes nothing in developer mode, and the double runs no
// iotune.
func (s Setup) ScyllaCommandLine() []string {
	out := append([]string(nil), scyllaArgs...)
	out = append(out, strings.Fields(s.DevMode)...)
	out = append(out, strings.Fields(s.CPUSet)...)
	return append(out, strings.Fields(s.DockerArgs)...)
}
