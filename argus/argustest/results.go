package argustest

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Cell is a stored result cell (models/result.py ArgusGenericResultData)
// with the status Argus settled on.
type Cell struct {
	Column, Row  string
	Status       string
	Value        *float64
	ValueText    *string
	SUTTimestamp time.Time
}

// Rule is one validation rule of a column (models/result.py ValidationRules).
type Rule struct {
	ValidFrom                    time.Time
	BestPct, BestAbs, FixedLimit *float64
}

// Column is models/result.py ColumnMetadata.
type Column struct {
	Name, Unit, Type string
	HigherIsBetter   *bool
	Visible          *bool
}

// TableMeta is models/result.py ArgusGenericResultMetadata, kept per
// (test_id, name) as generic_result_metadata_v1 is.
type TableMeta struct {
	Name, Description, SUTPackageName string
	Columns                           []Column
	Rows                              []string
	Rules                             map[string][]Rule // every rule a column had, latest last
}

type bestKey struct{ testID, table, cell string }

type best struct {
	value float64
	runID string
}

type tableKey struct{ testID, name string }

// submitResults is ClientService.submit_results
// (argus/backend/service/client_service.py), step by step in its order:
// the run, the table name, the cells, the table metadata under the run's
// test_id, sut_timestamp, best results, each cell's status, the cells
// stored, DataValidationError when one ended ERROR.
func (s *Server) submitResults(runID string, body map[string]any) (map[string]any, *pyError) {
	run := s.runs[runID]
	if run == nil {
		// load_test_run raised DocumentNotFound: answered, not raised.
		return map[string]any{"status": "error", "response": map[string]any{"exception": "DoesNotExist", "arguments": []any{runID}}}, nil
	}
	meta, ok := body["meta"].(map[string]any)
	if !ok {
		return nil, raise("KeyError", "'meta'", "meta")
	}
	name, ok := meta["name"].(string)
	if !ok {
		return nil, raise("KeyError", "'name'", "name")
	}
	cells, perr := parseCells(body["results"])
	if perr != nil {
		return nil, perr
	}
	if run.TestID == nil {
		// ResultsService.get_table_metadata selects WHERE test_id = ? with
		// the run's test_id None: ScyllaDB refuses a null key
		// (cql3/restrictions/statement_restrictions.cc
		// validate_primary_key_restrictions) and the driver raises InvalidRequest.
		return nil, raise("InvalidRequest", `Error from server: code=2200 [Invalid query] message="Invalid null value in condition for column test_id"`)
	}
	tm, perr := s.tableMeta(*run.TestID, meta)
	if perr != nil {
		return nil, perr
	}
	sut, perr := sutTimestampOf(run, body)
	if perr != nil {
		return nil, perr
	}
	bests, perr := s.updateBestResults(*run.TestID, name, tm, cells, runID)
	if perr != nil {
		return nil, perr
	}
	failed := false
	for i := range cells {
		if perr := cells[i].judge(tm, bests); perr != nil {
			return nil, perr
		}
		cells[i].SUTTimestamp = sut
		if cells[i].Status == "ERROR" {
			failed = true
		}
		run.Cells[name] = append(run.Cells[name], cells[i])
	}
	if failed {
		return nil, &pyError{Exception: "DataValidationError", Args: []any{}}
	}
	return map[string]any{"status": "ok", "message": "Results submitted"}, nil
}

// sutTimestampOf is submit_results' sut_timestamp: the client's when not 0,
// else the run's, from the package named by the body's top-level
// sut_package_name (default scylla-server; the client's GenericResultTable
// puts its sut_package_name in meta, which this lookup does not read).
func sutTimestampOf(run *Run, body map[string]any) (time.Time, *pyError) {
	ts := 0.0
	if v, ok := body["sut_timestamp"]; ok && v != nil {
		f, isNum := v.(float64)
		if !isNum {
			return time.Time{}, raise("TypeError", fmt.Sprintf("'%T' object cannot be interpreted as an integer", v))
		}
		ts = f
	}
	if ts == 0 {
		pkgName := "scylla-server"
		if n, ok := body["sut_package_name"].(string); ok {
			pkgName = n
		}
		var perr *pyError
		if ts, perr = run.sutTimestamp(pkgName); perr != nil {
			return time.Time{}, perr
		}
	}
	// datetime.fromtimestamp: microseconds, rounded half to even.
	return time.UnixMicro(int64(math.RoundToEven(ts * 1e6))).UTC(), nil
}

// parseCells is [Cell(**cell) for cell in results["results"]]
// (results_service.py Cell: column, row, status required; value and
// value_text optional; nothing else).
func parseCells(v any) ([]Cell, *pyError) {
	list, ok := v.([]any)
	if !ok {
		return nil, raise("KeyError", "'results'", "results")
	}
	var out []Cell
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, raise("TypeError", "argus.backend.service.results_service.Cell() argument after ** must be a mapping")
		}
		for k := range m {
			switch k {
			case "column", "row", "status", "value", "value_text":
			default:
				return nil, raise("TypeError", fmt.Sprintf("Cell.__init__() got an unexpected keyword argument '%s'", k))
			}
		}
		for _, k := range []string{"column", "row", "status"} {
			if _, ok := m[k]; !ok {
				return nil, raise("TypeError", fmt.Sprintf("Cell.__init__() missing 1 required positional argument: '%s'", k))
			}
		}
		c := Cell{Column: fmt.Sprint(m["column"]), Row: fmt.Sprint(m["row"]), Status: fmt.Sprint(m["status"])}
		if f, ok := m["value"].(float64); ok {
			c.Value = &f
		}
		if t, ok := m["value_text"].(string); ok {
			c.ValueText = &t
		}
		out = append(out, c)
	}
	return out, nil
}

// tableMeta is the metadata step of submit_results: a new table is saved as
// sent (ArgusGenericResultMetadata.__init__ stamps each rule's valid_from);
// a known one is updated by update_if_changed (columns replaced, rows only
// added, rules appended when they changed).
func (s *Server) tableMeta(testID string, meta map[string]any) (*TableMeta, *pyError) {
	k := tableKey{testID, meta["name"].(string)}
	in, rules, perr := decodeMeta(meta)
	if perr != nil {
		return nil, perr
	}
	tm := s.metas[k]
	if tm == nil {
		tm = &TableMeta{Name: k.name, Rules: map[string][]Rule{}}
		s.metas[k] = tm
	}
	if _, ok := meta["description"]; ok {
		tm.Description = in.Description
	}
	if _, ok := meta["sut_package_name"]; ok {
		tm.SUTPackageName = in.SUTPackageName
	}
	if _, ok := meta["columns_meta"]; ok {
		tm.Columns = in.Columns
	}
	for _, r := range in.Rows {
		if !contains(tm.Rows, r) {
			tm.Rows = append(tm.Rows, r)
		}
	}
	if _, ok := meta["validation_rules"]; ok {
		tm.updateRules(rules)
	}
	return tm, nil
}

// updateRules is ArgusGenericResultMetadata.update_validation_rules: a
// column's rule is appended when it differs from its latest; a column whose
// rule is no longer sent gets an all-unset rule appended.
func (tm *TableMeta) updateRules(in map[string]Rule) {
	now := time.Now().UTC()
	cols := make([]string, 0, len(in))
	for c := range in {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	for _, c := range cols {
		r := in[c]
		list := tm.Rules[c]
		if len(list) > 0 && sameRule(list[len(list)-1], r) {
			continue
		}
		r.ValidFrom = now
		tm.Rules[c] = append(list, r)
	}
	for c, list := range tm.Rules {
		if _, ok := in[c]; ok || len(list) == 0 {
			continue
		}
		if last := list[len(list)-1]; last.BestPct != nil || last.BestAbs != nil || last.FixedLimit != nil {
			tm.Rules[c] = append(list, Rule{ValidFrom: now})
		}
	}
}

func sameRule(a, b Rule) bool {
	eq := func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eq(a.BestPct, b.BestPct) && eq(a.BestAbs, b.BestAbs) && eq(a.FixedLimit, b.FixedLimit)
}

// decodeMeta reads the fields ArgusGenericResultMetadata declares and the
// rules sent (ValidationRule.as_dict per column); a field of the wrong
// shape fails as the model's validation would.
func decodeMeta(meta map[string]any) (*TableMeta, map[string]Rule, *pyError) {
	tm := &TableMeta{}
	rules := map[string]Rule{}
	tm.Description, _ = meta["description"].(string)
	tm.SUTPackageName, _ = meta["sut_package_name"].(string)
	if v, ok := meta["columns_meta"]; ok && v != nil {
		list, ok := v.([]any)
		if !ok {
			return nil, nil, raise("ValidationError", "columns_meta: Input should be a valid list")
		}
		for i, item := range list {
			m, ok := item.(map[string]any)
			if !ok {
				return nil, nil, raise("ValidationError", fmt.Sprintf("columns_meta.%d: Input should be a valid dictionary", i))
			}
			c := Column{}
			c.Name, _ = m["name"].(string)
			c.Unit, _ = m["unit"].(string)
			c.Type, _ = m["type"].(string)
			if b, ok := m["higher_is_better"].(bool); ok {
				c.HigherIsBetter = &b
			}
			if b, ok := m["visible"].(bool); ok {
				c.Visible = &b
			}
			tm.Columns = append(tm.Columns, c)
		}
	}
	if v, ok := meta["rows_meta"]; ok && v != nil {
		list, ok := v.([]any)
		if !ok {
			return nil, nil, raise("ValidationError", "rows_meta: Input should be a valid list")
		}
		for i, r := range list {
			s, ok := r.(string)
			if !ok {
				return nil, nil, raise("ValidationError", fmt.Sprintf("rows_meta.%d: Input should be a valid string", i))
			}
			tm.Rows = append(tm.Rows, s)
		}
	}
	if v, ok := meta["validation_rules"]; ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, nil, raise("ValidationError", "validation_rules: Input should be a valid dictionary")
		}
		for col, rv := range m {
			rm, ok := rv.(map[string]any)
			if !ok {
				return nil, nil, raise("ValidationError", fmt.Sprintf("validation_rules.%s: Input should be a valid dictionary", col))
			}
			var r Rule
			for field, dst := range map[string]**float64{"best_pct": &r.BestPct, "best_abs": &r.BestAbs, "fixed_limit": &r.FixedLimit} {
				switch x := rm[field].(type) {
				case nil:
				case float64:
					*dst = &x
				default:
					return nil, nil, raise("ValidationError", fmt.Sprintf("validation_rules.%s.%s: Input should be a valid number", col, field))
				}
			}
			rules[col] = r
		}
	}
	return tm, rules, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// higherIsBetter is the column's higher_is_better (nil: not tracked).
func (tm *TableMeta) higherIsBetter(column string) (hib *bool, known bool) {
	for _, c := range tm.Columns {
		if c.Name == column {
			return c.HigherIsBetter, true
		}
	}
	return nil, false
}

// updateBestResults is ResultsService.update_best_results: every numeric
// cell of a tracked column that beats the best so far becomes the best
// (before the cells are judged, so a first result is its own best). A
// numeric cell of a column the table does not declare is Python's KeyError
// on higher_is_better_map.
func (s *Server) updateBestResults(testID, table string, tm *TableMeta, cells []Cell, runID string) (map[string]best, *pyError) {
	out := map[string]best{}
	for _, c := range cells {
		key := c.Column + ":" + c.Row
		if b, ok := s.bests[bestKey{testID, table, key}]; ok {
			out[key] = b
		}
	}
	for _, c := range cells {
		if c.Value == nil {
			continue
		}
		hib, known := tm.higherIsBetter(c.Column)
		if !known {
			return nil, raise("KeyError", "'"+c.Column+"'", c.Column)
		}
		if hib == nil {
			continue
		}
		key := c.Column + ":" + c.Row
		cur, ok := out[key]
		if !ok || (*hib && *c.Value > cur.value) || (!*hib && *c.Value < cur.value) {
			out[key] = best{value: *c.Value, runID: runID}
			s.bests[bestKey{testID, table, key}] = out[key]
		}
	}
	return out, nil
}

// judge is Cell.update_cell_status_based_on_rules (results_service.py): an
// UNSET cell of a column with a rule and a direction is PASS when strictly
// better than every limit (the fixed limit, and best_pct/best_abs off the
// best result), else ERROR; any other cell keeps the status it was sent with.
func (c *Cell) judge(tm *TableMeta, bests map[string]best) *pyError {
	list := tm.Rules[c.Column]
	hib, _ := tm.higherIsBetter(c.Column)
	if len(list) == 0 || c.Status != "UNSET" || hib == nil {
		return nil
	}
	rule := list[len(list)-1]
	var limits []float64
	if rule.FixedLimit != nil {
		limits = append(limits, *rule.FixedLimit)
	}
	if b, ok := bests[c.Column+":"+c.Row]; ok {
		if rule.BestPct != nil {
			m := 1 + *rule.BestPct/100
			if *hib {
				m = 1 - *rule.BestPct/100
			}
			limits = append(limits, b.value*m)
		}
		if rule.BestAbs != nil {
			l := b.value + *rule.BestAbs
			if *hib {
				l = b.value - *rule.BestAbs
			}
			limits = append(limits, l)
		}
	}
	if c.Value == nil && len(limits) > 0 {
		op := "<"
		if *hib {
			op = ">"
		}
		return raise("TypeError", fmt.Sprintf("'%s' not supported between instances of 'NoneType' and 'float'", op))
	}
	c.Status = "PASS"
	for _, l := range limits {
		if *hib && !(*c.Value > l) || !*hib && !(*c.Value < l) {
			c.Status = "ERROR"
		}
	}
	return nil
}
