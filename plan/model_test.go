package plan

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/elasticity-dev/elasticity/scenarios"
)

// loadPlan resolves a scenario file with --set overrides.
func loadPlan(t *testing.T, file string, sets ...string) *Plan {
	t.Helper()
	s, err := scenarios.Load(file, sets)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// planText is what `elasticity plan` prints for p.
func planText(t *testing.T, p *Plan) string {
	t.Helper()
	var b bytes.Buffer
	if err := p.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// wantText fails the test for each part the text lacks.
func wantText(t *testing.T, text string, parts ...string) {
	t.Helper()
	for _, part := range parts {
		if !strings.Contains(text, part) {
			t.Errorf("the plan does not say %q:\n%s", part, text)
		}
	}
}

// The fill's keys are the disk target's unique bytes over one key's bytes:
// dataset.value_size's for the built-in (unchanged: 1 KiB a key), the
// model's own for the others, however the target is reached.
func TestFillEstimateCountsTheModelsKeys(t *testing.T) {
	for _, c := range []struct {
		name     string
		sets     []string
		keyBytes float64
		unit     string
	}{
		{"built-in", nil, 1024, "row"},
		{"dataset.value_size range", []string{"dataset.value_size={min: 512B, max: 2KiB}"}, 1280, "row"},
		// the key's 10 bytes and five columns of 512
		{"cassandra-stress", []string{"workload.stress_cmd=cassandra-stress write cl=QUORUM -col size=FIXED(512) n=FIXED(5)"}, 10 + 5*512, "row"},
		// pk 8 and 100 rows of ck 8 and values uniform in [64, 128): 95.5 on average
		{"scylla-bench", []string{"workload.kind=write", "workload.clustering_row_count=100", "workload.clustering_row_size=uniform:64..128"}, 8 + 100*(8+95.5), "partition"},
		// counters: five of 8 bytes a row
		{"scylla-bench counters", []string{"workload.kind=counter_update", "workload.clustering_row_count=10"}, 8 + 10*(8+40), "partition"},
	} {
		p := loadPlan(t, "../configs/smoke.yaml", c.sets...)
		f := p.Fill[0]
		if want := int64(f.UniqueBytes / c.keyBytes); f.Rows != want || f.Rows == 0 {
			t.Errorf("%s: the fill writes %d keys of %.0f B unique, want %d keys of %g B", c.name, f.Rows, f.UniqueBytes, want, c.keyBytes)
		}
		if got := p.FillKeyBytes(); got != c.keyBytes {
			t.Errorf("%s: a fill key is %g B, want %g", c.name, got, c.keyBytes)
		}
		if u := p.Workload.Model.Unit(); u != c.unit {
			t.Errorf("%s: keys are %ss, want %ss", c.name, u, c.unit)
		}
		wantText(t, planText(t, p), "unique data  "+c.unit+"s")
	}
}

// A scylla-bench key is a partition: the plan counts the fill, the
// validation's reads and what fails the run in partitions, and the fill's
// rate in partitions of ≈10 KiB.
func TestPlanTextOfScyllaBench(t *testing.T) {
	p := loadPlan(t, "../configs/smoke.yaml", "workload.kind=write,partition-offset=1000",
		"workload.clustering_row_count=100", "workload.clustering_row_size=uniform:64..128")
	text := planText(t, p)
	wantText(t, text, "values the workload model's (≈10.12 KiB a partition)",
		"a key is a partition of ≈10.12 KiB (the means of the model's sizes), written in ≈1 request(s) by the fill",
		"10000 partitions read back and 4 of 32 token ranges scanned", "any missing or wrong partition fails the run",
		"to reach 10%: ≈947 partitions")
	if p.Workload.Model.NotValidated != "" {
		t.Errorf("scylla-bench is validated, the plan says not: %s", p.Workload.Model.NotValidated)
	}
	// A partition of 1000 rows of 512 B is written in batches of 64 KiB:
	// 8 requests, and the estimate counts each.
	p8 := loadPlan(t, "../configs/smoke.yaml", "workload.kind=write", "workload.clustering_row_count=1000", "workload.clustering_row_size=512")
	if mp := p8.Workload.Model; mp.KeyWrites != 8 {
		t.Errorf("a partition of 1000 rows of 512 B is written in %g requests, want 8 (128 rows of 64 KiB a batch)", mp.KeyWrites)
	}
}

// A user profile's key is a partition of its clustering columns' mean
// rows; its rows are not regenerable, and the plan says data validation
// is not done and why, as the run records it.
func TestPlanTextOfProfile(t *testing.T) {
	p := loadPlan(t, "../configs/sensor-readings.yaml")
	mp := p.Workload.Model
	// configs/profiles/sensor-readings.yaml: a partition is a sensor_id
	// (uuid, 16) and a day (date, 4), and uniform(50..150) = 100 rows of
	// ts 8, temperature 8, humidity 4, status 5 (uniform(2..8)), tags
	// 4+2×(4+2) = 16 (a set of uniform(1..3) texts as long), attrs
	// 4+2.5×(4+2.5+4+2.5) = 36.5 and payload 200 (uniform(100..300)): the
	// distributions' means; the model averages its generators' draws.
	want := 16 + 4 + 100*(8+8+4+5+16+36.5+200)
	if math.Abs(mp.KeyBytes-want) > 0.01*want || mp.KeyWrites != 10 || mp.Unit() != "partition" {
		t.Errorf("a sensor-day is %g B in %g requests (%s), want %g B ±1%% in 10 (a tenth of its rows a batch), a partition", mp.KeyBytes, mp.KeyWrites, mp.Unit(), want)
	}
	if f := p.Fill[0]; f.Rows != int64(f.UniqueBytes/mp.KeyBytes) {
		t.Errorf("the fill writes %d partitions, want %d", f.Rows, int64(f.UniqueBytes/mp.KeyBytes))
	}
	text := planText(t, p)
	wantText(t, text, "Data validation: not done: the rows of profile sensor-readings.yaml (sensors.readings: operations insert, latest, slice) cannot be regenerated from their keys",
		"unique data  partitions")
	if strings.Contains(text, "read back and") {
		t.Errorf("the plan promises a read back of a profile's rows:\n%s", text)
	}
}

// cassandra-stress counters cannot be regenerated: the plan says
// validation is not done, as for a profile; its rows are counted as rows.
func TestPlanTextOfCassandraStressCounters(t *testing.T) {
	p := loadPlan(t, "../configs/smoke.yaml", "workload.stress_cmd=cassandra-stress counter_write cl=QUORUM -col n=FIXED(5)")
	text := planText(t, p)
	wantText(t, text, "Data validation: not done: the rows of cassandra-stress counter_write", "unique data  rows",
		"values the workload model's (≈50 B a row)")
	if strings.Contains(text, "read back and") {
		t.Errorf("the plan promises a read back of counters:\n%s", text)
	}
}
