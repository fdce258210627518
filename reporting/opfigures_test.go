package reporting

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/elasticity-dev/elasticity/results"
)

// A run of a workload model whose operations are not its classes (run1's
// writes renamed insert, its reads split into read1 and read2): the cycles'
// write and read figures are those of the classes, result.json has the
// figures per operation, and each Argus latency table gets SCT's rows per
// HDR tag, which Argus's rules accept.
func TestModelOperationsInResultsAndArgus(t *testing.T) {
	dir := copyRun(t, filepath.Join("testdata", "run1"))
	before, err := Render(dir, Options{Formats: []string{FormatJSON}})
	if err != nil {
		t.Fatal(err)
	}
	var recs []results.LatencyRecord
	path := filepath.Join(dir, results.FileLatency)
	if err := results.ReadJSONL(path, func(_ int, r *results.LatencyRecord) error { recs = append(recs, *r); return nil }); err != nil {
		t.Fatal(err)
	}
	reads := 0
	for i := range recs {
		switch recs[i].Op {
		case results.OpWrite:
			recs[i].Op, recs[i].Class = "insert", results.OpWrite
		case results.OpRead:
			recs[i].Op, recs[i].Class = []string{"read1", "read2"}[reads%2], results.OpRead
			reads++
		}
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	w, err := results.OpenJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := Render(dir, Options{Formats: []string{FormatJSON}})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range res.Cycles {
		b := before.Cycles[i]
		if c.WriteP99MS != b.WriteP99MS || c.ReadP90MS != b.ReadP90MS || c.ReadOpsPerS != b.ReadOpsPerS || c.Errors != b.Errors {
			t.Errorf("%s: class figures %+v, before %+v", c.Name, c, b)
		}
		var names []string
		var readCount int64
		for _, o := range c.Ops {
			names = append(names, o.Name+"/"+o.Class)
			if o.Class == results.OpRead {
				readCount += o.Count
			}
		}
		if !slices.Equal(names, []string{"insert/write", "read1/read", "read2/read"}) || readCount == 0 {
			t.Errorf("%s: ops %v", c.Name, names)
		}
	}
	tables, err := ReadArgus(dir) // validates every table as Argus does
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if tb.Meta.Name != "mixed - grow - latencies" {
			continue
		}
		for _, row := range []string{"Cycle #1", "Cycle #1 (HDR tag: insert)", "Cycle #1 (HDR tag: read1)", "Cycle #3 (HDR tag: read2)"} {
			if !slices.Contains(tb.Meta.RowsMeta, row) {
				t.Errorf("rows %q lack %q", tb.Meta.RowsMeta, row)
			}
		}
		for _, c := range tb.Results {
			if c.Row == "Cycle #1 (HDR tag: insert)" && (c.Column == "P90 read" || c.Column == "P99 read") {
				t.Errorf("an insert in a read column: %+v", c)
			}
		}
		return
	}
	t.Fatal("no mixed - grow - latencies table")
}
