package cql

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

func (ec *execCtx) use(st *cqlparse.Use) (message.Message, error) {
	if !isSystemKeyspace(st.Keyspace) {
		sch := ec.s.b.Schema()
		if sch == nil || sch.Keyspaces[st.Keyspace] == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Keyspace '%s' does not exist", st.Keyspace)
		}
	}
	if ec.c != nil {
		ec.c.setKeyspace(st.Keyspace)
	}
	return &message.SetKeyspaceResult{Keyspace: st.Keyspace}, nil
}

func (ec *execCtx) truncate(st *cqlparse.Truncate) (message.Message, error) {
	ti, err := ec.s.resolveTable(ec.keyspace, st.Keyspace, st.Table)
	if err == nil && ti.def != nil && ti.def.View != nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Cannot TRUNCATE materialized view directly; must truncate base table instead") // truncate_statement.cc
	}
	if ti, err = ec.writableTable(st.Keyspace, st.Table); err != nil {
		return nil, err
	}
	ctx := ec.context(0)
	defer ctx.stop()
	if err := ec.s.b.Truncate(ctx, ti.keyspace, ti.name); err != nil {
		return nil, err
	}
	return &message.VoidResult{}, nil
}

const (
	simpleStrategy = "org.apache.cassandra.locator.SimpleStrategy"
	ntsStrategy    = "org.apache.cassandra.locator.NetworkTopologyStrategy"
)

func (ec *execCtx) ddl(st cqlparse.Statement) (message.Message, error) {
	ch, err := ec.schemaChange(st)
	if err != nil {
		return nil, err
	}
	if ch == nil { // IF [NOT] EXISTS made it a no-op
		return &message.VoidResult{}, nil
	}
	ctx := ec.context(0)
	defer ctx.stop()
	if _, err := ec.s.b.ApplySchema(ctx, *ch); err != nil {
		var ee *engine.Error
		if errors.As(err, &ee) && ((ee.Code == engine.CodeAlreadyExists && ch.IfNotExists) || ch.IfExists) {
			return &message.VoidResult{}, nil
		}
		return nil, err
	}
	if x, ok := st.(*cqlparse.AlterTable); ok && len(x.Add) > 0 {
		if err := ec.addToViews(ctx, ch.Table, x.Add); err != nil {
			return nil, err
		}
	}
	ct, target, ks, obj := schemaChangeParts(*ch)
	return &message.SchemaChangeResult{ChangeType: ct, Target: target, Keyspace: ks, Object: obj, Arguments: schemaChangeArgs(*ch)}, nil
}

// schemaChange validates a DDL statement against the current schema and
// builds the engine change; nil means nothing to do.
func (ec *execCtx) schemaChange(st cqlparse.Statement) (*engine.SchemaChange, error) {
	sch := ec.s.b.Schema()
	if sch == nil {
		sch = &engine.Schema{}
	}
	switch x := st.(type) {
	case *cqlparse.CreateKeyspace:
		if err := checkKeyspaceName(x.Keyspace); err != nil {
			return nil, err
		}
		if isSystemKeyspace(x.Keyspace) || sch.Keyspaces[x.Keyspace] != nil {
			if x.IfNotExists {
				return nil, nil
			}
			return nil, &engine.Error{Code: engine.CodeAlreadyExists, Message: "Keyspace '" + x.Keyspace + "' already exists", Keyspace: x.Keyspace}
		}
		ks, err := ec.keyspaceDef(x)
		if err != nil {
			return nil, err
		}
		return &engine.SchemaChange{Kind: engine.CreateKeyspace, IfNotExists: x.IfNotExists, Keyspace: ks, KeyspaceName: ks.Name}, nil
	case *cqlparse.DropKeyspace:
		if isSystemKeyspace(x.Keyspace) {
			return nil, engine.Errorf(engine.CodeUnauthorized, "Cannot DROP system keyspace %s", x.Keyspace)
		}
		if sch.Keyspaces[x.Keyspace] == nil {
			if x.IfExists {
				return nil, nil
			}
			return nil, engine.Errorf(engine.CodeConfigError, "Cannot drop non existing keyspace '%s'.", x.Keyspace)
		}
		return &engine.SchemaChange{Kind: engine.DropKeyspace, IfExists: x.IfExists, KeyspaceName: x.Keyspace}, nil
	case *cqlparse.CreateTable:
		ks, err := keyspaceOf(x.Keyspace, ec.keyspace)
		if err != nil {
			return nil, err
		}
		if isSystemKeyspace(ks) {
			return nil, engine.Errorf(engine.CodeUnauthorized, "Cannot create tables in system keyspace %s", ks)
		}
		if sch.Keyspaces[ks] == nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Keyspace '%s' doesn't exist", ks)
		}
		if sch.Tables[ks][x.Table] != nil {
			if x.IfNotExists {
				return nil, nil
			}
			return nil, &engine.Error{Code: engine.CodeAlreadyExists, Message: "Table '" + ks + "." + x.Table + "' already exists", Keyspace: ks, Table: x.Table}
		}
		if err := ec.checkTabletOptions(sch.Keyspaces[ks], x.Options); err != nil {
			return nil, err
		}
		t, err := tableDef(ks, x, keyspaceTypes(sch, ks))
		if err == nil {
			err = checkCounterTable(sch.Keyspaces[ks], x, t, hasFeature(ec.s.b.Local().ScyllaVersion, "COUNTERS_WITH_TABLETS"))
		}
		if err != nil {
			return nil, err
		}
		return &engine.SchemaChange{Kind: engine.CreateTable, IfNotExists: x.IfNotExists, Table: t, KeyspaceName: ks, TableName: t.Name}, nil
	case *cqlparse.CreateType, *cqlparse.DropType:
		return ec.typeChange(sch, st)
	case *cqlparse.AlterTable:
		return ec.alterTable(sch, x)
	case *cqlparse.AlterKeyspace:
		return ec.alterKeyspace(sch, x)
	case *cqlparse.CreateIndex:
		return ec.createIndex(sch, x)
	case *cqlparse.DropIndex:
		return ec.dropIndex(sch, x)
	case *cqlparse.CreateView:
		return ec.createView(sch, x)
	case *cqlparse.DropView:
		return ec.dropView(sch, x)
	case *cqlparse.AlterView:
		return ec.alterView(sch, x)
	case *cqlparse.FunctionStmt:
		return ec.functionChange(sch, x)
	case *cqlparse.DropTable:
		ks, err := keyspaceOf(x.Keyspace, ec.keyspace)
		if err != nil {
			return nil, err
		}
		if isSystemKeyspace(ks) {
			return nil, engine.Errorf(engine.CodeUnauthorized, "Cannot DROP system table %s.%s", ks, x.Table)
		}
		if err := checkDropTable(sch, ks, x.Table); err != nil {
			return nil, err
		}
		if sch.Tables[ks][x.Table] == nil {
			if x.IfExists {
				return nil, nil
			}
			return nil, engine.Errorf(engine.CodeInvalid, "Table '%s.%s' doesn't exist", ks, x.Table)
		}
		return &engine.SchemaChange{Kind: engine.DropTable, IfExists: x.IfExists, KeyspaceName: ks, TableName: x.Table}, nil
	}
	return nil, engine.Errorf(engine.CodeSyntaxError, "%s is not a schema statement", st.Name())
}

// keyspaceTypes resolves the user-defined types of a keyspace.
func keyspaceTypes(sch *engine.Schema, ks string) userTypes {
	return func(name string) *engine.UserType {
		if sch == nil {
			return nil
		}
		// ks.name: only the statement's own keyspace's types resolve
		// (cql3/cql3_type.cc refuses a user type of another keyspace).
		if q, n, ok := strings.Cut(name, "."); ok {
			if q != ks {
				return nil
			}
			name = n
		}
		return sch.Types[ks][name]
	}
}

// typeChange validates CREATE TYPE and DROP TYPE as
// cql3/statements/create_type_statement.cc and drop_type_statement.cc do.
func (ec *execCtx) typeChange(sch *engine.Schema, st cqlparse.Statement) (*engine.SchemaChange, error) {
	var ks, name string
	switch x := st.(type) {
	case *cqlparse.CreateType:
		ks, name = x.Keyspace, x.Type
	case *cqlparse.DropType:
		ks, name = x.Keyspace, x.Type
	}
	ks, err := keyspaceOf(ks, ec.keyspace)
	if err != nil {
		return nil, err
	}
	if sch == nil || sch.Keyspaces[ks] == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Keyspace %s doesn't exist", ks)
	}
	x, create := st.(*cqlparse.CreateType)
	if !create {
		d := st.(*cqlparse.DropType)
		if sch.Types[ks][name] == nil {
			if d.IfExists {
				return nil, nil
			}
			return nil, engine.Errorf(engine.CodeInvalid, "No user type named %s exists.", name)
		}
		for _, t := range sch.Tables[ks] {
			for _, c := range t.Columns {
				if strings.Contains(c.Type, name) {
					if dt, err := parseTypeIn(c.Type, keyspaceTypes(sch, ks)); err == nil && usesType(dt, name) {
						return nil, engine.Errorf(engine.CodeInvalid, "Cannot drop user type %s.%s as it is still used by table %s.%s", ks, name, ks, t.Name)
					}
				}
			}
		}
		return &engine.SchemaChange{Kind: engine.DropType, IfExists: d.IfExists, KeyspaceName: ks, TableName: name}, nil
	}
	if sch.Types[ks][name] != nil {
		if x.IfNotExists {
			return nil, nil
		}
		return nil, engine.Errorf(engine.CodeInvalid, "A user type of name %s.%s already exists", ks, name)
	}
	ut := &engine.UserType{Keyspace: ks, Name: name}
	seen := map[string]bool{}
	for _, f := range x.Fields {
		if seen[f.Name] {
			return nil, engine.Errorf(engine.CodeInvalid, "Duplicate field name %s in type %s", f.Name, name)
		}
		seen[f.Name] = true
		dt, err := parseTypeIn(f.Type, keyspaceTypes(sch, ks))
		if err != nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Unknown type %s", f.Type)
		}
		if dt == datatype.Counter {
			return nil, engine.Errorf(engine.CodeInvalid, "A user type cannot contain counters")
		}
		typ := typeName(dt)
		if _, udt := dt.(*datatype.UserDefined); udt || strings.HasPrefix(strings.ToLower(f.Type), "frozen<") {
			typ = "frozen<" + typ + ">"
		}
		ut.FieldNames = append(ut.FieldNames, f.Name)
		ut.FieldTypes = append(ut.FieldTypes, typ)
	}
	return &engine.SchemaChange{Kind: engine.CreateType, IfNotExists: x.IfNotExists, Type: ut, KeyspaceName: ks, TableName: name}, nil
}

// usesType reports whether a type is, or contains, the UDT name.
func usesType(dt datatype.DataType, name string) bool {
	switch t := dt.(type) {
	case *datatype.UserDefined:
		if t.Name == name {
			return true
		}
		for _, f := range t.FieldTypes {
			if usesType(f, name) {
				return true
			}
		}
	case *datatype.List:
		return usesType(t.ElementType, name)
	case *datatype.Set:
		return usesType(t.ElementType, name)
	case *datatype.Map:
		return usesType(t.KeyType, name) || usesType(t.ValueType, name)
	case *datatype.Tuple:
		for _, f := range t.FieldTypes {
			if usesType(f, name) {
				return true
			}
		}
	}
	return false
}

func (ec *execCtx) keyspaceDef(x *cqlparse.CreateKeyspace) (*engine.Keyspace, error) {
	ks := &engine.Keyspace{Name: x.Keyspace, DurableWrites: true}
	for name, v := range x.Options {
		switch name {
		case "replication":
			repl, err := termStringMap(v)
			if err != nil {
				return nil, engine.Errorf(engine.CodeSyntaxError, "replication: %v", err)
			}
			if ks.Replication, err = ec.normalizeReplication(repl, x.Keyspace); err != nil {
				return nil, err
			}
		case "storage":
			if err := checkStorageOptions(v); err != nil {
				return nil, err
			}
		case "durable_writes":
			b, err := termBool(v)
			if err != nil {
				return nil, engine.Errorf(engine.CodeSyntaxError, "durable_writes: %v", err)
			}
			ks.DurableWrites = b
		case "tablets":
			m, err := termStringMap(v)
			if err != nil {
				return nil, engine.Errorf(engine.CodeSyntaxError, "tablets: %v", err)
			}
			ks.TabletsEnabled = true
			for k, val := range m {
				switch k {
				case "enabled":
					switch strings.ToLower(val) {
					case "true":
						ks.TabletsEnabled = true
					case "false":
						ks.TabletsEnabled = false
					default:
						return nil, engine.Errorf(engine.CodeConfigError, "Invalid value for tablets 'enabled': %q", val)
					}
				case "initial":
					n, err := strconv.Atoi(val)
					if err != nil || n < 0 || n > 1<<20 {
						return nil, engine.Errorf(engine.CodeConfigError, "Invalid value for tablets 'initial': %q", val)
					}
					ks.Tablets = n
				default:
					return nil, engine.Errorf(engine.CodeConfigError, "Unrecognized tablets option %q", k)
				}
			}
			if !ks.TabletsEnabled {
				ks.Tablets = 0
			}
		default:
			return nil, engine.Errorf(engine.CodeSyntaxError, "Unknown property '%s'", name)
		}
	}
	if ks.Replication == nil {
		if !ec.defaultReplicationClass() {
			return nil, engine.Errorf(engine.CodeConfigError, "Missing mandatory replication strategy class")
		}
		var err error
		if ks.Replication, err = ec.normalizeReplication(map[string]string{}, x.Keyspace); err != nil {
			return nil, err
		}
	}
	if _, set := x.Options["tablets"]; !set && ks.Replication["class"] == ntsStrategy {
		// Like ScyllaDB 2025.x: NetworkTopologyStrategy keyspaces use
		// tablets unless told otherwise; 0 lets the engine pick the count.
		ks.TabletsEnabled = true
	}
	if ks.TabletsEnabled && ks.Replication["class"] != ntsStrategy {
		return nil, engine.Errorf(engine.CodeConfigError, "Tablets are only supported with NetworkTopologyStrategy")
	}
	return ks, nil
}

func (ec *execCtx) normalizeReplication(repl map[string]string, keyspace string) (map[string]string, error) {
	class := repl["class"]
	if class == "" && ec.defaultReplicationClass() {
		class = ntsStrategy
	}
	switch strings.TrimPrefix(class, "org.apache.cassandra.locator.") {
	case "SimpleStrategy":
		class = simpleStrategy
	case "NetworkTopologyStrategy":
		class = ntsStrategy
	case "":
		return nil, engine.Errorf(engine.CodeConfigError, "Missing mandatory replication strategy class")
	default:
		return nil, engine.Errorf(engine.CodeConfigError, "Unable to find replication strategy class '%s'", class)
	}
	out := map[string]string{"class": class}
	for k, v := range repl {
		if k == "class" {
			continue
		}
		if n, err := strconv.Atoi(v); err != nil || n < 0 {
			return nil, engine.Errorf(engine.CodeConfigError, "Replication factor must be non-negative integer; found %s", v)
		}
		if class == simpleStrategy && k != "replication_factor" {
			return nil, engine.Errorf(engine.CodeConfigError, "Unrecognized strategy option {%s} passed to SimpleStrategy", k)
		}
		out[k] = v
	}
	if class == simpleStrategy && out["replication_factor"] == "" {
		return nil, engine.Errorf(engine.CodeConfigError, "SimpleStrategy requires a replication_factor strategy option.")
	}
	if class == ntsStrategy {
		if err := ec.checkDatacenters(out, keyspace); err != nil {
			return nil, err
		}
	}
	if rf, ok := out["replication_factor"]; ok && class == ntsStrategy {
		// Like ScyllaDB: expand replication_factor to every known DC.
		delete(out, "replication_factor")
		for _, dc := range ec.datacenters() {
			if _, set := out[dc]; !set {
				out[dc] = rf
			}
		}
	}
	return out, nil
}

// checkDatacenters refuses NetworkTopologyStrategy options that name no
// datacenter of the cluster, and from 2025.4 gives a keyspace that names
// none one replica per rack in each DC.
func (ec *execCtx) checkDatacenters(opts map[string]string, keyspace string) error {
	racks := ec.racksPerDC()
	for k := range opts {
		if _, dc := racks[k]; !dc && k != "class" && k != "replication_factor" {
			return ec.unknownDCError(k, keyspace)
		}
	}
	if len(opts) == 1 && ec.defaultReplicationClass() {
		for dc, n := range racks {
			opts[dc] = strconv.Itoa(n)
		}
	}
	return nil
}

func (ec *execCtx) datacenters() []string {
	seen := map[string]bool{}
	var dcs []string
	add := func(n engine.NodeInfo) {
		if n.DC != "" && !seen[n.DC] && n.State != engine.StateLeft {
			seen[n.DC] = true
			dcs = append(dcs, n.DC)
		}
	}
	add(ec.s.b.Local())
	for _, p := range ec.s.b.Peers() {
		add(p)
	}
	sort.Strings(dcs)
	return dcs
}

// tableDef validates CREATE TABLE and builds the engine table.
func tableDef(ks string, x *cqlparse.CreateTable, udts userTypes) (*engine.Table, error) {
	defs := map[string]string{}
	for _, c := range x.Columns {
		if _, dup := defs[c.Name]; dup {
			return nil, engine.Errorf(engine.CodeInvalid, "Multiple definition of identifier %s", c.Name)
		}
		dt, err := parseTypeIn(c.Type, udts)
		if err != nil {
			return nil, engine.Errorf(engine.CodeInvalid, "column %s: %v", c.Name, err)
		}
		defs[c.Name] = typeName(dt)
		if _, tuple := dt.(*datatype.Tuple); !tuple && strings.HasPrefix(strings.ToLower(c.Type), "frozen<") {
			// A frozen collection or UDT keeps "frozen<>" in its schema
			// type (system_schema.columns, DESCRIBE); a tuple is always frozen.
			defs[c.Name] = "frozen<" + typeName(dt) + ">"
		}
	}
	t := &engine.Table{Keyspace: ks, Name: x.Table, Options: map[string]string{}}
	var err error
	if t.ID, err = newTableID(); err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for i, name := range x.PartitionKey {
		typ, ok := defs[name]
		if !ok {
			return nil, engine.Errorf(engine.CodeInvalid, "Unknown definition %s referenced in PRIMARY KEY", name)
		}
		if used[name] {
			return nil, engine.Errorf(engine.CodeInvalid, "Multiple definition of identifier %s in PRIMARY KEY", name)
		}
		if typ == "duration" {
			// cql3/statements/create_table_statement.cc
			return nil, engine.Errorf(engine.CodeInvalid, "duration type is not supported for PRIMARY KEY part %s", name)
		}
		if err := keyComponentType(name, typ); err != nil {
			return nil, err
		}
		used[name] = true
		t.Columns = append(t.Columns, engine.Column{Name: name, Type: typ, Kind: engine.PartitionKey, Position: i})
	}
	for name := range x.ClusteringOrder {
		found := false
		for _, c := range x.Clustering {
			found = found || c == name
		}
		if !found {
			return nil, engine.Errorf(engine.CodeInvalid, "Missing CLUSTERING ORDER for column %s (it is not a clustering column)", name)
		}
	}
	for i, name := range x.Clustering {
		typ, ok := defs[name]
		if !ok {
			return nil, engine.Errorf(engine.CodeInvalid, "Unknown definition %s referenced in PRIMARY KEY", name)
		}
		if used[name] {
			return nil, engine.Errorf(engine.CodeInvalid, "Multiple definition of identifier %s in PRIMARY KEY", name)
		}
		if typ == "duration" {
			// cql3/statements/create_table_statement.cc
			return nil, engine.Errorf(engine.CodeInvalid, "duration type is not supported for PRIMARY KEY part %s", name)
		}
		if err := keyComponentType(name, typ); err != nil {
			return nil, err
		}
		used[name] = true
		t.Columns = append(t.Columns, engine.Column{Name: name, Type: typ, Kind: engine.Clustering, Position: i, Desc: x.ClusteringOrder[name]})
	}
	statics, regular, err := nonKeyColumns(x, used)
	if err != nil {
		return nil, err
	}
	for _, name := range statics {
		t.Columns = append(t.Columns, engine.Column{Name: name, Type: defs[name], Kind: engine.Static, Position: -1})
	}
	for _, name := range regular {
		t.Columns = append(t.Columns, engine.Column{Name: name, Type: defs[name], Kind: engine.Regular, Position: -1})
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
	if x.CompactStorage {
		t.Options["compact_storage"] = "true"
	}
	if err := createTableTTL(t, x); err != nil {
		return nil, err
	}
	return t, nil
}

// newTableID is a random (version 4) table id.
func newTableID() ([16]byte, error) {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return id, err
	}
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id, nil
}

// nonKeyColumns splits the columns outside the primary key into static and
// regular ones, each in name order (a schema's column order), with the
// checks of cql3/statements/create_table_statement.cc on STATIC: not in the
// PRIMARY KEY, not with COMPACT STORAGE, only with clustering columns.
func nonKeyColumns(x *cqlparse.CreateTable, key map[string]bool) (statics, regular []string, err error) {
	for _, c := range x.Columns {
		switch {
		case c.Static && key[c.Name]:
			return nil, nil, engine.Errorf(engine.CodeInvalid, "Static column %s cannot be part of the PRIMARY KEY", c.Name)
		case c.Static:
			statics = append(statics, c.Name)
		case !key[c.Name]:
			regular = append(regular, c.Name)
		}
	}
	if len(statics) > 0 && x.CompactStorage {
		return nil, nil, engine.Errorf(engine.CodeInvalid, "Static columns are not supported in COMPACT STORAGE tables")
	}
	if len(statics) > 0 && len(x.Clustering) == 0 {
		return nil, nil, engine.Errorf(engine.CodeInvalid, "Static columns are only useful (and thus allowed) if the table has at least one clustering column")
	}
	sort.Strings(statics)
	sort.Strings(regular)
	return statics, regular, nil
}

// checkCounterTable applies ScyllaDB's rules for counter columns
// (cql3/statements/create_table_statement.cc, schema/schema.cc), in its
// order: per column in definition order, default_time_to_live and tablets;
// then counters in the primary key; then counter and non-counter regular
// columns mixed.
func checkCounterTable(ks *engine.Keyspace, x *cqlparse.CreateTable, t *engine.Table, countersWithTablets bool) error {
	ttl := 0
	if v, ok := t.Options["default_time_to_live"]; ok {
		ttl, _ = strconv.Atoi(v)
	}
	counters := false
	for _, c := range x.Columns {
		if strings.TrimSpace(strings.ToLower(c.Type)) != "counter" {
			continue
		}
		counters = true
		if ttl > 0 {
			return engine.Errorf(engine.CodeInvalid, "Cannot set default_time_to_live on a table with counters")
		}
		// 2025.1 to 2025.4 refuse counters in tablet keyspaces;
		// COUNTERS_WITH_TABLETS (gms/feature_service.hh, from 2026.1)
		// lifts it (cql3/statements/create_table_statement.cc).
		if ks != nil && ks.TabletsEnabled && !countersWithTablets {
			return engine.Errorf(engine.CodeInvalid, "Cannot use the 'counter' type for table %s.%s: Counters are not yet supported with tablets", t.Keyspace, t.Name)
		}
	}
	if !counters {
		return nil
	}
	for _, c := range t.Columns {
		if c.Kind.InPrimaryKey() && c.Type == "counter" {
			return engine.Errorf(engine.CodeInvalid, "counter type is not supported for PRIMARY KEY part %s", c.Name)
		}
	}
	for _, c := range t.Columns { // regular columns are in name order, as in a schema
		if c.Kind == engine.Regular && c.Type != "counter" {
			return engine.Errorf(engine.CodeConfigError, "Cannot add a non counter column (%s) in a counter column family", c.Name)
		}
	}
	return nil
}

// isCounterTable reports whether a table's regular columns are counters.
func isCounterTable(t *engine.Table) bool {
	for _, c := range t.Columns {
		if c.Kind == engine.Regular && c.Type == "counter" {
			return true
		}
	}
	return false
}

// optionString renders a table option value for storage in Table.Options:
// scalars as their text, maps as a JSON object of strings.
func optionString(t cqlparse.Term) (string, error) {
	if t.Kind == cqlparse.TermMap {
		m, err := termStringMap(t)
		if err != nil {
			return "", err
		}
		b, _ := json.Marshal(m)
		return string(b), nil
	}
	return termScalar(t)
}

func termScalar(t cqlparse.Term) (string, error) {
	switch t.Kind {
	case cqlparse.TermString, cqlparse.TermInt, cqlparse.TermFloat, cqlparse.TermBool, cqlparse.TermUUID, cqlparse.TermDuration:
		return t.Text, nil
	case cqlparse.TermBlob:
		return "0x" + t.Text, nil
	case cqlparse.TermNull:
		return "", nil
	}
	return "", errors.New("expected a constant value")
}

func termStringMap(t cqlparse.Term) (map[string]string, error) {
	if t.Kind != cqlparse.TermMap {
		return nil, errors.New("expected a map literal {'key': value, ...}")
	}
	out := map[string]string{}
	for i, k := range t.Keys {
		ks, err := termScalar(k)
		if err != nil {
			return nil, err
		}
		vs, err := termScalar(t.Values[i])
		if err != nil {
			return nil, err
		}
		if strings.EqualFold(ks, "class") {
			ks = "class" // DC names stay case-sensitive; option names do not
		}
		out[ks] = vs
	}
	return out, nil
}

func termBool(t cqlparse.Term) (bool, error) {
	s, err := termScalar(t)
	if err != nil {
		return false, err
	}
	switch strings.ToLower(s) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errors.New("expected true or false")
}

// keyspaceOf is the keyspace a statement names, or else the session's
// (USE); with neither the statement is refused with ScyllaDB's message
// (service/client_state.hh get_keyspace).
func keyspaceOf(named, session string) (string, error) {
	if named != "" {
		return named, nil
	}
	if session == "" {
		return "", engine.Errorf(engine.CodeInvalid, "No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename")
	}
	return session, nil
}

// keyComponentType is create_table_statement.cc get_type_and_remove: a
// primary key component may be a frozen collection or UDT, never a
// multi-cell one.
func keyComponentType(name, typ string) error {
	if strings.HasPrefix(typ, "frozen<") || !strings.Contains(typ, "<") {
		return nil
	}
	if strings.HasPrefix(typ, "list<") || strings.HasPrefix(typ, "set<") || strings.HasPrefix(typ, "map<") {
		return engine.Errorf(engine.CodeInvalid, "Invalid non-frozen collection type for PRIMARY KEY component %s", name)
	}
	return engine.Errorf(engine.CodeInvalid, "Invalid non-frozen user-defined type for PRIMARY KEY component %s", name)
}

// tableOption checks and normalises a table option's value as ScyllaDB
// stores it; options without a rule are kept as given.
func tableOption(name, v string) (string, error) {
	if name == "speculative_retry" {
		return speculativeRetry(v)
	}
	return v, nil
}

// speculativeRetry is schema/schema.cc speculative_retry::from_sstring
// and to_sstring: NONE, ALWAYS, <ms>ms (non-negative, finite) or
// <p>PERCENTILE (0 to 100), case-insensitive, stored as NONE, ALWAYS,
// 200.00ms, 99.0PERCENTILE.
func speculativeRetry(s string) (string, error) {
	str := strings.ToUpper(s)
	convert := func(suffix string) (float64, error) {
		v, err := strconv.ParseFloat(str[:len(str)-len(suffix)], 64)
		if err != nil {
			return 0, engine.Errorf(engine.CodeConfigError, "cannot convert %s to speculative_retry\n", str)
		}
		return v, nil
	}
	switch {
	case str == "NONE", str == "ALWAYS":
		return str, nil
	case strings.HasSuffix(str, "MS"):
		v, err := convert("MS")
		if err != nil {
			return "", err
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return "", engine.Errorf(engine.CodeConfigError, "Invalid value %s for option 'speculative_retry': the number of milliseconds must be non-negative and finite", str)
		}
		return fmt.Sprintf("%.2fms", v), nil
	case strings.HasSuffix(str, "PERCENTILE"):
		v, err := convert("PERCENTILE")
		if err != nil {
			return "", err
		}
		v /= 100
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1 {
			return "", engine.Errorf(engine.CodeConfigError, "Invalid value %s for PERCENTILE option 'speculative_retry': must be between [0.0 and 100.0]", str)
		}
		return fmt.Sprintf("%.1fPERCENTILE", 100*v), nil
	}
	return "", engine.Errorf(engine.CodeConfigError, "cannot convert %s to speculative_retry\n", str)
}
