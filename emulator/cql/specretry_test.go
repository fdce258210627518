package cql_test

import (
	"testing"
)

// speculative_retry is read case-insensitively, checked and stored in
// ScyllaDB's form (schema/schema.cc speculative_retry::from_sstring,
// to_sstring); test/cqlpy test_alter_table.py's speculative_retry tests.
func TestSpeculativeRetryOption(t *testing.T) {
	_, s, exec := memorySession(t, "specretry", "127.0.1.249:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int PRIMARY KEY) WITH speculative_retry = '50percentile'`)
	stored := func() string {
		t.Helper()
		var v string
		if err := s.Query(`SELECT speculative_retry FROM system_schema.tables WHERE keyspace_name = 'ks' AND table_name = 't'`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got := stored(); got != "50.0PERCENTILE" {
		t.Errorf("CREATE with 50percentile: %q", got)
	}
	for v, want := range map[string]string{"none": "NONE", "ALWAYS": "ALWAYS", "200ms": "200.00ms", "0ms": "0.00ms",
		"99PERCENTILE": "99.0PERCENTILE", "99.0percentile": "99.0PERCENTILE", "+5percentile": "5.0PERCENTILE"} {
		exec(`ALTER TABLE ks.t WITH speculative_retry = '` + v + `'`)
		if got := stored(); got != want {
			t.Errorf("%s: stored %q, want %q", v, got, want)
		}
	}
	for _, v := range []string{"", "x", "ms", "percentile", "dog", "nanPERCENTILE", "infPERCENTILE", "-infPERCENTILE",
		"nanms", "infms", "-1ms", "101PERCENTILE", "-0.1PERCENTILE"} {
		wantErr(t, s, `ALTER TABLE ks.t WITH speculative_retry = '`+v+`'`, 0x2300, "speculative_retry")
	}
}
