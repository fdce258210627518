package reporting

import (
	"fmt"
	"sort"
	"strings"

	"github.com/elasticity-dev/elasticity/results"
)

// RackBalanceTableName is SCT's name of the table (PeriodicDiskUsageToArgus).
const RackBalanceTableName = "DISK USAGE - rack balance"

// maxRackBalanceRows bounds the rows the report shows.
const maxRackBalanceRows = 40

// rackBalanceTable is SCT's "DISK USAGE - rack balance" table: one row per
// period, the time, every node's disk usage grouped by rack, and per rack
// RACK<rack> = max - min usage of its nodes, marked when above the threshold.
func rackBalanceTable(res *results.Result) []Table {
	spec := res.Setup.RackBalance
	if spec == nil || len(res.RackBalance) == 0 {
		return nil
	}
	racks := map[string][]string{}
	seen := map[string]bool{}
	for _, row := range res.RackBalance {
		for n, r := range row.Racks {
			if !seen[n] {
				seen[n] = true
				racks[r] = append(racks[r], n)
			}
		}
	}
	var rackNames []string
	for r, nodes := range racks {
		rackNames = append(rackNames, r)
		sort.Slice(nodes, func(i, j int) bool { return nodeLess(nodes[i], nodes[j]) })
	}
	sort.Strings(rackNames)
	cols := []string{"row", "time"}
	for _, r := range rackNames {
		cols = append(cols, racks[r]...)
		cols = append(cols, "RACK"+r)
	}
	t := Table{ID: "rack-balance", Name: RackBalanceTableName, Columns: cols}
	word := "warns"
	if spec.Fail {
		word = "fails the run"
	}
	t.Note = fmt.Sprintf("Disk usage (%%) per node every %s, and per rack the spread between its fullest and emptiest node (percentage points); a spread above %.0f points %s (thresholds.rack_balance).",
		HMS(spec.EverySeconds), spec.MaxSpreadPct, word)
	// A long run (or a short period) gives many rows: the report shows at
	// most maxRackBalanceRows, evenly spaced, and always the last.
	rows := res.RackBalance
	if n := len(rows); n > maxRackBalanceRows {
		step := (n + maxRackBalanceRows - 1) / maxRackBalanceRows
		var shown []results.RackBalanceRow
		for i := 0; i < n-1; i += step {
			shown = append(shown, rows[i])
		}
		rows = append(shown, rows[n-1])
		t.Note += fmt.Sprintf(" One row in %d of %d is shown (all are in result.json rack_balance).", step, n)
	}
	for _, row := range rows {
		cells := []Cell{{Value: row.Row}, {Value: row.Time.UTC().Format("15:04:05")}}
		for _, r := range rackNames {
			for _, n := range racks[r] {
				v, ok := row.Usage[n]
				if !ok {
					cells = append(cells, Cell{Value: ""})
					continue
				}
				cells = append(cells, Cell{Value: fmt.Sprintf("%.1f", v)})
			}
			sp, ok := row.Spread[r]
			if !ok {
				cells = append(cells, Cell{Value: ""})
				continue
			}
			st := CellPassed
			if sp > spec.MaxSpreadPct {
				st = CellWarning
				if spec.Fail {
					st = CellFailed
				}
			}
			cells = append(cells, Cell{Value: fmt.Sprintf("%.1f", sp), Status: st, Threshold: fmt.Sprintf("≤ %.0f", spec.MaxSpreadPct)})
		}
		t.Rows = append(t.Rows, cells)
	}
	return []Table{t}
}

// nodeLess orders node-2 before node-10.
func nodeLess(a, b string) bool {
	if len(a) != len(b) && strings.HasPrefix(a, "node-") && strings.HasPrefix(b, "node-") {
		return len(a) < len(b)
	}
	return a < b
}

// rackBalanceReason is why the rack balance fails the run ("" unless its
// action is fail and a rack's spread passed the threshold).
func rackBalanceReason(res *results.Result) string {
	spec := res.Setup.RackBalance
	if spec == nil || !spec.Fail {
		return ""
	}
	for _, row := range res.RackBalance {
		var racks []string
		for r, sp := range row.Spread {
			if sp > spec.MaxSpreadPct {
				racks = append(racks, fmt.Sprintf("%s %.1f", r, sp))
			}
		}
		if len(racks) > 0 {
			sort.Strings(racks)
			return fmt.Sprintf("rack balance: disk usage spread above %.0f points at %s (row %s): %s", spec.MaxSpreadPct, row.Time.UTC().Format("15:04:05"), row.Row, strings.Join(racks, ", "))
		}
	}
	return ""
}
