package cql_test

import (
	"fmt"
	"testing"
)

// A batch's statements on one partition merge as ScyllaDB merges them
// (batch_statement.cc: one timestamp for the statements that give none,
// one mutation per partition; a deletion wins a timestamp tie), whatever
// their order in the batch. (The driver reads a null int as 0.)
func TestBatchDeletionsMergeByTimestamp(t *testing.T) {
	_, s, exec := memorySession(t, "batchorder", "127.0.1.244:0")
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (pk int, c int, s int STATIC, v int, PRIMARY KEY (pk, c))`)
	for pk, c := range []struct{ batch, want string }{
		// The cqlpy reproducer, and the same statements the other way round.
		{`DELETE FROM ks.t USING TIMESTAMP 100 WHERE pk = %[1]d; UPDATE ks.t USING TIMESTAMP 101 SET v = 6 WHERE pk = %[1]d AND c = 0;`, "[map[c:0 pk:%d s:0 v:6]]"},
		{`UPDATE ks.t USING TIMESTAMP 101 SET v = 6 WHERE pk = %[1]d AND c = 0; DELETE FROM ks.t USING TIMESTAMP 100 WHERE pk = %[1]d;`, "[map[c:0 pk:%d s:0 v:6]]"},
		// A tie: the deletion wins, before or after the write.
		{`UPDATE ks.t USING TIMESTAMP 100 SET v = 6 WHERE pk = %[1]d AND c = 0; DELETE FROM ks.t USING TIMESTAMP 100 WHERE pk = %[1]d;`, "[]"},
		{`DELETE FROM ks.t USING TIMESTAMP 100 WHERE pk = %[1]d AND c = 0; UPDATE ks.t USING TIMESTAMP 100 SET v = 6 WHERE pk = %[1]d AND c = 0;`, "[map[c:0 pk:%d s:2 v:0]]"},
		// Without timestamps the batch's one timestamp makes a tie too.
		{`INSERT INTO ks.t (pk, c, v) VALUES (%[1]d, 0, 6); DELETE FROM ks.t WHERE pk = %[1]d;`, "[]"},
	} {
		exec(fmt.Sprintf(`INSERT INTO ks.t (pk, c, s, v) VALUES (%d, 0, 2, 5) USING TIMESTAMP 50`, pk))
		exec(`BEGIN BATCH ` + fmt.Sprintf(c.batch, pk) + ` APPLY BATCH`)
		want := c.want
		if want != "[]" {
			want = fmt.Sprintf(want, pk)
		}
		if got := fmt.Sprint(selectAll(t, s, fmt.Sprintf(`SELECT * FROM ks.t WHERE pk = %d`, pk))); got != want {
			t.Errorf("%s: %s, want %s", c.batch, got, want)
		}
	}
}
