package reporting

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/elasticity-dev/elasticity/results"
)

// dataLossReason is why the data validations fail the run ("" when every
// one found every key with its value and read everything it meant to).
func dataLossReason(vs []results.Validation) string {
	var why []string
	for i := range vs {
		v := &vs[i]
		switch {
		case v.Lost() > 0:
			s := fmt.Sprintf("data lost after %s: %d missing and %d mismatched %ss at %s", v.After, v.Missing, v.Mismatched, v.KeyUnit(), v.Consistency)
			if owners := lossOwners(v); owners != "" {
				s += " (replicas: " + owners + ")"
			}
			why = append(why, s)
		case v.ReadErrors > 0:
			why = append(why, fmt.Sprintf("data validation after %s incomplete: %d reads failed at %s (%s)", v.After, v.ReadErrors, v.Consistency, v.Error))
		}
	}
	return strings.Join(why, "; ")
}

// lossOwners names the nodes owning the most lost keys, most first.
func lossOwners(v *results.Validation) string {
	nodes := append([]results.NodeLoss(nil), v.Nodes...)
	sort.SliceStable(nodes, func(i, j int) bool {
		return nodes[i].Missing+nodes[i].Mismatched > nodes[j].Missing+nodes[j].Mismatched
	})
	var out []string
	for _, n := range nodes {
		out = append(out, fmt.Sprintf("%s %d", n.Node, n.Missing+n.Mismatched))
	}
	return strings.Join(out, ", ")
}

// validationTables are the data validations: one row each, then the lost
// rows by token range and by replica (none when nothing was validated).
func validationTables(res *results.Result) []Table {
	if len(res.Validations) == 0 {
		return nil
	}
	// A workload model whose key is a partition counts partitions.
	u := res.Validations[0].KeyUnit() + "s"
	t := Table{ID: "data-validation", Name: "Data validation",
		Columns: []string{"after", "consistency", "keys written", "read one by one", "token ranges scanned", u + " scanned", "missing", "mismatched", "read errors", "duration [s]", "verdict"}}
	byRange := Table{ID: "data-validation-ranges", Name: "Data validation - lost " + u + " by token range",
		Columns: []string{"after", "range", "first token", "last token", "scanned", u + " expected", u + " found", "missing", "mismatched"}}
	byNode := Table{ID: "data-validation-nodes", Name: "Data validation - lost " + u + " by replica",
		Columns: []string{"after", "node", "missing", "mismatched", "of lost keys looked up"}}
	count := func(n int64) string { return strconv.FormatInt(n, 10) }
	for _, v := range res.Validations {
		if v.NotDone != "" {
			t.Rows = append(t.Rows, []Cell{{Value: v.After}, {Value: v.Consistency}, {Value: "—"}, {Value: "—"}, {Value: "—"}, {Value: "—"},
				{Value: "—"}, {Value: "—"}, {Value: "—"}, {Value: "—"}, {Value: "data validation: not done: " + v.NotDone}})
			continue
		}
		st, word := CellPassed, "pass"
		switch {
		case v.Lost() > 0:
			st, word = CellFailed, "FAIL: data lost"
		case v.ReadErrors > 0:
			st, word = CellFailed, "FAIL: incomplete"
		}
		lostCell := func(n int64) Cell {
			if n > 0 {
				return Cell{Value: count(n), Status: CellFailed, Threshold: "0"}
			}
			return Cell{Value: "0", Status: CellPassed, Threshold: "0"}
		}
		t.Rows = append(t.Rows, []Cell{{Value: v.After}, {Value: v.Consistency}, {Value: count(v.Keys - v.Unacked)},
			{Value: count(v.SampleKeys)}, {Value: fmt.Sprintf("%d of %d", v.ScannedRanges, results.RingParts)}, {Value: count(v.ScannedRows)},
			lostCell(v.Missing), lostCell(v.Mismatched), {Value: count(v.ReadErrors)}, {Value: strconv.FormatFloat(v.DurationS, 'f', 1, 64)}, {Value: word, Status: st}})
		for _, r := range v.Ranges {
			if r.Missing+r.Mismatched == 0 {
				continue
			}
			scanned, exp, found := "no (sample)", "", ""
			if r.Scanned {
				scanned, exp, found = "yes", count(r.Expected), count(r.Found)
			}
			byRange.Rows = append(byRange.Rows, []Cell{{Value: v.After}, {Value: fmt.Sprintf("%d/%d", r.Index+1, results.RingParts)},
				{Value: strconv.FormatInt(r.First, 10)}, {Value: strconv.FormatInt(r.Last, 10)}, {Value: scanned}, {Value: exp}, {Value: found},
				lostCell(r.Missing), lostCell(r.Mismatched)})
		}
		for _, n := range v.Nodes {
			byNode.Rows = append(byNode.Rows, []Cell{{Value: v.After}, {Value: n.Node}, lostCell(n.Missing), lostCell(n.Mismatched),
				{Value: strconv.Itoa(v.ReplicasLookedUp)}})
		}
	}
	t.Note = "The fill's keys are known and each key's value is a function of the key: sampled keys are read one by one and whole token ranges (of the ring cut into " +
		strconv.Itoa(results.RingParts) + " equal ranges) are scanned; a key whose fill write failed is not counted. Any missing or mismatched row fails the run."
	out := []Table{t}
	if len(byRange.Rows) > 0 {
		out = append(out, byRange)
	}
	if len(byNode.Rows) > 0 {
		byNode.Note = "A lost key counts once for each of its replicas (REST natural_endpoints); with a read at ONE the replica that lost it is among them."
		out = append(out, byNode)
	}
	return out
}
