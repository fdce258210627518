package cql_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/cql"
	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

// CQL's per-row TTL (test/cqlpy test_ttl_row.py): the TTL column is a
// table tag (create_table_statement.cc, alter_table_statement.cc type::ttl),
// DESC TABLE marks it (schema.cc), and the expiration service
// (alternator/ttl.cc) deletes the rows whose expiration time has come.
func TestRowTTL(t *testing.T) {
	srv, hp := enginetest.StartServerOpts(t, "127.0.1.57:0", enginetest.NewMemory("rowttl"), cql.Options{TTLPeriod: 20 * time.Millisecond})
	s := newSession(t, hp, "")
	exec := func(q string) {
		t.Helper()
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`)
	exec(`CREATE TABLE ks.t (p int, c int, e timestamp TTL, x bigint, PRIMARY KEY (p, c))`)
	var desc string
	if err := s.Query(`DESC TABLE ks.t`).Scan(nil, nil, nil, &desc); err != nil || !strings.Contains(desc, "\n    e timestamp TTL,") {
		t.Fatalf("DESC TABLE marks the TTL column: %v\n%s", err, desc)
	}
	for q, want := range map[string]string{
		`CREATE TABLE ks.two (p int PRIMARY KEY, a int TTL, b int TTL)`: "Cannot have more than one TTL column in a table. Saw a and b",
		`CREATE TABLE ks.bad (p int PRIMARY KEY, a text TTL)`:           "TTL column 'a' must be of type timestamp, bigint or int, can't be text",
		`CREATE TABLE ks.key (p int TTL PRIMARY KEY)`:                   "TTL column p cannot be part of the PRIMARY KEY",
		`ALTER TABLE ks.t TTL x`:                                        "Cannot set TTL column, table ks.t already has a TTL column defined: e",
		`ALTER TABLE ks.t TTL c`:                                        "Cannot use a primary key column c as a TTL column",
		`ALTER TABLE ks.t TTL nope`:                                     "Column 'nope' does not exist in table ks.t",
		`ALTER TABLE ks.t RENAME e TO f`:                                "Cannot rename non PRIMARY KEY part e",
	} {
		if err := s.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", q, err, want)
		}
	}
	exec(`ALTER TABLE ks.t TTL NULL`)
	exec(`ALTER TABLE ks.t TTL x`) // bigint: seconds since the epoch
	exec(`ALTER TABLE ks.t RENAME c TO cc`)
	now := time.Now()
	for c, at := range []int64{now.Unix() - 60, now.Unix() + 3600, now.AddDate(-6, 0, 0).Unix()} {
		if err := s.Query(`INSERT INTO ks.t (p, cc, x) VALUES (1, ?, ?)`, c, at).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.RunExpiration(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for srv.ExpirationStats().ItemsDeleted == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	var left []int
	iter := s.Query(`SELECT cc FROM ks.t WHERE p = 1`).Iter()
	var c int
	for iter.Scan(&c) {
		left = append(left, c)
	}
	if err := iter.Close(); err != nil || len(left) != 2 || left[0] != 1 || left[1] != 2 {
		// Row 0 expired; row 1 is in the future; row 2 is more than 5 years
		// old, which ttl.cc is_expired takes as malformed.
		t.Errorf("rows left %v (%v), want [1 2]; stats %+v", left, err, srv.ExpirationStats())
	}
}
