package profile

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/stress/keygen"
)

// The data of a profile, as PartitionGenerator.java lays it out: the p-th
// partition's key columns take the identity their population draws for
// p; each clustering column has as many values under its parent as its
// cluster distribution draws for the partition (default fixed(1)), so a
// partition has the product of those counts of rows; every other column
// of a row takes the identity drawn for that row. Everything follows
// from (p, row), so readers bind what writers wrote.

// maxRows bounds a partition's rows (StressProfile warns above 100M).
const maxRows = 100_000_000

// partSeed is the seed of partition p's draws.
func partSeed(p int64) uint64 { return keygen.Mix64(uint64(p) ^ 0x2545f4914f6cdd1d) }

// rowCounts are partition p's values per clustering level and its rows.
func (t *table) rowCounts(p int64, counts []int64) (rows int64) {
	rows = 1
	ps := partSeed(p)
	for i, c := range t.ck {
		n := max(1, c.gen.cluster.Sample(ps+uint64(i)*0x9e37+c.gen.salt))
		if rows*n > maxRows {
			n = max(1, maxRows/rows)
		}
		counts[i] = n
		rows *= n
	}
	return rows
}

// keySeed is the seed of partition p's key column values: p itself, so a
// seq(1..N) population numbers the partitions 1, 2 ... N.
func keySeed(p int64) uint64 { return uint64(p) }

// clusterSeed is the seed of row r's value of clustering level i: the
// row's index among its level's rows (r / the rows below one value).
func (t *table) clusterSeed(p int64, counts []int64, i int, r int64) uint64 {
	below := int64(1)
	for j := i + 1; j < len(t.ck); j++ {
		below *= counts[j]
	}
	return keygen.Mix64(partSeed(p)+uint64(i+1)*0x632be59bd9b4e019) + uint64(r/below)
}

// rowSeed is the seed of row r's other columns.
func rowSeed(p, r int64) uint64 { return keygen.Mix64(partSeed(p) + uint64(r)*0xd6e8feb86659fd93) }

// staticSeed is the seed of partition p's static columns.
func staticSeed(p int64) uint64 { return keygen.Mix64(partSeed(p) + 0x8cb92ba72f3d8dd7) }

// role says where a column's value comes from.
type role int

const (
	rolePK role = iota
	roleCK
	roleStatic
	roleRegular
)

// binder is one bind marker of a statement: the column whose value it takes.
type binder struct {
	col   *column
	role  role
	level int // clustering level (roleCK)
}

func (t *table) binderOf(c *column) binder {
	for i, k := range t.pk {
		if k == c {
			return binder{col: c, role: rolePK, level: i}
		}
	}
	for i, k := range t.ck {
		if k == c {
			return binder{col: c, role: roleCK, level: i}
		}
	}
	for _, k := range t.static {
		if k == c {
			return binder{col: c, role: roleStatic}
		}
	}
	return binder{col: c, role: roleRegular}
}

// appendValue appends the value b takes in row r of partition p.
func (t *table) appendValue(buf []byte, b binder, p int64, counts []int64, r int64) []byte {
	switch b.role {
	case rolePK:
		return b.col.gen.appendValue(buf, keySeed(p))
	case roleCK:
		return b.col.gen.appendValue(buf, t.clusterSeed(p, counts, b.level, r))
	case roleStatic:
		return b.col.gen.appendValue(buf, staticSeed(p))
	}
	return b.col.gen.appendValue(buf, rowSeed(p, r))
}

// boundQuery is a query's statement and the columns its markers take,
// as SchemaStatement binds a prepared statement's variables by name.
type boundQuery struct {
	Query
	binders []binder
	write   bool // INSERT, UPDATE, DELETE or BATCH: counted as a write
}

// bindQuery maps q's bind markers to the profile table's columns: a
// marker takes the value of the column it is compared with (WHERE c = ?,
// c > ? ...) or assigned to (INSERT, UPDATE SET). A query on a view or
// index names the base table's columns, so a marker binds by name.
func (p *Profile) bindQuery(q Query) (*boundQuery, error) {
	st, n, err := cqlparse.Parse(q.CQL)
	if err != nil {
		return nil, fmt.Errorf("CQL does not parse: %v", err)
	}
	cols := make([]string, n)
	var refs []termRef
	bq := &boundQuery{Query: q}
	switch s := st.(type) {
	case *cqlparse.Select:
		refs = whereRefs(s.Where)
		if s.Limit != nil && s.Limit.Kind == cqlparse.TermBind || s.PerPartitionLimit != nil && s.PerPartitionLimit.Kind == cqlparse.TermBind {
			// cassandra-stress fails on it too: SchemaStatement binds a marker by its
			// variable's name, and [limit] names no column (PartitionGenerator.indexOf).
			return nil, fmt.Errorf("a LIMIT marker cannot be bound from the profile's columns (cassandra-stress cannot either: its variable [limit] names no column): write the limit as a number")
		}
	case *cqlparse.Insert:
		for i, c := range s.Columns {
			if i < len(s.Values) {
				refs = append(refs, termRef{c, s.Values[i]})
			}
		}
		bq.write = true
	case *cqlparse.Update:
		for _, a := range s.Set {
			refs = append(refs, termRef{a.Column, a.Value})
		}
		refs = append(append(refs, whereRefs(s.Where)...), whereRefs(s.If)...)
		bq.write = true
	case *cqlparse.Delete:
		refs, bq.write = append(whereRefs(s.Where), whereRefs(s.If)...), true
	case *cqlparse.AlterTable:
		// Run as written (SchemaQuery prepares any statement); a write.
		bq.write = true
	default:
		return nil, fmt.Errorf("%s: a profile query is a SELECT, INSERT, UPDATE, DELETE or ALTER TABLE", st.Name())
	}
	for _, r := range refs {
		if r.term.Kind == cqlparse.TermList {
			for _, v := range r.term.Values {
				if v.Kind == cqlparse.TermBind {
					return nil, fmt.Errorf("column %s: markers inside a collection literal or a NOT IN list are not bound by the profile engine (their variables name no column, which cassandra-stress binds by)", r.col)
				}
			}
		}
		if r.term.Kind == cqlparse.TermBind && r.term.Bind < n {
			cols[r.term.Bind] = r.col
		}
	}
	if bq.CQL, err = qualifyQuery(q.CQL, st, strings.ToLower(p.Keyspace)); err != nil {
		return nil, err
	}
	for i, c := range cols {
		if c == "" {
			return nil, fmt.Errorf("bind marker %d is not compared with or assigned to a column (token(), CONTAINS, IN ?, USING ? are not bound)", i+1)
		}
		col := p.table.byName[strings.ToLower(strings.Trim(c, `"`))]
		if col == nil {
			return nil, fmt.Errorf("bind marker %d is on column %s, which table %s does not have", i+1, c, p.Table)
		}
		bq.binders = append(bq.binders, p.table.binderOf(col))
	}
	return bq, nil
}

// queryTableRE finds the table a statement names: SELECT/DELETE ...
// FROM t, INSERT INTO t, UPDATE t.
var queryTableRE = regexp.MustCompile(`(?is)^(\s*(?:SELECT\s.*?\bFROM|DELETE\s.*?\bFROM|DELETE\s+FROM|INSERT\s+INTO|UPDATE|ALTER\s+TABLE)\s+)("?\w+"?)(\s|\(|;|$)`)

// qualifyQuery names the keyspace in a query that names none: cassandra-stress
// runs its queries after `USE ks`, which a pooled driver session cannot.
func qualifyQuery(src string, st cqlparse.Statement, ks string) (string, error) {
	var named string
	switch s := st.(type) {
	case *cqlparse.Select:
		named = s.Keyspace
	case *cqlparse.Insert:
		named = s.Keyspace
	case *cqlparse.Update:
		named = s.Keyspace
	case *cqlparse.Delete:
		named = s.Keyspace
	case *cqlparse.AlterTable:
		named = s.Keyspace
	}
	if named != "" {
		return src, nil
	}
	if !queryTableRE.MatchString(src) {
		return "", fmt.Errorf("cannot find the table to name keyspace %s in; write it as %s.<table>", ks, ks)
	}
	return queryTableRE.ReplaceAllString(src, "${1}"+ks+".${2}${3}"), nil
}

type termRef struct {
	col  string
	term cqlparse.Term
}

func whereRefs(rels []cqlparse.Relation) []termRef {
	var out []termRef
	for _, r := range rels {
		switch {
		case r.Op == "IN" && len(r.Token) == 0 && r.Value.Kind == cqlparse.TermList:
			// c IN (?, ?): each marker is c's, as the driver names the
			// prepared statement's variables and SchemaStatement binds them
			// by name (multirow: each from a row of its own).
			for _, v := range r.Value.Values {
				out = append(out, termRef{r.Column, v})
			}
		case len(r.Token) > 0 || r.Op == "CONTAINS" || r.Op == "CONTAINS KEY" || r.Op == "IN" || r.Op == "NOT IN":
			// Left unbound on purpose: bindQuery reports the marker.
			if r.Value.Kind == cqlparse.TermList {
				out = append(out, termRef{r.Column, r.Value})
			}
		default:
			out = append(out, termRef{r.Column, r.Value})
		}
	}
	return out
}
