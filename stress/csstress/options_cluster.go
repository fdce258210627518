package csstress

// The options about the cluster and the output: -schema, -mode, -port, -log, -errors.

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

func sortStrings(s []string) { sort.Strings(s) }

var (
	identRE    = regexp.MustCompile(`^[A-Za-z0-9_]{1,48}$`)
	multiRE    = regexp.MustCompile(`(?i)^(replication|compaction|storage)\((.*)\)$`)
	strategyRE = regexp.MustCompile(`^[A-Za-z0-9_.]+$`)
	// SettingsLog's interval= and level= patterns.
	logIntervalRE = regexp.MustCompile(`^[0-9]+(ms|s|)$`)
	logLevelRE    = regexp.MustCompile(`^(minimal|normal|verbose)$`)
)

// parseSchema reads -schema (SettingsSchema): replication(...), keyspace=,
// compaction(...), compression=.
func (s *settings) parseSchema(params []string) error {
	if s.command == "user" {
		// SettingsSchema.get: "-schema can only be provided with predefined operations"
		return unsupported("-schema", "the user command takes its schema from the profile")
	}
	for _, p := range params {
		if m := multiRE.FindStringSubmatch(p); m != nil {
			if err := s.schemaMulti(strings.ToLower(m[1]), m[2]); err != nil {
				return err
			}
			continue
		}
		name, value, _ := strings.Cut(p, "=")
		switch strings.ToLower(name) {
		case "keyspace":
			if !identRE.MatchString(value) {
				return invalid("-schema keyspace=", value, "a keyspace name of letters, digits and _")
			}
			s.schema.keyspace = value
		case "compression":
			if !strategyRE.MatchString(value) {
				return invalid("-schema compression=", value, "a compressor class such as LZ4Compressor")
			}
			s.schema.compression = value
		default:
			return invalid("-schema", p, "replication(...), keyspace=, compaction(...) or compression=")
		}
	}
	return nil
}

// schemaMulti reads replication(strategy=X,factor=N,...) (OptionReplication)
// and compaction(strategy=X,...) (OptionCompaction): strategy= and factor=
// are their own options, any other key=value goes to the map as given.
func (s *settings) schemaMulti(which, inner string) error {
	if which == "storage" {
		return unsupported("-schema storage(...)", "keyspace storage options (S3 storage) are not part of an elasticity scenario")
	}
	var strategy string
	var kv [][2]string
	for _, arg := range strings.Split(inner, ",") {
		if arg == "" {
			continue
		}
		k, v, ok := strings.Cut(arg, "=")
		if !ok || k == "" || v == "" || !strategyRE.MatchString(k) || strings.ContainsAny(v, "'\"") {
			return invalid("-schema "+which+"(...)", arg, "key=value")
		}
		switch {
		case strings.EqualFold(k, "strategy"):
			if !strategyRE.MatchString(v) {
				return invalid("-schema "+which+"(strategy=)", v, "a strategy class name")
			}
			strategy = v
		case which == "replication" && (strings.EqualFold(k, "factor") || k == "replication_factor"):
			if n, err := strconv.Atoi(v); err != nil || n < 1 {
				return invalid("-schema replication("+k+"=)", v, "a replication factor of at least 1")
			}
			kv = append(kv, [2]string{"replication_factor", v})
		default:
			kv = append(kv, [2]string{k, v})
		}
	}
	if which == "replication" {
		s.schema.strategy, s.schema.replication = strategy, kv
		if strategy == "" {
			// OptionReplication's default strategy (scylladb/cassandra-stress) is NetworkTopologyStrategy.
			s.schema.strategy = "NetworkTopologyStrategy"
		}
		return nil
	}
	if strategy == "" {
		return invalid("-schema compaction(...)", inner, "strategy=ClassName first, then its options")
	}
	s.schema.compaction, s.schema.compactionKV = strategy, kv
	return nil
}

// parseMode reads -mode (SettingsMode Cql3NativeOptions and Cql3NativeV4Options):
// the native CQL protocol with prepared statements is what runs here; the
// connection settings are the scenario's session's.
func (s *settings) parseMode(params []string) error {
	for _, p := range params {
		name, value, hasValue := strings.Cut(p, "=")
		switch lname := strings.ToLower(name); {
		case !hasValue && (lname == "cql3" || lname == "native" || lname == "prepared" || lname == "4x"):
		case !hasValue && (lname == "thrift" || lname == "simplenative" || lname == "unprepared"):
			return unsupported("-mode "+p, "operations run on the native protocol with prepared statements")
		case hasValue && (lname == "connectionsperhost" || lname == "maxpending" || lname == "requesttimeout" || lname == "protocolversion"):
			if _, err := strconv.Atoi(value); err != nil {
				return invalid("-mode "+name+"=", value, "a number")
			}
			s.note("-mode %s gives way to the scenario's driver session (its connections, timeouts and protocol)", p)
		case hasValue && lname == "compression":
			if !strings.EqualFold(value, "none") && !strings.EqualFold(value, "lz4") && !strings.EqualFold(value, "snappy") {
				return invalid("-mode compression=", value, "none, lz4 or snappy")
			}
			if !strings.EqualFold(value, "none") {
				s.note("-mode compression=%s gives way to the scenario's driver session, which does not compress frames", value)
			}
		case hasValue && (lname == "user" || lname == "password" || lname == "auth-provider"):
			s.note("-mode %s= gives way to the cluster's authentication settings", name)
		case hasValue && lname == "port":
			s.note("-mode port= gives way to the cluster's CQL port")
		default:
			return invalid("-mode", p, "cql3 native [prepared] with connectionsPerHost=, maxPending=, requestTimeout=, protocolVersion=, compression=, user=, password=")
		}
	}
	return nil
}

// parsePort reads -port (SettingsPort): the cluster's ports win.
func (s *settings) parsePort(params []string) error {
	for _, p := range params {
		name, value, _ := strings.Cut(p, "=")
		switch strings.ToLower(name) {
		case "native", "thrift", "jmx":
			if _, err := strconv.Atoi(value); err != nil {
				return invalid("-port "+name+"=", value, "a port number")
			}
		default:
			return invalid("-port", p, "native=, thrift= or jmx= with a port number")
		}
	}
	s.note("-port %s gives way to the cluster's ports", strings.Join(params, " "))
	return nil
}

// parseLog reads -log (SettingsLog): the run's records and report replace
// cassandra-stress's output.
func (s *settings) parseLog(params []string) error {
	for _, p := range params {
		name, value, _ := strings.Cut(p, "=")
		switch strings.ToLower(name) {
		case "interval":
			if !logIntervalRE.MatchString(value) {
				return invalid("-log interval=", value, "a number of seconds or milliseconds such as 5, 5s or 500ms")
			}
		case "level":
			if !logLevelRE.MatchString(strings.ToLower(value)) {
				return invalid("-log level=", value, "minimal, normal or verbose")
			}
		case "file", "hdrfile", "no-summary", "no-settings", "print-statements-on-error":
		default:
			return invalid("-log", p, "interval=, level=, file=, hdrfile=, no-summary, no-settings")
		}
	}
	s.note("-log %s gives way to the run's own records: latency.jsonl at the job's measurement interval, and the report", strings.Join(params, " "))
	return nil
}

// parseErrors reads -errors (SettingsErrors): errors are counted by class
// and never stop the run, which is what ignore asks.
func (s *settings) parseErrors(params []string) error {
	for _, p := range params {
		switch strings.ToLower(p) {
		case "ignore":
			s.note("-errors ignore: errors are counted by class and never stop the run, as always here")
		case "skip-read-validation":
			s.note("-errors skip-read-validation: reads are never compared with the expected row here")
		default:
			name, _, _ := strings.Cut(p, "=")
			return unsupported("-errors "+p, fmt.Sprintf("%s changes how failed operations are retried or end the run; here every operation runs once and its error is counted by class", name))
		}
	}
	return nil
}
