package docker

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
)

// supervisord's lines for the scylla program (supervisor/process.py:
// finish and transition; asctime "2006-01-02 15:04:05,000").
func TestSupervisorExitLines(t *testing.T) {
	for _, tc := range []struct {
		line string
		want string
	}{
		{"2026-12-01 20:29:51,209 WARN exited: scylla (exit status 2; not expected)", "exited: scylla (exit status 2; not expected)"},
		{"2026-12-01 20:29:51,209 WARN exited: scylla (terminated by SIGKILL; not expected)", "exited: scylla (terminated by SIGKILL; not expected)"},
		{"2026-12-01 20:29:57,460 INFO gave up: scylla entered FATAL state, too many start retries too quickly", "gave up: scylla entered FATAL state, too many start retries too quickly"},
		{"2026-12-01 20:29:51,209 INFO stopped: scylla (exit status 0)", ""},                            // a requested stop
		{"2026-12-01 20:29:51,209 WARN exited: scylla-node-exporter (exit status 1; not expected)", ""}, // another program
		{"INFO  2026-12-01 20:29:51,207 [shard 0:main] init - exited: scylla (x)", ""},                  // a ScyllaDB line
	} {
		m := supervisorExit.FindStringSubmatch(tc.line)
		got := ""
		if m != nil {
			got = m[2]
		}
		if got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.line, got, tc.want)
		}
	}
}

func freeNode(t *testing.T) (provision.Node, net.Listener, net.Listener) {
	t.Helper()
	cql, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rest, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := func(l net.Listener) int {
		p, _ := strconv.Atoi(l.Addr().(*net.TCPAddr).AddrPort().String()[len("127.0.0.1:"):])
		return p
	}
	return provision.Node{Name: "node-2", Address: "127.0.0.1", CQLPort: port(cql), RESTPort: port(rest)}, cql, rest
}

// A node is dead when its log shows scylla ended and its CQL no longer
// answers; waits see the end at once (NodeExited), the time is the line's, in UTC.
func TestDeathFromSupervisorLineAndProbe(t *testing.T) {
	p := New(Options{})
	n, cql, rest := freeNode(t)
	defer rest.Close()
	cql.Close() // scylla is gone: nothing listens on CQL any more
	m := &member{node: n}
	p.nodes[n.Name] = m
	p.watchLine(m, "2026-12-01 20:29:51,209 WARN exited: scylla (terminated by SIGKILL; not expected)")
	if exited, why := p.NodeExited("node-2"); !exited || !strings.Contains(why.Error(), "terminated by SIGKILL") {
		t.Fatalf("NodeExited %v %v", exited, why)
	}
	select {
	case e := <-p.Exits():
		if e.Node.Name != "node-2" || !e.Time.Equal(time.Date(2026, 12, 1, 20, 29, 51, 209e6, time.UTC)) ||
			!strings.Contains(e.Err.Error(), "supervisord: exited: scylla (terminated by SIGKILL; not expected); CQL does not answer; REST answers") {
			t.Fatalf("exit %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no exit reported")
	}
}

// CQL still answering (the supervisor restarted it and it came back) or a
// stop the provider asked for: no death.
func TestNoDeathWhenCQLAnswersOrRequested(t *testing.T) {
	p := New(Options{})
	n, cql, rest := freeNode(t)
	defer cql.Close()
	defer rest.Close()
	m := &member{node: n}
	p.nodes[n.Name] = m
	p.confirmDeath(m, n, time.Now(), "supervisord: exited: scylla (exit status 1; not expected)")
	m2 := &member{node: n, requested: true}
	cql.Close()
	p.confirmDeath(m2, n, time.Now(), "supervisord: exited: scylla (exit status 1; not expected)")
	select {
	case e := <-p.Exits():
		t.Fatalf("unexpected exit %+v", e)
	default:
	}
}

func TestLineTee(t *testing.T) {
	var lines []string
	var sb strings.Builder
	lt := &lineTee{w: &sb, line: func(l string) { lines = append(lines, l) }}
	lt.Write([]byte("a\nb"))
	lt.Write([]byte("c\r\nd"))
	if sb.String() != "a\nbc\r\nd" || strings.Join(lines, "|") != "a|bc" {
		t.Fatalf("%q %q", sb.String(), lines)
	}
}
