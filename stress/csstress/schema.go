package csstress

import (
	"fmt"
	"strings"

	"github.com/elasticity-dev/elasticity/stress"
)

// Schema is the CQL cassandra-stress's SettingsSchema.createKeySpacesNative
// runs: the keyspace, standard1 (key blob PRIMARY KEY and one blob column
// per -col name) and, for counter operations, counter1 (counter columns),
// each WITH compression (empty map = none, as cassandra-stress's default)
// and the -schema compaction. Without -schema replication(...) the keyspace
// is the scenario's: NetworkTopologyStrategy in its DC with its RF and
// tablets.
func (m *Model) Schema(t stress.SchemaTarget) ([]string, error) {
	ks, err := m.keyspaceStatement(t)
	if err != nil {
		return nil, err
	}
	out := []string{ks, m.tableStatement("standard1", "blob")}
	if m.hasCounters() {
		out = append(out, m.tableStatement("counter1", "counter"))
	}
	return out, nil
}

// keyspaceStatement mirrors createKeyspaceStatementCQL3 with the scenario's
// placement where -schema does not say.
func (m *Model) keyspaceStatement(t stress.SchemaTarget) (string, error) {
	sc := m.s.schema
	strategy := strings.TrimPrefix(sc.strategy, "org.apache.cassandra.locator.")
	nts := strategy == "" || strategy == "NetworkTopologyStrategy"
	var repl []string
	switch {
	case strategy == "":
		if t.DC == "" || t.RF < 1 {
			return "", fmt.Errorf("stress_cmd: keyspace %s: the scenario's data centre and replication factor are unknown", m.Keyspace())
		}
		repl = []string{"'class': 'NetworkTopologyStrategy'", fmt.Sprintf("'%s': %d", t.DC, t.RF)}
	default:
		repl = []string{fmt.Sprintf("'class': '%s'", strategy)}
		opts := sc.replication
		if len(opts) == 0 {
			opts = [][2]string{{"replication_factor", "1"}} // OptionReplication: factor= defaults to 1
		}
		for _, kv := range opts {
			if nts && kv[0] == "replication_factor" && t.DC != "" {
				// A NetworkTopologyStrategy replication_factor is every DC's
				// (ScyllaDB expands it); the scenario's cluster has one DC.
				repl = append(repl, fmt.Sprintf("'%s': %s", t.DC, kv[1]))
				continue
			}
			repl = append(repl, fmt.Sprintf("'%s': '%s'", kv[0], kv[1]))
		}
	}
	st := fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS %q WITH replication = {%s} AND durable_writes = true", m.Keyspace(), strings.Join(repl, ", "))
	switch {
	case !nts:
	case m.hasCounters():
		// ScyllaDB before 2026.1 refuses counters in a tablet keyspace
		// ("Counters are not yet supported with tablets"), whatever the
		// scenario's tablets; as the scylla-bench form does.
		st += stress.TabletsClause(-1)
	default:
		st += stress.TabletsClause(t.Tablets)
	}
	return st, nil
}

// tableStatement mirrors createStandard1StatementCQL3 and createCounter1StatementCQL3.
func (m *Model) tableStatement(table, typ string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %q.%q (key blob PRIMARY KEY", m.Keyspace(), table)
	for _, c := range m.s.colNames {
		fmt.Fprintf(&b, ", %q %s", c, typ)
	}
	b.WriteString(") WITH compression = {")
	if c := m.s.schema.compression; c != "" {
		fmt.Fprintf(&b, "'sstable_compression': '%s'", c)
	}
	b.WriteString("}")
	if c := m.s.schema.compaction; c != "" {
		fmt.Fprintf(&b, " AND compaction = {'class': '%s'", c)
		for _, kv := range m.s.schema.compactionKV {
			fmt.Fprintf(&b, ", '%s': '%s'", kv[0], kv[1])
		}
		b.WriteString("}")
	}
	return b.String()
}
