package cql

import (
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// checkDistinct is cql3/statements/select_statement.cc
// validate_distinct_selection and the GROUP BY check of its prepare. A
// DISTINCT query reads one row per partition (selectRows runs it as PER
// PARTITION LIMIT 1), which shows the partition key and static columns.
// GROUP BY is answered only where it cannot change the result: with
// DISTINCT, on partition key columns.
func checkDistinct(ti *tableInfo, st *cqlparse.Select, p *projection) error {
	if !st.Distinct {
		if len(st.GroupBy) > 0 {
			return engine.Errorf(engine.CodeInvalid, "GROUP BY without SELECT DISTINCT is not supported by the emulator")
		}
		return nil
	}
	if st.PerPartitionLimit != nil {
		return engine.Errorf(engine.CodeInvalid, "PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries")
	}
	for _, r := range st.Where {
		if r.Token != nil {
			continue
		}
		if c, ok := ti.cols[r.Column]; ok && c.Kind != engine.PartitionKey {
			return engine.Errorf(engine.CodeInvalid, "SELECT DISTINCT with WHERE clause only supports restriction by partition key.")
		}
	}
	selected := map[string]bool{}
	for _, c := range p.cols {
		if c.idx < 0 || c.idx >= len(ti.all) || ti.all[c.idx] != c {
			continue // token(...) and function columns
		}
		if c.Kind != engine.PartitionKey && c.Kind != engine.Static {
			return engine.Errorf(engine.CodeInvalid, "SELECT DISTINCT queries must only request partition key columns and/or static columns (not %s)", c.Name)
		}
		selected[c.Name] = true
	}
	if rangeQuery(ti, st) {
		for _, c := range ti.pk {
			if !selected[c.Name] {
				return engine.Errorf(engine.CodeInvalid, "SELECT DISTINCT queries must request all the partition key columns (missing %s)", c.Name)
			}
		}
	}
	clustering, err := checkGroupBy(ti, st)
	if err != nil {
		return err
	}
	if clustering {
		return engine.Errorf(engine.CodeInvalid, "Grouping on clustering columns is not allowed for SELECT DISTINCT queries")
	}
	return nil
}

// checkGroupBy is select_statement.cc prepare_group_by: GROUP BY names
// primary key columns in their order (equality-restricted ones may be
// left out) and at least the whole partition key. It reports whether a
// clustering column is grouped on.
func checkGroupBy(ti *tableInfo, st *cqlparse.Select) (clustering bool, err error) {
	if len(st.GroupBy) == 0 {
		return false, nil
	}
	key := append(append([]*colInfo{}, ti.pk...), ti.ck...)
	eq := func(c *colInfo) bool {
		for _, r := range st.Where {
			if r.Token == nil && r.Column == c.Name && r.Op == "=" {
				return true
			}
		}
		return false
	}
	next := 0
	for _, name := range st.GroupBy {
		c, ok := ti.cols[name]
		if !ok {
			return false, engine.Errorf(engine.CodeInvalid, "Group by unknown column %s", name)
		}
		if !c.Kind.InPrimaryKey() {
			return false, engine.Errorf(engine.CodeInvalid, "Group by non-primary-key column %s", name)
		}
		for next < len(key) && key[next] != c && eq(key[next]) {
			next++
		}
		if next >= len(key) || key[next] != c {
			return false, engine.Errorf(engine.CodeInvalid, "Group by column %s is out of order", name)
		}
		next++
		clustering = clustering || c.Kind == engine.Clustering
	}
	if next < len(ti.pk) {
		return false, engine.Errorf(engine.CodeInvalid, "GROUP BY must include the entire partition key")
	}
	return clustering, nil
}
