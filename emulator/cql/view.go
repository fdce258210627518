package cql

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

var viewNameRE = regexp.MustCompile(`^\w+$`)

// createView validates CREATE MATERIALIZED VIEW as
// cql3/statements/create_view_statement.cc prepare_view does and builds the
// view as a table of the keyspace with a View part. The emulator stores no
// view rows: a read of the view derives them from the base table's (view
// reads in viewread.go), so the view always agrees with its base.
func (ec *execCtx) createView(sch *engine.Schema, x *cqlparse.CreateView) (*engine.SchemaChange, error) {
	ks, err := keyspaceOf(x.Keyspace, ec.keyspace)
	if err != nil {
		return nil, err
	}
	if bks := x.BaseKeyspace; bks != "" && bks != ks {
		return nil, engine.Errorf(engine.CodeInvalid, "Cannot create a materialized view on a table in a separate keyspace ('%s' != '%s')", bks, ks)
	}
	if !viewNameRE.MatchString(x.View) {
		return nil, engine.Errorf(engine.CodeInvalid, "\"%s\" is not a valid materialized view name (must contain alphanumeric character only: [0-9A-Za-z] or the underscore)", x.View)
	}
	if len(x.View) > nameLength {
		return nil, engine.Errorf(engine.CodeInvalid, "materialized view names shouldn't be more than %d characters long (got \"%s\")", nameLength, x.View)
	}
	base, err := baseTable(sch, ks, x.Base)
	if err != nil {
		return nil, err
	}
	switch {
	case isCounterTable(base):
		return nil, engine.Errorf(engine.CodeInvalid, "Materialized views are not supported on counter tables")
	case base.View != nil:
		return nil, engine.Errorf(engine.CodeInvalid, "Materialized views cannot be created against other materialized views")
	case base.Options["gc_grace_seconds"] == "0":
		return nil, engine.Errorf(engine.CodeInvalid, "Cannot create materialized view '%s' for base table '%s' with gc_grace_seconds of 0, since this value is used to TTL undelivered updates. Setting gc_grace_seconds too low might cause undelivered updates to expire before being replayed.", x.View, x.Base)
	}
	if sch.Tables[ks][x.View] != nil {
		if x.IfNotExists {
			return nil, nil
		}
		return nil, &engine.Error{Code: engine.CodeAlreadyExists, Message: "Cannot add already existing table \"" + x.View + "\" to keyspace \"" + ks + "\"", Keyspace: ks, Table: x.View}
	}
	bi, err := infoFor(base, keyspaceTypes(sch, ks))
	if err != nil {
		return nil, engine.Errorf(engine.CodeServerError, "%v", err)
	}
	included, err := viewSelection(bi, x.Columns)
	if err != nil {
		return nil, err
	}
	v, err := viewDef(bi, x, included)
	if err != nil {
		return nil, err
	}
	return &engine.SchemaChange{Kind: engine.CreateTable, IfNotExists: x.IfNotExists, Table: v, KeyspaceName: ks, TableName: v.Name}, nil
}

// viewSelection is the set of base columns the view's SELECT names (nil for
// SELECT *).
func viewSelection(bi *tableInfo, sels []cqlparse.Selector) (map[string]bool, error) {
	if len(sels) == 0 {
		return nil, nil
	}
	out := map[string]bool{}
	for _, s := range sels {
		if s.Alias != "" {
			return nil, engine.Errorf(engine.CodeInvalid, "Cannot use alias when defining a materialized view")
		}
		if s.Func != "" || s.Token != nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Cannot use general expressions when defining a materialized view")
		}
		if _, ok := bi.cols[s.Column]; !ok {
			return nil, engine.Errorf(engine.CodeInvalid, "Unknown column name detected in CREATE MATERIALIZED VIEW statement: %s", s.Column)
		}
		out[s.Column] = true
	}
	return out, nil
}

// viewDef checks the view's primary key and WHERE clause and builds its
// definition (create_view_statement.cc validate_primary_key and the
// column loops after it).
func viewDef(bi *tableInfo, x *cqlparse.CreateView, included map[string]bool) (*engine.Table, error) {
	restricted := map[string]bool{}
	for _, r := range x.Where {
		if r.Token != nil {
			return nil, engine.Errorf(engine.CodeInvalid, "Cannot use token relation when defining a materialized view")
		}
		if _, ok := bi.cols[r.Column]; !ok {
			return nil, engine.Errorf(engine.CodeInvalid, "Undefined column name %s", r.Column)
		}
		if r.Value.Kind == cqlparse.TermBind {
			return nil, engine.Errorf(engine.CodeInvalid, "Cannot use query parameters in CREATE MATERIALIZED VIEW statements")
		}
		restricted[r.Column] = true
	}
	v := &engine.Table{Keyspace: bi.keyspace, Name: x.View, Options: map[string]string{}}
	var err error
	if v.ID, err = newTableID(); err != nil {
		return nil, err
	}
	inPK := map[string]bool{}
	nonPK := ""
	add := func(names []string, kind engine.ColumnKind) error {
		for i, name := range names {
			c, ok := bi.cols[name]
			if !ok {
				return engine.Errorf(engine.CodeInvalid, "Unknown column name detected in CREATE MATERIALIZED VIEW statement: %s", name)
			}
			if inPK[name] {
				return engine.Errorf(engine.CodeInvalid, "Duplicate entry found in PRIMARY KEY: %s", name)
			}
			inPK[name] = true
			if err := viewKeyColumn(bi, c, restricted, &nonPK); err != nil {
				return err
			}
			v.Columns = append(v.Columns, engine.Column{Name: name, Type: c.Type, Kind: kind, Position: i, Desc: kind == engine.Clustering && x.ClusteringOrder[name]})
		}
		return nil
	}
	if err := add(x.PartitionKey, engine.PartitionKey); err != nil {
		return nil, err
	}
	if err := add(x.Clustering, engine.Clustering); err != nil {
		return nil, err
	}
	var missing, regular []string
	for _, c := range bi.all {
		inc := included == nil || included[c.Name]
		if inc && c.Kind == engine.Static {
			return nil, engine.Errorf(engine.CodeInvalid, "Unable to include static column '%s' which would be included by Materialized View SELECT * statement", c.Name)
		}
		if c.Kind.InPrimaryKey() && !inPK[c.Name] {
			missing = append(missing, c.Name)
		}
		if inc && !inPK[c.Name] {
			regular = append(regular, c.Name)
		}
	}
	if len(missing) > 0 {
		return nil, engine.Errorf(engine.CodeInvalid, "Cannot create Materialized View %s without primary key columns from base %s (%s)", x.View, x.Base, strings.Join(missing, ", "))
	}
	for name := range x.ClusteringOrder {
		if !slices.Contains(x.Clustering, name) {
			return nil, engine.Errorf(engine.CodeInvalid, "CLUSTERING ORDER BY lists %s which is not a clustering column in the view", name)
		}
	}
	var filtered []string
	for _, r := range x.Where {
		if c := bi.cols[r.Column]; r.Op != "IS NOT" && !c.Kind.InPrimaryKey() && !(r.Column == nonPK) {
			filtered = append(filtered, r.Column)
		}
	}
	if len(filtered) > 0 {
		return nil, engine.Errorf(engine.CodeInvalid, "Non-primary key columns cannot be restricted in the SELECT statement used for materialized view %s creation (got restrictions on: %s)", x.View, strings.Join(filtered, ", "))
	}
	sort.Strings(regular)
	for _, name := range regular {
		v.Columns = append(v.Columns, engine.Column{Name: name, Type: bi.cols[name].Type, Kind: engine.Regular, Position: -1})
	}
	for name, t := range x.Options {
		s, err := optionString(t)
		if err != nil {
			return nil, engine.Errorf(engine.CodeSyntaxError, "option %s: %v", name, err)
		}
		v.Options[name] = s
	}
	var where []string
	for _, r := range x.Where {
		where = append(where, relationText(r))
	}
	v.View = &engine.View{BaseTable: bi.name, BaseID: bi.def.ID, WhereClause: strings.Join(where, " AND "), IncludeAllColumns: included == nil}
	return v, nil
}

// viewKeyColumn is create_view_statement.cc validate_primary_key.
func viewKeyColumn(bi *tableInfo, c *colInfo, restricted map[string]bool, nonPK *string) error {
	if isMultiCell(c) {
		return engine.Errorf(engine.CodeInvalid, "Cannot use MultiCell column '%s' in PRIMARY KEY of materialized view", c.Name)
	}
	if strings.Contains(c.Type, "duration") {
		return engine.Errorf(engine.CodeInvalid, "Cannot use Duration column '%s' in PRIMARY KEY of materialized view", c.Name)
	}
	if c.Kind == engine.Static {
		return engine.Errorf(engine.CodeInvalid, "Cannot use Static column '%s' in PRIMARY KEY of materialized view", c.Name)
	}
	if !c.Kind.InPrimaryKey() {
		if *nonPK != "" {
			return engine.Errorf(engine.CodeInvalid, "Cannot include more than one non-primary key column '%s' in materialized view primary key", c.Name)
		}
		*nonPK = c.Name
	}
	if !(c.Kind == engine.PartitionKey && len(bi.pk) == 1) && !restricted[c.Name] {
		return engine.Errorf(engine.CodeInvalid, "Primary key column '%s' is required to be filtered by 'IS NOT NULL'", c.Name)
	}
	return nil
}

// isMultiCell reports a non-frozen collection or UDT.
func isMultiCell(c *colInfo) bool {
	if strings.HasPrefix(c.Type, "frozen<") {
		return false
	}
	return strings.ContainsAny(c.Type, "<") || isUDT(c.dt)
}

// relationText renders a view's WHERE relation as system_schema.views'
// where_clause shows it (cql3/util.cc relations_to_where_clause).
func relationText(r cqlparse.Relation) string {
	if r.Op == "IS NOT" {
		return maybeQuote(r.Column) + " IS NOT null"
	}
	return maybeQuote(r.Column) + " " + r.Op + " " + termText(r.Value)
}

// dropView is cql3/statements/drop_view_statement.cc with
// migration_manager.cc prepare_view_drop_announcement's checks.
func (ec *execCtx) dropView(sch *engine.Schema, x *cqlparse.DropView) (*engine.SchemaChange, error) {
	ks, err := keyspaceOf(x.Keyspace, ec.keyspace)
	if err != nil {
		return nil, err
	}
	t := sch.Tables[ks][x.View]
	switch {
	case t == nil && x.IfExists:
		return nil, nil
	case t == nil:
		return nil, engine.Errorf(engine.CodeConfigError, "Cannot drop non existing materialized view '%s' in keyspace '%s'.", x.View, ks)
	case t.View == nil:
		return nil, engine.Errorf(engine.CodeInvalid, "Cannot use DROP MATERIALIZED VIEW on Table. (Did you mean DROP TABLE)?")
	}
	return &engine.SchemaChange{Kind: engine.DropTable, IfExists: x.IfExists, KeyspaceName: ks, TableName: x.View}, nil
}

// checkDropTable is migration_manager.cc
// prepare_column_family_drop_announcement's refusals: DROP TABLE of a view,
// or of a base table that views still depend on.
func checkDropTable(sch *engine.Schema, ks, name string) error {
	t := sch.Tables[ks][name]
	if t == nil {
		return nil
	}
	if t.View != nil {
		return engine.Errorf(engine.CodeInvalid, "Cannot use DROP TABLE on Materialized View. (Did you mean DROP MATERIALIZED VIEW)?")
	}
	if views := viewsOf(sch, t); len(views) > 0 {
		return engine.Errorf(engine.CodeInvalid, "Cannot drop table when materialized views still depend on it (%s.{%s})", ks, strings.Join(views, ", "))
	}
	return nil
}

// viewsOf names the views of a base table, in name order.
func viewsOf(sch *engine.Schema, base *engine.Table) []string {
	var out []string
	for _, t := range sch.Tables[base.Keyspace] {
		if t.View != nil && t.View.BaseID == base.ID {
			out = append(out, t.Name)
		}
	}
	sort.Strings(out)
	return out
}

// alterView is cql3/statements/alter_view_statement.cc: WITH options only.
func (ec *execCtx) alterView(sch *engine.Schema, x *cqlparse.AlterView) (*engine.SchemaChange, error) {
	ks, err := keyspaceOf(x.Keyspace, ec.keyspace)
	if err != nil {
		return nil, err
	}
	old, err := baseTable(sch, ks, x.View)
	if err != nil {
		return nil, err
	}
	if old.View == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Cannot use ALTER MATERIALIZED VIEW on Table. (Did you mean ALTER TABLE)?")
	}
	t := cloneTable(old)
	for name, v := range x.Options {
		if name == "default_time_to_live" && termText(v) != "0" { // view_prop_defs.cc
			return nil, engine.Errorf(engine.CodeInvalid, "Cannot set or alter default_time_to_live for a materialized view. Data in a materialized view always expire at the same time than the corresponding data in the parent table.")
		}
		s, err := optionString(v)
		if err != nil {
			return nil, engine.Errorf(engine.CodeSyntaxError, "option %s: %v", name, err)
		}
		t.Options[name] = s
	}
	return &engine.SchemaChange{Kind: engine.AlterTable, Table: &t, KeyspaceName: ks, TableName: t.Name}, nil
}

// viewRows are system_schema.views (db/schema_tables.cc make_view_mutations):
// a view's options as system_schema.tables shows a table's, and its base.
func viewRows(s *Server) []map[string][]byte {
	var rows []map[string][]byte
	for _, t := range sortedTables(schemaOf(s)) {
		if t.View == nil {
			continue
		}
		row := tableOptionRow(t)
		delete(row, "table_name")
		delete(row, "flags")
		row["view_name"] = encText(t.Name)
		row["base_table_id"] = encUUID(t.View.BaseID)
		row["base_table_name"] = encText(t.View.BaseTable)
		row["include_all_columns"] = encBool(t.View.IncludeAllColumns)
		row["where_clause"] = encText(t.View.WhereClause)
		rows = append(rows, row)
	}
	return rows
}

// checkDropNeeded is alter_table_statement.cc's refusal to drop a column a
// view of the table needs: one it selects, or any unselected regular
// column when the view's key adds none (it is then a virtual column of
// the view, create_view_statement.cc), or an indexed one (its index's
// view holds it).
func checkDropNeeded(sch *engine.Schema, base *engine.Table, drop []string) error {
	for _, name := range drop {
		for _, idx := range base.Indexes {
			if col, _, _ := indexTargetColumn(idx); col == name {
				return engine.Errorf(engine.CodeInvalid, "Cannot drop column %s from base table %s.%s: materialized view %s_index needs this column", name, base.Keyspace, base.Name, idx.Name)
			}
		}
		for _, vn := range viewsOf(sch, base) {
			v := sch.Tables[base.Keyspace][vn]
			if viewNeeds(base, v, name) {
				return engine.Errorf(engine.CodeInvalid, "Cannot drop column %s from base table %s.%s: materialized view %s needs this column", name, base.Keyspace, base.Name, vn)
			}
		}
	}
	return nil
}

func viewNeeds(base, v *engine.Table, name string) bool {
	keyAddsColumn := false
	for _, vc := range v.Columns {
		if vc.Name == name {
			return true
		}
		if vc.Kind.InPrimaryKey() {
			for _, bc := range base.Columns {
				keyAddsColumn = keyAddsColumn || (bc.Name == vc.Name && !bc.Kind.InPrimaryKey())
			}
		}
	}
	for _, bc := range base.Columns {
		if bc.Name == name && bc.Kind == engine.Static {
			return false // statics are never virtual columns
		}
	}
	return !keyAddsColumn
}

// addToViews adds the columns ALTER TABLE ADD gave a base table to its
// SELECT * views, as alter_table_statement.cc does for views that include
// all columns (static columns excepted: a view has none).
func (ec *execCtx) addToViews(ctx context.Context, base *engine.Table, add []cqlparse.ColumnDef) error {
	sch := schemaOf(ec.s)
	for _, vn := range viewsOf(sch, base) {
		old := sch.Tables[base.Keyspace][vn]
		if !old.View.IncludeAllColumns {
			continue
		}
		v := cloneTable(old)
		for _, d := range add {
			for _, c := range base.Columns {
				if c.Name == d.Name && c.Kind == engine.Regular {
					v.Columns = append(v.Columns, c)
				}
			}
		}
		if _, err := ec.s.b.ApplySchema(ctx, engine.SchemaChange{Kind: engine.AlterTable, Table: &v, KeyspaceName: v.Keyspace, TableName: v.Name}); err != nil {
			return fmt.Errorf("adding the new columns to view %s.%s: %w", v.Keyspace, v.Name, err)
		}
	}
	return nil
}
