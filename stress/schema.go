package stress

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/gocql/gocql"
)

// Schema is the key/value table the workload uses.
type Schema struct {
	Keyspace, Table string
	RF              int
	// DC names the data centre of NetworkTopologyStrategy; "" = the DC of the
	// node the session is connected to (read from system.local).
	DC string
	// Tablets > 0 asks for `tablets = {'initial': N}`, < 0 disables tablets
	// (vnodes, ScyllaDB 6+), 0 keeps the cluster's default.
	Tablets int
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,47}$`)

func checkIdent(what, s string) error {
	if !identRE.MatchString(s) {
		return fmt.Errorf("%s %q is not a valid CQL identifier", what, s)
	}
	return nil
}

// Statements returns the CQL that CreateSchema runs (the DC must be known).
func (sc Schema) Statements() ([]string, error) {
	if err := errors.Join(checkIdent("keyspace", sc.Keyspace), checkIdent("table", sc.Table)); err != nil {
		return nil, err
	}
	if sc.RF < 1 {
		return nil, fmt.Errorf("replication factor %d: must be at least 1", sc.RF)
	}
	if sc.DC == "" {
		return nil, errors.New("schema: data centre unknown")
	}
	ks := fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'NetworkTopologyStrategy', '%s': %d}",
		sc.Keyspace, sc.DC, sc.RF)
	ks += TabletsClause(sc.Tablets)
	tbl := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s (key bigint PRIMARY KEY, value blob)", sc.Keyspace, sc.Table)
	return []string{ks, tbl}, nil
}

// CreateSchema creates the keyspace (NetworkTopologyStrategy) and the table
// `key bigint PRIMARY KEY, value blob` if they do not exist.
func CreateSchema(ctx context.Context, s *gocql.Session, sc Schema) error {
	k := DefaultKV()
	k.Keyspace, k.Table = sc.Keyspace, sc.Table
	return CreateModelSchema(ctx, s, k, SchemaTarget{Keyspace: sc.Keyspace, Table: sc.Table, DC: sc.DC, RF: sc.RF, Tablets: sc.Tablets})
}

// CreateModelSchema runs m's schema for t (t.DC "": the DC of the node the
// session is connected to, from system.local), each statement at ALL.
func CreateModelSchema(ctx context.Context, s *gocql.Session, m Model, t SchemaTarget) error {
	if t.DC == "" {
		var dc string
		if err := s.Query("SELECT data_center FROM system.local").WithContext(ctx).Scan(&dc); err != nil {
			return fmt.Errorf("reading the data centre from system.local: %w", err)
		}
		t.DC = dc
	}
	stmts, err := m.Schema(t)
	if err != nil {
		return fmt.Errorf("the %s schema: %w", m.Describe().Kind, err)
	}
	for _, st := range stmts {
		if err := s.Query(st).WithContext(ctx).Consistency(gocql.All).Exec(); err != nil {
			return fmt.Errorf("creating schema: %s: %w", st, err)
		}
	}
	return nil
}

// TabletsClause is the CREATE KEYSPACE option for a tablets setting
// (Schema.Tablets, SchemaTarget.Tablets): > 0 asks for that many initial
// tablets, < 0 disables tablets (vnodes), 0 adds nothing (the cluster's
// default). The one writer of the clause for every workload form.
func TabletsClause(tablets int) string {
	switch {
	case tablets > 0:
		return fmt.Sprintf(" AND tablets = {'initial': %d}", tablets)
	case tablets < 0:
		return " AND tablets = {'enabled': false}"
	}
	return ""
}
