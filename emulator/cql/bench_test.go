package cql_test

import (
	"testing"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

// BenchmarkPreparedInsertNull measures the front end's per-request cost: a
// prepared INSERT through gocql against a backend that does nothing.
func BenchmarkPreparedInsertNull(b *testing.B) {
	hp := enginetest.StartServer(b, "127.0.1.3:0", enginetest.NewNull())
	s := newSession(b, hp, "")
	if err := s.Query(`CREATE KEYSPACE bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`).Exec(); err != nil {
		b.Fatal(err)
	}
	if err := s.Query(`CREATE TABLE bench.kv (pk bigint PRIMARY KEY, v blob)`).Exec(); err != nil {
		b.Fatal(err)
	}
	val := make([]byte, 128)
	b.Run("serial", func(b *testing.B) {
		q := s.Query(`INSERT INTO bench.kv (pk, v) VALUES (?, ?)`).Consistency(gocql.Quorum)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := q.Bind(int64(i), val).Exec(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.SetParallelism(16)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			q := s.Query(`INSERT INTO bench.kv (pk, v) VALUES (?, ?)`).Consistency(gocql.Quorum)
			i := int64(0)
			for pb.Next() {
				i++
				if err := q.Bind(i, val).Exec(); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
