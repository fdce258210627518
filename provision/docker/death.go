package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/elasticity-dev/elasticity/provision"
)

// supervisorExit matches supervisord's lines saying the scylla program
// ended (supervisor/process.py: Subprocess.finish logs "exited: NAME (exit
// status N; not expected)" or "(terminated by SIGKILL; not expected)";
// transition logs "gave up: NAME entered FATAL state, too many start
// retries too quickly"), program name from
// dist/docker/etc/supervisord.conf.d/scylla-server.conf. A requested stop
// logs "stopped: scylla (...)" instead, which is not matched. Timestamps
// are supervisord's asctime in the container's time zone (UTC).
var supervisorExit = regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) (?:INFO|WARN|CRIT|ERRO) ((?:exited: scylla \(.*\))|(?:gave up: scylla entered FATAL state.*))$`)

// processEnd is the last end of a node's scylla seen in its container.
type processEnd struct {
	at   time.Time
	line string
}

// probeTimeout bounds each "does it still answer" check.
const probeTimeout = 2 * time.Second

// answers reports whether addr accepts a TCP connection.
func answers(addr string) error {
	c, err := net.DialTimeout("tcp", addr, probeTimeout)
	if err != nil {
		return err
	}
	return c.Close()
}

// watchLine is the log follower's hook: a supervisord line saying scylla
// ended marks the node's process as ended (for waits, NodeExited) and, once
// confirmed, reports the death on Exits.
func (p *Provider) watchLine(m *member, line string) {
	sm := supervisorExit.FindStringSubmatch(line)
	if sm == nil {
		return
	}
	t, err := time.ParseInLocation("2006-01-02 15:04:05,000", sm[1], time.UTC)
	if err != nil {
		t = time.Now().UTC()
	}
	p.mu.Lock()
	m.ended = &processEnd{at: t, line: sm[2]}
	node := m.node
	p.mu.Unlock()
	go p.confirmDeath(m, node, t, "supervisord: "+sm[2])
}

// confirmDeath reports a node dead when its log shows scylla stopped and
// its CQL port no longer answers; the REST port's state goes into the
// cause. A node whose CQL still answers (the supervisor has already
// restarted it and it rejoined) is logged, not reported.
func (p *Provider) confirmDeath(m *member, n provision.Node, t time.Time, why string) {
	p.mu.Lock()
	requested := m.requested
	p.mu.Unlock()
	if requested {
		return
	}
	cqlErr := answers(net.JoinHostPort(n.Address, strconv.Itoa(n.CQLPort)))
	restErr := answers(net.JoinHostPort(n.Address, strconv.Itoa(n.RESTPort)))
	if cqlErr == nil {
		p.logf("%s: %s, but its CQL port answers again: restarted by the supervisor", n.Name, why)
		return
	}
	rest := "REST does not answer either"
	if restErr == nil {
		rest = "REST answers (restarting)"
	}
	p.sendExit(provision.NodeExit{Node: n, Time: t, Err: fmt.Errorf("%s; CQL does not answer; %s", why, rest)})
}

// containerEnded is the log follower's end hook: the container stopped.
func (p *Provider) containerEnded(m *member) {
	p.mu.Lock()
	requested, n, c := m.requested, m.node, m.c
	p.mu.Unlock()
	if requested || c == nil {
		return
	}
	why := errors.New("container stopped")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = p.withClient(ctx, func(dc *testcontainers.DockerClient) error {
		res, err := dc.ContainerInspect(ctx, c.GetContainerID(), client.ContainerInspectOptions{})
		if err != nil || res.Container.State == nil {
			return err
		}
		st := res.Container.State
		if st.Running {
			why = nil // the log stream ended, not the container
		} else if st.OOMKilled {
			why = fmt.Errorf("container killed out of memory (limit %d MiB)", res.Container.HostConfig.Memory>>20)
		} else {
			why = fmt.Errorf("container exited with status %d", st.ExitCode)
		}
		return nil
	})
	if why != nil {
		p.sendExit(provision.NodeExit{Node: n, Time: time.Now().UTC(), Err: why})
	}
}

func (p *Provider) sendExit(e provision.NodeExit) {
	p.exitMu.Lock()
	defer p.exitMu.Unlock()
	if p.exitsClosed {
		return
	}
	select {
	case p.exits <- e:
	default:
		p.logf("%s died (%v) but nobody is reading the provider's exits", e.Node.Name, e.Err)
	}
}

// Exits implements provision.ExitNotifier: each unrequested end of a
// node's database process (supervisord says scylla exited and CQL no
// longer answers, or the container stopped). Closed by Destroy.
func (p *Provider) Exits() <-chan provision.NodeExit { return p.exits }
