package results

import (
	"reflect"
	"testing"
	"time"
)

// A model's operations count in their class (write and read figures) and
// each has its own figures per cycle; the built-in's records (no class)
// give write and read operations.
func TestComputeByClassAndPerOp(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	events := []Event{
		{Time: at(0), Type: EventRunStart, Setup: &Setup{Scenario: "s"}},
		{Time: at(0), Type: EventCycleStart, Cycle: "Cycle #0"},
		{Time: at(2), Type: EventCycleEnd, Cycle: "Cycle #0"},
	}
	insert := latRec(t, "insert", at(0), 1000, 1000, 1000, 1000)
	insert.Class = OpWrite
	insert.Errors = map[string]int64{"timeout": 2}
	counter := latRec(t, "counter_write", at(1), 8000, 8000)
	counter.Class, counter.Dropped = OpWrite, 3
	read1 := latRec(t, "read1", at(0), 2000, 2000)
	read1.Class = OpRead
	read1b := latRec(t, "read1", at(1), 4000, 4000)
	read1b.Class = OpRead
	fill := latRec(t, OpFill, at(0), 500)
	res, err := Compute(runDir(t, events, []LatencyRecord{fill, insert, read1, counter, read1b}, nil))
	if err != nil {
		t.Fatal(err)
	}
	c := res.Cycles[0]
	// Writes: 4 inserts and 2 counter writes over 2 s; reads: 4 read1.
	if c.WriteOpsPerS != 3 || c.ReadOpsPerS != 2 || c.Errors != 2 || c.Dropped != 3 {
		t.Fatalf("class figures %+v", c)
	}
	if c.WriteP99MS < 7.9 || c.ReadP99MS < 3.9 || c.ReadP90MS > 4.01 {
		t.Fatalf("class latencies %+v", c)
	}
	var got []string
	for _, o := range c.Ops {
		got = append(got, o.Name+"/"+o.Class)
	}
	if want := []string{"insert/write", "read1/read", "counter_write/write"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("ops %v, want %v", got, want)
	}
	ins, rd, cw := c.Ops[0], c.Ops[1], c.Ops[2]
	if ins.Count != 4 || ins.OpsPerS != 2 || ins.Errors != 2 || ins.P50MS < 0.99 || ins.P99MS > 1.01 {
		t.Errorf("insert %+v", ins)
	}
	if rd.Count != 4 || rd.P50MS < 1.99 || rd.P50MS > 2.01 || rd.P99MS < 3.99 || rd.P99MS > 4.01 {
		t.Errorf("read1 %+v", rd)
	}
	if cw.Count != 2 || cw.Dropped != 3 || cw.P90MS < 7.99 {
		t.Errorf("counter_write %+v", cw)
	}

	// The built-in's records: write and read, named by their class.
	res, err = Compute(runDir(t, events, []LatencyRecord{latRec(t, OpWrite, at(0), 1000), latRec(t, OpRead, at(0), 2000)}, nil))
	if err != nil {
		t.Fatal(err)
	}
	ops := res.Cycles[0].Ops
	if len(ops) != 2 || ops[0].Name != OpWrite || ops[0].Class != OpWrite || ops[1].Name != OpRead || ops[1].Class != OpRead {
		t.Fatalf("built-in ops %+v", ops)
	}
}
