package cql_test

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/cql"
	"github.com/elasticity-dev/elasticity/emulator/engine/enginetest"
	"github.com/gocql/gocql"
)

// loginSession connects as user/password (PasswordAuthenticator's SASL
// PLAIN exchange).
func loginSession(t *testing.T, hostport, user, password string) (*gocql.Session, error) {
	t.Helper()
	host, port, _ := net.SplitHostPort(hostport)
	cluster := gocql.NewCluster(host)
	cluster.Port, _ = strconv.Atoi(port)
	cluster.Timeout, cluster.ConnectTimeout = 5*time.Second, 5*time.Second
	cluster.Authenticator = gocql.PasswordAuthenticator{Username: user, Password: password}
	s, err := cluster.CreateSession()
	if err == nil {
		t.Cleanup(s.Close)
	}
	return s, err
}

func mustExec(t *testing.T, s *gocql.Session, q string) {
	t.Helper()
	if err := s.Query(q).Exec(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// With AllowAllAuthenticator (the default) every client is anonymous and
// ScyllaDB refuses role statements in client_state::ensure_not_anonymous
// (cql3/statements/role-management-statements.cc check_access); service
// levels need only permissions, which AllowAllAuthorizer grants.
func TestRolesAnonymousUnderAllowAll(t *testing.T) {
	_, s, exec := memorySession(t, "auth", "127.0.1.92:0")
	for _, q := range []string{"CREATE ROLE r", "LIST ROLES", "GRANT a TO b", "GRANT SELECT ON ALL KEYSPACES TO r", "DROP ROLE r"} {
		err := s.Query(q).Exec()
		if err == nil || !strings.Contains(err.Error(), "You have to be logged in and not anonymous to perform this request") {
			t.Errorf("%s: %v, want the anonymous refusal", q, err)
		}
	}
	exec("CREATE SERVICE LEVEL sl WITH SHARES = 300")
	var name, workload string
	var shares int
	if err := s.Query("LIST SERVICE LEVEL driver").Scan(&name, new(gocql.Duration), &workload, &shares); err != nil || name != "driver" || workload != "batch" || shares != 200 {
		t.Errorf("LIST SERVICE LEVEL driver: %q %q %d %v (want sl:driver, batch, 200: service_level_controller.cc)", name, workload, shares, err)
	}
}

// PasswordAuthenticator: cassandra/cassandra logs in, wrong passwords are
// refused (password_authenticator.cc); roles, role grants, permissions and
// service levels come back from DESC SCHEMA WITH INTERNALS as
// auth/service.cc describe_auth and service_level_controller.cc print them.
func TestRolesDescribedWithInternals(t *testing.T) {
	_, hp := enginetest.StartServerOpts(t, "127.0.1.93:0", enginetest.NewMemory("auth"), cql.Options{Authenticator: cql.PasswordAuthenticator})
	if _, err := loginSession(t, hp, "cassandra", "wrong"); err == nil || !strings.Contains(err.Error(), "Username and/or password are incorrect") {
		t.Fatalf("login with a wrong password: %v", err)
	}
	s, err := loginSession(t, hp, "cassandra", "cassandra")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE ROLE "myRole"`, `CREATE ROLE bob WITH PASSWORD = 'pw' AND LOGIN = true`,
		`CREATE ROLE 'x''y' WITH HASHED PASSWORD = 'h''1'`, `GRANT "myRole" TO bob`,
		`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'replication_factor': 1}`,
		`GRANT ALL ON KEYSPACE ks TO bob`, `REVOKE DROP ON KEYSPACE ks FROM bob`,
		`CREATE SERVICE LEVEL sl WITH TIMEOUT = 2s AND WORKLOAD_TYPE = 'interactive'`, `ATTACH SERVICE LEVEL sl TO bob`,
		`ALTER SERVICE LEVEL driver WITH SHARES = 123`,
	} {
		mustExec(t, s, q)
	}
	var got []string
	for _, r := range descRows(t, s, "DESC SCHEMA WITH INTERNALS AND PASSWORDS") {
		if r["keyspace_name"] == "" && r["type"] != "role" || r["name"] == "bob" && r["type"] == "role" {
			continue // bob's salted hash is random
		}
		if r["keyspace_name"] == "" {
			got = append(got, r["type"].(string)+"|"+r["name"].(string)+"|"+r["create_statement"].(string))
		}
	}
	for _, r := range descRows(t, s, "DESC SCHEMA WITH INTERNALS") {
		if r["keyspace_name"] == "" && r["type"] != "role" {
			got = append(got, r["type"].(string)+"|"+r["name"].(string)+"|"+r["create_statement"].(string))
		}
	}
	want := []string{
		`role|cassandra|CREATE ROLE IF NOT EXISTS cassandra WITH HASHED PASSWORD = '` + "", // hash checked by prefix below
		`role|"myRole"|CREATE ROLE "myRole" WITH LOGIN = false AND SUPERUSER = false;`,
		`role|"x'y"|CREATE ROLE "x'y" WITH HASHED PASSWORD = 'h''1' AND LOGIN = false AND SUPERUSER = false;`,
		`grant_role|"myRole"|GRANT "myRole" TO bob;`,
		`grant_permission|bob|GRANT ALTER ON KEYSPACE ks TO bob;`,
		`grant_permission|bob|GRANT AUTHORIZE ON KEYSPACE ks TO bob;`,
		`grant_permission|bob|GRANT CREATE ON KEYSPACE ks TO bob;`,
		`grant_permission|bob|GRANT MODIFY ON KEYSPACE ks TO bob;`,
		`grant_permission|bob|GRANT SELECT ON KEYSPACE ks TO bob;`,
		`service_level|sl|CREATE SERVICE LEVEL sl WITH TIMEOUT = 2000ms AND WORKLOAD_TYPE = 'interactive' AND SHARES = 1000;`,
		`service_level|driver|CREATE SERVICE LEVEL IF NOT EXISTS driver WITH WORKLOAD_TYPE = 'batch' AND SHARES = 123;`,
		`service_level|driver|ALTER SERVICE LEVEL driver WITH WORKLOAD_TYPE = 'batch' AND SHARES = 123;`,
		`service_level_attachment|sl|ATTACH SERVICE LEVEL sl TO bob;`,
	}
	if len(got) != len(want) {
		t.Fatalf("DESC SCHEMA WITH INTERNALS auth rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		if got[i] != want[i] && !(want[i] != "" && strings.HasSuffix(want[i], "'") && strings.HasPrefix(got[i], want[i]+"$6$")) {
			t.Errorf("row %d: %s\nwant %s", i, got[i], want[i])
		}
	}
	// Non-superusers may not see passwords nor create roles.
	b, err := loginSession(t, hp, "bob", "pw")
	if err != nil {
		t.Fatal(err)
	}
	for q, msg := range map[string]string{
		"DESC SCHEMA WITH INTERNALS AND PASSWORDS": "DESCRIBE SCHEMA WITH INTERNALS AND PASSWORDS can only be issued by a superuser",
		"CREATE ROLE r2": "User bob has no CREATE permission on <all roles> or any of its parents",
	} {
		if err := b.Query(q).Exec(); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("bob: %s: %v, want %q", q, err, msg)
		}
	}
	var salted string
	if err := s.Query("SELECT salted_hash FROM system.roles WHERE role = 'x''y'").Scan(&salted); err != nil || salted != "h'1" {
		t.Errorf("system.roles salted_hash: %q %v", salted, err)
	}
}
