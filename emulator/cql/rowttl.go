package cql

import (
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// ttlTagKey is alternator/executor.cc TTL_TAG_KEY: the table tag naming
// the per-row TTL column, shared by Alternator's TTL and CQL's row TTL.
const ttlTagKey = "system:ttl_attribute"

// rowTTLTypes are the types a TTL column may have: timestamp holds
// milliseconds since the epoch, bigint and int seconds.
var rowTTLTypes = map[string]bool{"timestamp": true, "bigint": true, "int": true}

// ttlColumn is the table's per-row TTL column, or "".
func ttlColumn(t *engine.Table) string { return t.Tags[ttlTagKey] }

// createTableTTL applies CREATE TABLE's `name type TTL` (create_table_statement.cc
// raw_statement::add_definition and prepare): one TTL column, of type
// timestamp, bigint or int, neither a key column nor static.
func createTableTTL(t *engine.Table, x *cqlparse.CreateTable) error {
	var ttl *cqlparse.ColumnDef
	for i, c := range x.Columns {
		if !c.TTL {
			continue
		}
		if ttl != nil {
			return engine.Errorf(engine.CodeInvalid, "Cannot have more than one TTL column in a table. Saw %s and %s", ttl.Name, c.Name)
		}
		if !rowTTLTypes[c.Type] {
			return engine.Errorf(engine.CodeInvalid, "TTL column '%s' must be of type timestamp, bigint or int, can't be %s", c.Name, c.Type)
		}
		ttl = &x.Columns[i]
	}
	if ttl == nil {
		return nil
	}
	for _, k := range append(append([]string(nil), x.PartitionKey...), x.Clustering...) {
		if k == ttl.Name {
			return engine.Errorf(engine.CodeInvalid, "TTL column %s cannot be part of the PRIMARY KEY", k)
		}
	}
	if ttl.Static {
		return engine.Errorf(engine.CodeInvalid, "TTL column %s cannot be a static column", ttl.Name)
	}
	setTag(t, ttlTagKey, ttl.Name)
	return nil
}

// alterTableTTL is alter_table_statement.cc's type::ttl: TTL col sets the
// tag, TTL NULL removes it.
func alterTableTTL(t *engine.Table, x *cqlparse.AlterTable) error {
	old := ttlColumn(t)
	if x.TTLColumn == "" {
		if old == "" {
			return engine.Errorf(engine.CodeInvalid, "Cannot unset TTL column, table %s.%s does not have a TTL column set", t.Keyspace, t.Name)
		}
		delete(t.Tags, ttlTagKey)
		return nil
	}
	var col *engine.Column
	for i := range t.Columns {
		if t.Columns[i].Name == x.TTLColumn {
			col = &t.Columns[i]
		}
	}
	switch {
	case col == nil:
		return engine.Errorf(engine.CodeInvalid, "Column '%s' does not exist in table %s.%s", x.TTLColumn, t.Keyspace, t.Name)
	case !rowTTLTypes[col.Type]:
		return engine.Errorf(engine.CodeInvalid, "TTL column %s must be of type timestamp, bigint or int, can't be %s", col.Name, col.Type)
	case col.Kind.InPrimaryKey():
		return engine.Errorf(engine.CodeInvalid, "Cannot use a primary key column %s as a TTL column", col.Name)
	case col.Kind == engine.Static:
		return engine.Errorf(engine.CodeInvalid, "Cannot use a static column %s as a TTL column", col.Name)
	case old != "":
		return engine.Errorf(engine.CodeInvalid, "Cannot set TTL column, table %s.%s already has a TTL column defined: %s", t.Keyspace, t.Name, old)
	}
	setTag(t, ttlTagKey, col.Name)
	return nil
}

func setTag(t *engine.Table, key, value string) {
	if t.Tags == nil {
		t.Tags = map[string]string{}
	}
	t.Tags[key] = value
}
