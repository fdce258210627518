package cql_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
)

func setupErrorsKeyspace(t *testing.T, s *gocql.Session) {
	t.Helper()
	for _, q := range []string{
		`CREATE KEYSPACE e WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
		`CREATE TABLE e.t (k int PRIMARY KEY, v text)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func TestDriverErrors(t *testing.T) {
	mem := enginetest.NewMemory("test-cluster")
	var fail error
	f := &enginetest.Faulty{Backend: mem,
		WriteErr: func([]engine.Mutation, engine.Consistency) error { return fail },
		ReadErr:  func(engine.Read, engine.Consistency) error { return fail },
	}
	hp := enginetest.StartServer(t, "127.0.1.5:0", f)
	s := newSession(t, hp, "")
	setupErrorsKeyspace(t, s)

	err := s.Query(`SELEKT * FROM e.t`).Exec()
	if code(err) != gocql.ErrCodeSyntax || !strings.Contains(err.Error(), "SELEKT") {
		t.Errorf("garbage CQL: %v (code %#x)", err, code(err))
	}
	err = s.Query(`SELECT * FROM e.nosuch WHERE k = 1`).Exec()
	if code(err) != gocql.ErrCodeInvalid || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("unknown table: %v (code %#x)", err, code(err))
	}
	err = s.Query(`CREATE TABLE e.t (k int PRIMARY KEY)`).Exec()
	var ae *gocql.RequestErrAlreadyExists
	if !errors.As(err, &ae) || ae.Keyspace != "e" || ae.Table != "t" {
		t.Errorf("existing table: %v", err)
	}
	err = s.Query(`CREATE KEYSPACE e WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`).Exec()
	if !errors.As(err, &ae) || ae.Keyspace != "e" {
		t.Errorf("existing keyspace: %v", err)
	}
	if err := s.Query(`CREATE KEYSPACE IF NOT EXISTS e WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`).Exec(); err != nil {
		t.Errorf("IF NOT EXISTS: %v", err)
	}
	err = s.Query(`INSERT INTO e.t (k, v) VALUES (?, ?)`, "not-an-int", "x").Exec()
	if err == nil {
		t.Errorf("bad bind type accepted")
	}
	err = s.Query(`INSERT INTO e.t (v) VALUES ('x')`).Exec()
	if code(err) != gocql.ErrCodeInvalid || !strings.Contains(err.Error(), "partition key") {
		t.Errorf("missing pk: %v", err)
	}

	// Backend errors map to their protocol errors. The policy retries
	// some of them; the final error is what matters.
	s.Query(`SELECT 1`) // no-op, keeps the session warm
	fail = &engine.Error{Code: engine.CodeUnavailable, Message: "Cannot achieve consistency level QUORUM", Consistency: engine.Quorum, Required: 2, Alive: 1}
	err = s.Query(`INSERT INTO e.t (k, v) VALUES (1, 'a')`).Exec()
	var ue *gocql.RequestErrUnavailable
	if !errors.As(err, &ue) || ue.Required != 2 || ue.Alive != 1 || ue.Consistency != gocql.Quorum {
		t.Errorf("unavailable: %#v", err)
	}
	fail = &engine.Error{Code: engine.CodeWriteTimeout, Message: "Operation timed out", Consistency: engine.Quorum, Required: 2, Alive: 1}
	err = s.Query(`INSERT INTO e.t (k, v) VALUES (1, 'a')`).Exec()
	var wt *gocql.RequestErrWriteTimeout
	if !errors.As(err, &wt) || wt.BlockFor != 2 || wt.Received != 1 || wt.WriteType != "SIMPLE" {
		t.Errorf("write timeout: %#v", err)
	}
	fail = &engine.Error{Code: engine.CodeReadTimeout, Message: "Operation timed out", Consistency: engine.Quorum, Required: 2, Alive: 1}
	err = s.Query(`SELECT * FROM e.t WHERE k = 1`).Exec()
	var rt *gocql.RequestErrReadTimeout
	if !errors.As(err, &rt) || rt.BlockFor != 2 {
		t.Errorf("read timeout: %#v", err)
	}
	fail = &engine.Error{Code: engine.CodeWriteFailure, Message: "No space left on device", Consistency: engine.Quorum, Required: 2, Alive: 1, Failures: 1}
	err = s.Query(`INSERT INTO e.t (k, v) VALUES (1, 'a')`).Exec()
	var wf *gocql.RequestErrWriteFailure
	if !errors.As(err, &wf) || wf.NumFailures != 1 {
		t.Errorf("write failure: %#v", err)
	}
	fail = &engine.Error{Code: engine.CodeOverloaded, Message: "too many in-flight requests"}
	err = s.Query(`INSERT INTO e.t (k, v) VALUES (1, 'a')`).Exec()
	if code(err) != 0x1001 {
		t.Errorf("overloaded: %v", err)
	}
	fail = errors.New("disk exploded")
	err = s.Query(`INSERT INTO e.t (k, v) VALUES (1, 'a')`).Exec()
	if code(err) != gocql.ErrCodeServer || !strings.Contains(err.Error(), "disk exploded") {
		t.Errorf("plain error: %v", err)
	}
	fail = nil
	if err := s.Query(`INSERT INTO e.t (k, v) VALUES (1, 'a')`).Exec(); err != nil {
		t.Errorf("after errors: %v", err)
	}
}

// TestUnpreparedReprepare forgets prepared statements server-side (as a
// restarted node would) and checks the driver re-prepares transparently.
func TestUnpreparedReprepare(t *testing.T) {
	mem := enginetest.NewMemory("test-cluster")
	srv, hp := enginetest.StartServerOpts(t, "127.0.1.6:0", mem, cqlOptions())
	s := newSession(t, hp, "")
	setupErrorsKeyspace(t, s)
	q := `INSERT INTO e.t (k, v) VALUES (?, ?)`
	if err := s.Query(q, 1, "a").Exec(); err != nil {
		t.Fatal(err)
	}
	srv.ResetPrepared()
	if err := s.Query(q, 2, "b").Exec(); err != nil {
		t.Fatalf("after prepared cache reset: %v", err)
	}
	var v string
	if err := s.Query(`SELECT v FROM e.t WHERE k = ?`, 2).Scan(&v); err != nil || v != "b" {
		t.Fatalf("read back: %q %v", v, err)
	}
}

// TestBackendPanic checks a panicking backend yields SERVER_ERROR and the
// server keeps serving.
func TestBackendPanic(t *testing.T) {
	mem := enginetest.NewMemory("test-cluster")
	boom := true
	f := &enginetest.Faulty{Backend: mem, WriteErr: func([]engine.Mutation, engine.Consistency) error {
		if boom {
			panic("backend bug")
		}
		return nil
	}}
	hp := enginetest.StartServer(t, "127.0.1.7:0", f)
	s := newSession(t, hp, "")
	setupErrorsKeyspace(t, s)
	err := s.Query(`INSERT INTO e.t (k, v) VALUES (1, 'a')`).Exec()
	if code(err) != gocql.ErrCodeServer || !strings.Contains(err.Error(), "backend bug") {
		t.Fatalf("panic: %v", err)
	}
	boom = false
	if err := s.Query(`INSERT INTO e.t (k, v) VALUES (1, 'a')`).Exec(); err != nil {
		t.Fatalf("after panic: %v", err)
	}
	s2 := newSession(t, hp, "")
	var v string
	if err := s2.Query(`SELECT v FROM e.t WHERE k = 1`).Scan(&v); err != nil || v != "a" {
		t.Fatalf("new session after panic: %q %v", v, err)
	}
}

// code extracts the protocol error code from a driver error.
func code(err error) int {
	var re gocql.RequestError
	if errors.As(err, &re) {
		return re.Code()
	}
	var ef interface{ GetCode() int }
	if errors.As(err, &ef) {
		return ef.GetCode()
	}
	return -1
}
