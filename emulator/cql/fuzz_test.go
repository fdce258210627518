package cql_test

import (
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

var fuzzSeeds = []string{
	`CREATE KEYSPACE IF NOT EXISTS f WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
	`CREATE TABLE IF NOT EXISTS f.t (a text, b int, c timeuuid, d double, e blob, g map<text, int>, h boolean, i inet, j timestamp, l varint, PRIMARY KEY ((a, b), c, d)) WITH CLUSTERING ORDER BY (c DESC)`,
	`CREATE TABLE IF NOT EXISTS f.s (k bigint PRIMARY KEY, v text)`,
	`INSERT INTO f.t (a, b, c, d, e, g, h, i, j, l) VALUES ('x', 1, 123e4567-e89b-12d3-a456-426614174000, 1.5, 0xff, {'a': 1}, true, '127.0.0.1', '2024-01-01', -12345678901234567890)`,
	`INSERT INTO f.s (k, v) VALUES (1, 'one') USING TTL 10 AND TIMESTAMP 5`,
	`SELECT * FROM f.t WHERE a = 'x' AND b = 1 AND c = 123e4567-e89b-12d3-a456-426614174000 AND d > 1`,
	`SELECT COUNT(*) FROM f.s WHERE k IN (1, 2, 3) LIMIT 2`,
	`SELECT v AS w FROM f.s WHERE k = 1 AND v = 'one' ALLOW FILTERING`,
	`UPDATE f.s USING TTL 5 SET v = null WHERE k = 1`,
	`DELETE v FROM f.s WHERE k = 1`,
	`DELETE FROM f.t WHERE a = 'x' AND b = 1 AND c = 123e4567-e89b-12d3-a456-426614174000`,
	`BEGIN BATCH INSERT INTO f.s (k) VALUES (2); DELETE FROM f.s WHERE k = 3; APPLY BATCH`,
	`SELECT * FROM system_schema.columns WHERE keyspace_name = 'f' AND table_name IN ('t', 's')`,
	`SELECT peer, tokens FROM system.peers`,
	`USE f`,
	`TRUNCATE f.s`,
	`DROP TABLE IF EXISTS f.zz`,
}

// FuzzServerQuery sends arbitrary statements to a live server: every one
// must get an answer that is not an internal error, and the connection must
// stay up.
func FuzzServerQuery(f *testing.F) {
	for _, q := range fuzzSeeds {
		f.Add(q)
	}
	mem := enginetest.NewMemory("fuzz")
	hp := enginetest.StartServer(f, "127.0.1.11:0", mem)
	var rc *rawConn
	f.Fuzz(func(t *testing.T, q string) {
		if rc == nil || rc.t != t {
			rc = dialRaw(t, hp)
		}
		for _, setup := range fuzzSeeds[:3] {
			rc.send(1, &message.Query{Query: setup, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
			rc.recv()
		}
		if strings.Contains(strings.ToLower(q), "drop") {
			return // keep the schema the other inputs rely on
		}
		rc.send(2, &message.Query{Query: q, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
		fr := rc.recv()
		if se, ok := fr.Body.Message.(*message.ServerError); ok {
			t.Fatalf("%q: server error %s", q, se.ErrorMessage)
		}
		if _, ok := fr.Body.Message.(*message.ProtocolError); ok {
			t.Fatalf("%q: protocol error %v", q, fr.Body.Message)
		}
	})
}
