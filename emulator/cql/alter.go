package cql

import (
	"sort"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// alterTable builds the new definition of an ALTER TABLE with ADD, DROP or
// WITH, with cql3/statements/alter_table_statement.cc's checks. A dropped
// column's cells stay stored but are no longer read; re-adding a dropped
// name is refused (ScyllaDB re-adds it and hides the older cells by their
// timestamps, which the emulator does not track per column).
func (ec *execCtx) alterTable(sch *engine.Schema, x *cqlparse.AlterTable) (*engine.SchemaChange, error) {
	ks := x.Keyspace
	if ks == "" {
		ks = ec.keyspace
	}
	if ks == "" {
		return nil, engine.Errorf(engine.CodeInvalid, "No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename")
	}
	if isSystemKeyspace(ks) {
		return nil, engine.Errorf(engine.CodeUnauthorized, "Cannot ALTER system table %s.%s", ks, x.Table)
	}
	old := sch.Tables[ks][x.Table]
	if old == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "unconfigured table %s", x.Table)
	}
	t := *old
	t.Columns = append([]engine.Column(nil), old.Columns...)
	t.Dropped = append([]string(nil), old.Dropped...)
	t.Options = map[string]string{}
	for k, v := range old.Options {
		t.Options[k] = v
	}
	var err error
	switch {
	case len(x.Add) > 0:
		err = addColumns(&t, x.Add, keyspaceTypes(sch, ks))
	case len(x.Drop) > 0:
		err = dropColumns(&t, x.Drop)
	case x.Options != nil:
		for name, v := range x.Options {
			s, err := optionString(v)
			if err != nil {
				return nil, engine.Errorf(engine.CodeSyntaxError, "option %s: %v", name, err)
			}
			t.Options[name] = s
		}
	}
	if err != nil {
		return nil, err
	}
	return &engine.SchemaChange{Kind: engine.AlterTable, Table: &t, KeyspaceName: ks, TableName: t.Name}, nil
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
		for _, name := range t.Dropped {
			if name == d.Name {
				return engine.Errorf(engine.CodeInvalid, "Re-adding the dropped column %s is not supported by the emulator", d.Name)
			}
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

func dropColumns(t *engine.Table, names []string) error {
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
		t.Columns = append(t.Columns[:i], t.Columns[i+1:]...)
		t.Dropped = append(t.Dropped, name)
	}
	return nil
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
