package cql

import (
	"regexp"
	"sort"
	"strings"

	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// validKeyspaceName is create_keyspace_statement.cc's check: word
// characters only, at most schema::NAME_LENGTH (48) of them.
var validKeyspaceName = regexp.MustCompile(`^\w+$`)

func checkKeyspaceName(name string) error {
	if !validKeyspaceName.MatchString(name) {
		return engine.Errorf(engine.CodeInvalid, "%q is not a valid keyspace name", name)
	}
	if len(name) > 48 {
		return engine.Errorf(engine.CodeInvalid, "Keyspace names shouldn't be more than 48 characters long (got %q)", name)
	}
	return nil
}

// checkStorageOptions is ks_prop_defs::get_storage_options with
// data_dictionary/data_dictionary.cc storage_options::from_map, as
// create_keyspace_statement.cc and alter_keyspace_statement.cc validate
// it: LOCAL takes no options, S3 exactly bucket and endpoint; any other
// type is unknown. Only LOCAL storage is available: S3 needs the
// experimental KEYSPACE_STORAGE_OPTIONS feature, which is off by default.
func checkStorageOptions(v cqlparse.Term) error {
	m, err := termStringMap(v)
	if err != nil {
		return engine.Errorf(engine.CodeSyntaxError, "storage: %v", err)
	}
	typ, ok := m["type"]
	if !ok {
		return nil
	}
	delete(m, "type")
	switch typ {
	case "LOCAL":
		if len(m) > 0 {
			return engine.Errorf(engine.CodeInvalid, "Local storage does not accept any custom options")
		}
		return nil
	case "S3":
		for _, k := range []string{"bucket", "endpoint"} {
			if _, ok := m[k]; !ok {
				return engine.Errorf(engine.CodeInvalid, "Missing S3 option: %s", k)
			}
		}
		if len(m) > 2 {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return engine.Errorf(engine.CodeInvalid, "Extraneous options for S3: %s; allowed: bucket,endpoint", strings.Join(keys, ","))
		}
		// sstables/sstables_manager.cc validate_new_keyspace_storage_options
		return engine.Errorf(engine.CodeInvalid, "Keyspace storage options not supported in the cluster")
	}
	return engine.Errorf(engine.CodeInvalid, "Unknown storage type: %s", typ)
}

// defaultReplicationClass reports whether a keyspace without a replication
// class gets NetworkTopologyStrategy: from 2025.4 (ks_prop_defs.cc
// set_default_replication_strategy_class_option; the grammar's WITH became
// optional with it); before, it is "Missing mandatory replication strategy
// class".
func (ec *execCtx) defaultReplicationClass() bool {
	return versionAtLeast(ec.s.b.Local().ScyllaVersion, 2025, 4)
}

// racksPerDC counts the racks of each datacenter's live members: a
// NetworkTopologyStrategy keyspace given no factor gets one replica per
// rack in every DC (ks_prop_defs.cc prepare_options, from 2025.4).
func (ec *execCtx) racksPerDC() map[string]int {
	racks := map[string]map[string]bool{}
	for _, n := range append([]engine.NodeInfo{ec.s.b.Local()}, ec.s.b.Peers()...) {
		if n.DC == "" || n.State == engine.StateLeft {
			continue
		}
		if racks[n.DC] == nil {
			racks[n.DC] = map[string]bool{}
		}
		racks[n.DC][n.Rack] = true
	}
	out := map[string]int{}
	for dc, rs := range racks {
		out[dc] = len(rs)
	}
	return out
}

// unknownDCError is NetworkTopologyStrategy's refusal of an option that is
// no datacenter of the cluster (locator/network_topology_strategy.cc
// validate_options from 2025.4, abstract_replication_strategy.cc
// validate_replication_strategy before).
func (ec *execCtx) unknownDCError(dc, keyspace string) error {
	if versionAtLeast(ec.s.b.Local().ScyllaVersion, 2025, 4) {
		return engine.Errorf(engine.CodeConfigError, "Unrecognized strategy option {%s} passed to NetworkTopologyStrategy", dc)
	}
	return engine.Errorf(engine.CodeConfigError, "Unrecognized strategy option {%s} passed to %s for keyspace %s", dc, ntsStrategy, keyspace)
}

// checkTabletOptions is cf_prop_defs.cc validate for a table's tablets
// option: only in a keyspace with tablets, and only once the cluster has
// TABLET_OPTIONS (2025.4).
func (ec *execCtx) checkTabletOptions(ks *engine.Keyspace, opts map[string]cqlparse.Term) error {
	if _, ok := opts["tablets"]; !ok {
		return nil
	}
	if ks == nil || !ks.TabletsEnabled {
		return engine.Errorf(engine.CodeConfigError, "tablet options cannot be used when tablets are disabled for the keyspace")
	}
	if !hasFeature(ec.s.b.Local().ScyllaVersion, "TABLET_OPTIONS") {
		return engine.Errorf(engine.CodeConfigError, "tablet options cannot be used until all nodes in the cluster enable this feature")
	}
	return nil
}
