package cql

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// configOption is one entry of ScyllaDB's db::config (db/config.cc) as the
// system.config virtual table shows it: its name, its type name
// (db/config.cc config_type_for<T>: "bool", "integer", "string",
// "restriction mode", "experimental features", ...), its default as JSON
// (config_file value_as_json) and whether it is liveness::LiveUpdate (only
// those can be changed with UPDATE system.config).
type configOption struct {
	name, typ, def string
	live           bool
}

// configOptions are the options of db/config.cc that the emulator has an
// answer for: the ones clients, tools and ScyllaDB's test suites read or
// change through CQL. Defaults are HEAD's db/config.cc values; num_tokens
// and cluster_name come from the node (configDefault).
var configOptions = []configOption{
	{"alternator_ttl_period_in_seconds", "double", "86400", false},
	{"auto_snapshot", "bool", "true", true},
	{"auto_snapshot_ttl", "integer", "0", true},
	{"batch_size_fail_threshold_in_kb", "integer", "1024", false},
	{"batch_size_warn_threshold_in_kb", "integer", "128", false},
	{"cluster_name", "string", `""`, false},
	{"compaction_enforce_min_threshold", "bool", "false", true},
	{"cql_duplicate_bind_variable_names_refer_to_same_variable", "bool", "true", true},
	{"cql_in_bind_variable_name_uses_uppercase_operator", "bool", "true", true},
	{"enable_cql_config_updates", "bool", "true", true},
	{"enable_tablets", "bool", "false", false},
	{"experimental_features", "experimental features", "[]", false},
	{"minimum_replication_factor_fail_threshold", "integer", "-1", true},
	{"minimum_replication_factor_warn_threshold", "integer", "3", true},
	{"num_tokens", "integer", "1", false},
	{"query_tombstone_page_limit", "integer", "10000", true},
	{"restrict_dtcs", "restriction mode", `"true"`, true},
	{"restrict_future_timestamp", "bool", "true", true},
	{"restrict_replication_simplestrategy", "restriction mode", `"false"`, true},
	{"restrict_twcs_without_default_ttl", "restriction mode", `"warn"`, true},
	{"rf_rack_valid_keyspaces", "bool", "false", false},
	{"strict_is_not_null_in_views", "restriction mode", `"warn"`, true},
	{"tablets_mode_for_new_keyspaces", "tablets mode", `"enabled"`, true},
}

func findConfigOption(name string) *configOption {
	for i := range configOptions {
		if configOptions[i].name == name {
			return &configOptions[i]
		}
	}
	return nil
}

// nodeConfig is one node's live configuration: the values set through
// CQL since it started (ScyllaDB keeps them in memory only).
type nodeConfig struct {
	mu  sync.Mutex
	set map[string]string // name -> value as JSON
}

// configValue is an option's value as JSON and its source name
// (utils/config_file.cc source_name: "default", "cql", ...).
func (s *Server) configValue(o *configOption) (value, source string) {
	s.config.mu.Lock()
	v, ok := s.config.set[o.name]
	s.config.mu.Unlock()
	if ok {
		return v, "cql"
	}
	switch o.name {
	case "alternator_ttl_period_in_seconds":
		if s.opts.TTLPeriod > 0 && s.opts.TTLPeriod != DefaultTTLPeriod {
			return s.ttlPeriodJSON(), "cli"
		}
	case "cluster_name":
		b, _ := json.Marshal(s.b.ClusterName())
		return string(b), "config"
	case "num_tokens":
		if n := len(s.b.Local().Tokens); n > 0 {
			return strconv.Itoa(n), "cli"
		}
	}
	return o.def, "default"
}

// configBool is a bool option's current value.
func (s *Server) configBool(name string) bool {
	v, _ := s.configValue(findConfigOption(name))
	return v == "true"
}

// setConfig is db/virtual_tables.cc db_config_table::apply: an UPDATE of
// system.config changes a live-updatable option on this node. Its errors
// reach the client as a write failure with these messages.
func (s *Server) setConfig(name string, cells map[string][]byte) error {
	fail := func(msg string) error { return virtualUpdateError(msg) }
	value, ok := cells["value"]
	switch {
	case !s.configBool("enable_cql_config_updates"):
		return fail("this virtual table doesn't allow updates")
	case !ok || value == nil:
		return fail("option value is required")
	}
	if _, ok := cells["type"]; ok {
		return fail("option type is immutable")
	}
	if _, ok := cells["source"]; ok {
		return fail("option source is not updateable")
	}
	o := findConfigOption(name)
	if o == nil {
		return fail("no such option")
	}
	if !o.live {
		return fail("option is not live-updateable")
	}
	js, ok := parseConfigValue(o.typ, string(value))
	if !ok {
		return fail("cannot parse option value")
	}
	s.config.mu.Lock()
	if s.config.set == nil {
		s.config.set = map[string]string{}
	}
	s.config.set[o.name] = js
	s.config.mu.Unlock()
	return nil
}

// parseConfigValue reads a value as config_file reads YAML for the type and
// returns it as value_as_json prints it.
func parseConfigValue(typ, v string) (string, bool) {
	switch typ {
	case "bool":
		switch strings.ToLower(v) {
		case "true", "1", "yes", "on":
			return "true", true
		case "false", "0", "no", "off":
			return "false", true
		}
		return "", false
	case "integer":
		n, err := strconv.ParseInt(v, 10, 64)
		return strconv.FormatInt(n, 10), err == nil
	case "double":
		f, err := strconv.ParseFloat(v, 64)
		return strconv.FormatFloat(f, 'g', -1, 64), err == nil
	case "restriction mode":
		// db/config.cc tri_mode_restriction_t::map
		switch strings.ToLower(v) {
		case "true", "1":
			return `"true"`, true
		case "false", "0":
			return `"false"`, true
		case "warn":
			return `"warn"`, true
		}
		return "", false
	case "tablets mode":
		// db/config.cc tablets_mode_t::map
		switch strings.ToLower(v) {
		case "disabled", "enabled", "enforced":
			return strconv.Quote(strings.ToLower(v)), true
		}
		return "", false
	}
	b, _ := json.Marshal(v)
	return string(b), true
}

// virtualUpdateError is db::virtual_table_update_exception as
// service/storage_proxy.cc reports it: a write failure with its cause.
func virtualUpdateError(cause string) error {
	return &engine.Error{Code: engine.CodeWriteFailure, Message: cause, Required: 1, Failures: 1}
}

func init() {
	// db/virtual_tables.cc db_config_table: one partition per option.
	vt := defineVirtual("system", "config", []vcol{{"name", "text"}, {"source", "text"}, {"type", "text"}, {"value", "text"}},
		func(s *Server) []map[string][]byte {
			rows := make([]map[string][]byte, 0, len(configOptions))
			for i := range configOptions {
				o := &configOptions[i]
				v, src := s.configValue(o)
				rows = append(rows, map[string][]byte{"name": encText(o.name), "source": encText(src), "type": encText(o.typ), "value": encText(v)})
			}
			return rows
		})
	vt.scylla = true
	vt.apply = func(s *Server, key []byte, cells map[string][]byte) error {
		return s.setConfig(string(key), cells)
	}
}
