package cql

import (
	"sort"
	"strings"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// alterTable builds the new definition of an ALTER TABLE with ADD, DROP or
// WITH, with cql3/statements/alter_table_statement.cc's checks. A dropped
// column's cells stay stored but are no longer read; the drop records the
// column's type and timestamp (schema.cc schema_builder::without_column), so
// that a re-added column hides the cells written at or before the drop.
func (ec *execCtx) alterTable(sch *engine.Schema, x *cqlparse.AlterTable) (*engine.SchemaChange, error) {
	ks, err := keyspaceOf(x.Keyspace, ec.keyspace)
	if err != nil {
		return nil, err
	}
	if isSystemKeyspace(ks) {
		return nil, engine.Errorf(engine.CodeUnauthorized, "Cannot ALTER system table %s.%s", ks, x.Table)
	}
	old := sch.Tables[ks][x.Table]
	if old == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "unconfigured table %s", x.Table)
	}
	if old.View != nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Cannot use ALTER TABLE on Materialized View. (Did you mean ALTER MATERIALIZED VIEW)?")
	}
	if err := checkDropNeeded(sch, old, x.Drop); err != nil {
		return nil, err
	}
	t := cloneTable(old)
	switch {
	case len(x.Add) > 0:
		err = addColumns(&t, x.Add, keyspaceTypes(sch, ks))
	case len(x.Drop) > 0:
		var ts int64
		if ts, err = ec.dropTimestamp(x); err == nil {
			err = dropColumns(&t, x.Drop, ts)
		}
	case len(x.Renames) > 0:
		if hasViews(sch, ks, t.Name) {
			return nil, engine.Errorf(engine.CodeInvalid, "Renaming a column of table %s.%s, which has materialized views, is not supported by the emulator", ks, t.Name)
		}
		err = renameColumns(&t, x.Renames)
	case x.TTL:
		err = alterTableTTL(&t, x)
	case x.Options != nil:
		if err := ec.checkTabletOptions(sch.Keyspaces[ks], x.Options); err != nil {
			return nil, err
		}
		for name, v := range x.Options {
			s, err := optionString(v)
			if err != nil {
				return nil, engine.Errorf(engine.CodeSyntaxError, "option %s: %v", name, err)
			}
			if s, err = tableOption(name, s); err != nil {
				return nil, err
			}
			t.Options[name] = s
		}
	}
	if err != nil {
		return nil, err
	}
	return &engine.SchemaChange{Kind: engine.AlterTable, Table: &t, KeyspaceName: ks, TableName: t.Name}, nil
}

// cloneTable copies a definition deeply enough to change it.
func cloneTable(old *engine.Table) engine.Table {
	t := *old
	t.Columns = append([]engine.Column(nil), old.Columns...)
	t.Dropped = append([]engine.DroppedColumn(nil), old.Dropped...)
	t.Indexes = append([]engine.Index(nil), old.Indexes...)
	t.Options = map[string]string{}
	for k, v := range old.Options {
		t.Options[k] = v
	}
	t.Tags = nil
	for k, v := range old.Tags {
		setTag(&t, k, v)
	}
	return t
}

func addColumns(t *engine.Table, add []cqlparse.ColumnDef, udts userTypes) error {
	hasCK := false
	for _, c := range t.Columns {
		hasCK = hasCK || c.Kind == engine.Clustering
	}
	counter := isCounterTable(t)
	for _, d := range add {
		for _, c := range t.Columns {
			if c.Name != d.Name {
				continue
			}
			if c.Kind.InPrimaryKey() {
				return engine.Errorf(engine.CodeInvalid, "Invalid column name %s because it conflicts with a PRIMARY KEY part", d.Name)
			}
			return engine.Errorf(engine.CodeInvalid, "Invalid column name %s because it conflicts with an existing column", d.Name)
		}
		if _, dropped := t.DroppedAt(d.Name); dropped && counter {
			// alter_table_statement.cc: see scylladb#7831.
			return engine.Errorf(engine.CodeInvalid, "Cannot re-add previously dropped counter column %s", d.Name)
		}
		if d.Static && t.Options["compact_storage"] == "true" {
			return engine.Errorf(engine.CodeInvalid, "Static columns are not allowed in COMPACT STORAGE tables")
		}
		if d.Static && !hasCK {
			return engine.Errorf(engine.CodeInvalid, "Static columns are only useful (and thus allowed) if the table has at least one clustering column")
		}
		dt, err := parseTypeIn(d.Type, udts)
		if err != nil {
			return engine.Errorf(engine.CodeInvalid, "column %s: %v", d.Name, err)
		}
		isCounter := dt == datatype.Counter
		switch {
		case isCounter && !counter:
			return engine.Errorf(engine.CodeConfigError, "Cannot add a counter column (%s) in a non counter column family", d.Name)
		case !isCounter && counter:
			return engine.Errorf(engine.CodeConfigError, "Cannot add a non counter column (%s) in a counter column family", d.Name)
		}
		typ := typeName(dt)
		if _, udt := dt.(*datatype.UserDefined); udt && strings.HasPrefix(strings.ToLower(d.Type), "frozen<") {
			typ = "frozen<" + typ + ">"
		}
		kind := engine.Regular
		if d.Static {
			kind = engine.Static
		}
		t.Columns = append(t.Columns, engine.Column{Name: d.Name, Type: typ, Kind: kind, Position: -1})
	}
	sortColumns(t)
	return nil
}

// dropTimestamp is the timestamp of ALTER TABLE ... DROP: USING TIMESTAMP
// when given, else now (alter_table_statement.cc drop_column,
// schema_builder::remove_column with api::new_timestamp()).
func (ec *execCtx) dropTimestamp(x *cqlparse.AlterTable) (int64, error) {
	ts, ok, err := ec.intTerm(x.DropTimestamp, "timestamp")
	if err != nil || ok {
		return ts, err
	}
	return time.Now().UnixMicro(), nil
}

// dropColumns removes columns, recording each one's type and the drop's
// timestamp; a later drop of the same name replaces an earlier record
// (schema.cc schema_builder::without_column keeps the newest).
func dropColumns(t *engine.Table, names []string, ts int64) error {
	for _, name := range names {
		i := -1
		for j, c := range t.Columns {
			if c.Name == name {
				i = j
			}
		}
		if i < 0 {
			return engine.Errorf(engine.CodeInvalid, "Column %s was not found in table %s", name, t.Name)
		}
		if t.Columns[i].Kind.InPrimaryKey() {
			return engine.Errorf(engine.CodeInvalid, "Cannot drop PRIMARY KEY part %s", name)
		}
		recordDrop(t, engine.DroppedColumn{Name: name, Type: t.Columns[i].Type, Timestamp: ts})
		t.Columns = append(t.Columns[:i], t.Columns[i+1:]...)
		if ttlColumn(t) == name {
			// alter_table_statement.cc: dropping the TTL column removes the tag.
			delete(t.Tags, ttlTagKey)
		}
	}
	return nil
}

func recordDrop(t *engine.Table, d engine.DroppedColumn) {
	for i, old := range t.Dropped {
		if old.Name == d.Name {
			if old.Timestamp < d.Timestamp {
				t.Dropped[i] = d
			}
			return
		}
	}
	t.Dropped = append(t.Dropped, d)
}

// sortColumns keeps a schema's column order: partition key, clustering,
// static, regular; keys by position, the others by name.
func sortColumns(t *engine.Table) {
	rank := map[engine.ColumnKind]int{engine.PartitionKey: 0, engine.Clustering: 1, engine.Static: 2, engine.Regular: 3}
	sort.SliceStable(t.Columns, func(i, j int) bool {
		a, b := t.Columns[i], t.Columns[j]
		if rank[a.Kind] != rank[b.Kind] {
			return rank[a.Kind] < rank[b.Kind]
		}
		if a.Kind.InPrimaryKey() {
			return a.Position < b.Position
		}
		return a.Name < b.Name
	})
}

// alterKeyspace is ALTER KEYSPACE as cql3/statements/alter_keyspace_statement.cc
// validates it: the options given replace the keyspace's, the others stay;
// a keyspace cannot move between vnodes and tablets. Changing the
// replication of a keyspace with tablets (a topology request that
// rebuilds its tablets, one DC by at most 1 at a time in ScyllaDB) is
// refused by the emulator; for vnodes the new replication takes effect at
// once, without moving data (ScyllaDB too leaves that to repair).
func (ec *execCtx) alterKeyspace(sch *engine.Schema, x *cqlparse.AlterKeyspace) (*engine.SchemaChange, error) {
	if isSystemKeyspace(x.Keyspace) {
		return nil, engine.Errorf(engine.CodeInvalid, "Cannot alter system keyspace")
	}
	old := sch.Keyspaces[x.Keyspace]
	if old == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Unknown keyspace %s", x.Keyspace)
	}
	opts := map[string]cqlparse.Term{}
	for k, v := range x.Options {
		opts[k] = v
	}
	replChanged := opts["replication"].Kind != 0
	ks := *old
	if replChanged || opts["tablets"].Kind != 0 {
		if !replChanged {
			// keyspaceDef needs the replication; keep the current one.
			opts["replication"] = replicationTerm(old.Replication)
		}
		if opts["tablets"].Kind == 0 {
			opts["tablets"] = tabletsTerm(old.TabletsEnabled)
		}
		nk, err := ec.keyspaceDef(&cqlparse.CreateKeyspace{Keyspace: x.Keyspace, Options: opts})
		if err != nil {
			return nil, err
		}
		if nk.TabletsEnabled != old.TabletsEnabled {
			return nil, engine.Errorf(engine.CodeInvalid, "Cannot alter replication strategy vnode/tablets flavor")
		}
		if old.TabletsEnabled && !sameReplication(old.Replication, nk.Replication) {
			return nil, engine.Errorf(engine.CodeInvalid, "Changing the replication of keyspace %s, which uses tablets, is not supported by the emulator", x.Keyspace)
		}
		ks.Replication = nk.Replication
		if _, set := x.Options["tablets"]; set {
			// ks_prop_defs.cc get_initial_tablets: the option given
			// replaces the count ({'enabled': true} alone: 0); without
			// it the keyspace keeps its own.
			ks.Tablets = nk.Tablets
		}
		if _, set := x.Options["durable_writes"]; set {
			ks.DurableWrites = nk.DurableWrites
		}
	} else if _, set := x.Options["durable_writes"]; set {
		nk, err := ec.keyspaceDef(&cqlparse.CreateKeyspace{Keyspace: x.Keyspace, Options: map[string]cqlparse.Term{
			"replication":    replicationTerm(old.Replication),
			"durable_writes": x.Options["durable_writes"],
			"tablets":        tabletsTerm(old.TabletsEnabled),
		}})
		if err != nil {
			return nil, err
		}
		ks.DurableWrites = nk.DurableWrites
	} else {
		return nil, engine.Errorf(engine.CodeSyntaxError, "ALTER KEYSPACE %s: no option to change", x.Keyspace)
	}
	return &engine.SchemaChange{Kind: engine.AlterKeyspace, Keyspace: &ks, KeyspaceName: ks.Name}, nil
}

func replicationTerm(repl map[string]string) cqlparse.Term {
	t := cqlparse.Term{Kind: cqlparse.TermMap}
	for k, v := range repl {
		t.Keys = append(t.Keys, cqlparse.Term{Kind: cqlparse.TermString, Text: k})
		t.Values = append(t.Values, cqlparse.Term{Kind: cqlparse.TermString, Text: v})
	}
	return t
}

func tabletsTerm(enabled bool) cqlparse.Term {
	v := "false"
	if enabled {
		v = "true"
	}
	return cqlparse.Term{Kind: cqlparse.TermMap, Keys: []cqlparse.Term{{Kind: cqlparse.TermString, Text: "enabled"}}, Values: []cqlparse.Term{{Kind: cqlparse.TermString, Text: v}}}
}

func sameReplication(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// renameColumns is alter_table_statement.cc type::rename with
// validate_column_rename's checks: only primary key columns are renamed
// (their values live in the keys, so only the definition changes).
func renameColumns(t *engine.Table, renames [][2]string) error {
	for _, r := range renames {
		from, to := r[0], r[1]
		i := -1
		for j, c := range t.Columns {
			switch c.Name {
			case from:
				i = j
			case to:
				return engine.Errorf(engine.CodeInvalid, "Cannot rename column %s to %s in table %s; another column of that name already exist", from, to, t.Name)
			}
		}
		switch {
		case i < 0:
			return engine.Errorf(engine.CodeInvalid, "Cannot rename unknown column %s in table %s", from, t.Name)
		case !t.Columns[i].Kind.InPrimaryKey():
			return engine.Errorf(engine.CodeInvalid, "Cannot rename non PRIMARY KEY part %s", from)
		}
		for _, ix := range t.Indexes {
			if target := ix.Options["target"]; target == from || strings.Contains(target, "("+from+")") || strings.Contains(target, `"`+from+`"`) {
				return engine.Errorf(engine.CodeInvalid, "Cannot rename column %s because it has dependent secondary indexes (%s)", from, ix.Name)
			}
		}
		t.Columns[i].Name = to
	}
	return nil
}

func hasViews(sch *engine.Schema, ks, table string) bool {
	for _, v := range sch.Tables[ks] {
		if v.View != nil && v.View.BaseTable == table {
			return true
		}
	}
	return false
}
