package dockertest

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/provision/docker"
	"github.com/gocql/gocql"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
)

// The doubles built by EmulatorImages behave as the real scylladb/scylla
// images of their versions where the framework looks (scylladb/scylladb
// dist/docker/ at the release tags):
//   - redhat/build_docker.sh: the version in the
//     org.opencontainers.image.version label ("$version-$release") and
//     `scylla --version` (main.cc, release.cc scylla_version()), never in
//     the tag; /var/lib/scylla a volume (bconfig --volume);
//   - df -P -B1 /var/lib/scylla (coreutils df) answers from the data
//     filesystem: a tmpfs mounted there, else the anonymous volume on the
//     host's filesystem;
//   - supervisord.conf.d/scylla-node-exporter.conf: node_exporter runs up
//     to 2026.2 and not in 2026.3 (removed first in scylla-2026.3.0-rc0);
//   - commandlineparser.py/scyllasetup.py: 2025.4.0 given
//     --blocked-reactor-notify-ms passes it on as an extra argument beside
//     its hard-coded one, and scylla refuses to start.
func TestImagesBehaveAsTheRealOnes(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a Docker engine and an image build (-short)")
	}
	c, err := Client(context.Background())
	if err != nil {
		t.Skip(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tags, _, err := EmulatorImages(ctx, c, t.TempDir(), Versions...)
	if err != nil {
		t.Fatal(err)
	}
	byVersion := map[string]string{}
	for i, v := range Versions {
		byVersion[v] = tags[i]
		ins, err := c.ImageInspect(ctx, tags[i])
		if err != nil {
			t.Fatal(err)
		}
		if got := ins.Config.Labels["org.opencontainers.image.version"]; got != v+"-0.emulated" {
			t.Errorf("%s: org.opencontainers.image.version = %q, want %s-0.emulated", tags[i], got, v)
		}
		if got := ins.Config.Labels["version"]; got != v {
			t.Errorf("%s: version label = %q, want %s", tags[i], got, v)
		}
		if _, ok := ins.Config.Volumes["/var/lib/scylla"]; !ok {
			t.Errorf("%s: /var/lib/scylla is not a volume: %v", tags[i], ins.Config.Volumes)
		}
	}
	// A floating tag names whatever the image is: the label still says 2025.4.5.
	alias := Tag("floating-2025.4")
	if err := TagAlias(ctx, c, byVersion["2025.4.5"], alias); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.ImageRemove(context.Background(), alias, client.ImageRemoveOptions{}) })
	if ins, err := c.ImageInspect(ctx, alias); err != nil || ins.Config.Labels["org.opencontainers.image.version"] != "2025.4.5-0.emulated" {
		t.Errorf("%s: %v %v", alias, err, ins.Config)
	}

	t.Run("tmpfs at /var/lib/scylla, node_exporter, scylla --version", func(t *testing.T) {
		n := start(t, ctx, byVersion["2025.4.0"], map[string]string{"/var/lib/scylla": "rw,size=64m"})
		row := df(t, ctx, n)
		if row[0] != "tmpfs" || row[1] != strconv.Itoa(64<<20) || row[5] != "/var/lib/scylla" {
			t.Errorf("df on a 64 MiB tmpfs: %v", row)
		}
		if out := execOut(t, ctx, n, "scylla", "--version"); out != "2025.4.0-0.emulated\n" {
			t.Errorf("scylla --version: %q", out)
		}
		waitOutput(t, ctx, n, []string{"supervisorctl", "status"}, "scylla-node-exporter")
	})
	t.Run("unmounted: the host's filesystem; 2026.3 has no node_exporter", func(t *testing.T) {
		n := start(t, ctx, byVersion["2026.3.0"], nil)
		row := df(t, ctx, n)
		if row[0] == "tmpfs" || row[5] != "/var/lib/scylla" {
			t.Errorf("df on the anonymous volume: %v", row)
		}
		// The engine's data root is where the volume lives: the same filesystem.
		if info, err := c.Info(ctx, client.InfoOptions{}); err == nil {
			var st syscall.Statfs_t
			if syscall.Statfs(info.Info.DockerRootDir, &st) == nil {
				if want := strconv.FormatUint(st.Blocks*uint64(st.Frsize), 10); row[1] != want {
					t.Errorf("df size %s, the host's %s is %s", row[1], info.Info.DockerRootDir, want)
				}
			}
		}
		status := waitOutput(t, ctx, n, []string{"supervisorctl", "status"}, "scylla ")
		if strings.Contains(status, "node-exporter") {
			t.Errorf("2026.3 runs node_exporter:\n%s", status)
		}
	})
	t.Run("a tmpfs of 16 MiB is a node of 16 MiB that fills up", func(t *testing.T) {
		n := start(t, ctx, byVersion["2025.4.5"], map[string]string{"/var/lib/scylla": "rw,size=16m"})
		refusal := fillUntilFull(t, ctx, n)
		row := df(t, ctx, n)
		// Writes stop short of 100%: the store's reserve (4 memtables and a
		// base level, ~1.7 MiB of 16) keeps its flushes off a full tmpfs.
		if pct, _ := strconv.Atoi(strings.TrimSuffix(row[4], "%")); row[1] != strconv.Itoa(16<<20) || pct < 80 {
			t.Errorf("df after the node filled its disk: %v", row)
		}
		// From 2025.4 the node refuses user writes above the critical level
		// (disk_space_monitor logs it) before its commitlog meets ENOSPC;
		// which comes first depends on how fast the flushes free the tmpfs.
		if strings.Contains(refusal.Error(), "Critical disk utilization") {
			waitLog(t, ctx, n, "Reached the critical disk utilization level")
		} else {
			waitLog(t, ctx, n, "Exception in segment reservation: storage_io_error (Storage I/O error: 28: No space left on device)")
		}
		if l := logs(t, ctx, n); !strings.Contains(l, "a filesystem of 16777216 bytes") || strings.Contains(l, "exited: scylla") {
			t.Errorf("the node's disk is not the tmpfs, or scylla exited:\n%s", l)
		}
	})
	t.Run("2025.4.0 given --blocked-reactor-notify-ms refuses to start", func(t *testing.T) {
		n := start(t, ctx, byVersion["2025.4.0"], nil, "--blocked-reactor-notify-ms", "25")
		waitLog(t, ctx, n, "gave up: scylla entered FATAL state")
		if log := logs(t, ctx, n); !strings.Contains(log, "error: option '--blocked-reactor-notify-ms' cannot be specified more than once") {
			t.Errorf("no refusal in the log:\n%s", log)
		}
	})
}

// fullDiskRefusal: how a full node refuses a write: "No space left on
// device" from its commitlog or store, or, from 2025.4, above
// critical_disk_utilization_level, replica/exceptions.hh's "Critical disk
// utilization: rejected write mutation".
func fullDiskRefusal(err error) bool {
	return strings.Contains(err.Error(), "No space left on device") || strings.Contains(err.Error(), "Critical disk utilization: rejected write mutation")
}

// fillUntilFull writes 4 KiB rows through CQL (the container's address
// on its bridge network) until a write fails, which must be a full disk's
// refusal (fullDiskRefusal), and returns that first refusal.
func fillUntilFull(t *testing.T, ctx context.Context, n testcontainers.Container) error {
	t.Helper()
	ip, err := n.ContainerIP(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cl := gocql.NewCluster(ip)
	cl.Timeout, cl.ConnectTimeout, cl.NumConns = 10*time.Second, 5*time.Second, 1
	var s *gocql.Session
	waitUntil(t, ctx, "CQL on "+ip, func() (bool, string) {
		s, err = cl.CreateSession()
		return err == nil, fmt.Sprint(err)
	})
	defer s.Close()
	for _, q := range []string{`CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}`,
		`CREATE TABLE ks.t (k bigint PRIMARY KEY, v blob)`} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	value := make([]byte, 4096)
	var werr error
	k := 0
	for ; k < 20000 && werr == nil; k++ {
		_, _ = rand.Read(value)
		werr = s.Query(`INSERT INTO ks.t (k, v) VALUES (?, ?)`, int64(k), value).Exec()
	}
	if werr == nil || !fullDiskRefusal(werr) {
		t.Fatalf("after %d rows of 4 KiB: write error %v, want No space left on device or the critical level's refusal; log:\n%s", k, werr, tail(logs(t, ctx, n), 6000))
	}
	t.Logf("disk full after %d rows of 4 KiB: %v", k, werr)
	// A load goes on against a full node: it keeps refusing, and must not
	// fall over as its store flushes and compacts on the full filesystem.
	refused := 0
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); k++ {
		_, _ = rand.Read(value)
		if err := s.Query(`INSERT INTO ks.t (k, v) VALUES (?, ?)`, int64(k), value).Exec(); err != nil {
			if !fullDiskRefusal(err) {
				t.Fatalf("writing to the full node: %v; log:\n%s", err, tail(logs(t, ctx, n), 6000))
			}
			refused++
		}
	}
	if refused == 0 {
		t.Errorf("the full node took every write for 3 s")
	}
	return werr
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func start(t *testing.T, ctx context.Context, image string, tmpfs map[string]string, args ...string) testcontainers.Container {
	t.Helper()
	n, err := docker.StartContainer(ctx, testcontainers.ContainerRequest{
		Image: image, Cmd: append([]string{"--smp", "1", "--memory", "512M", "--developer-mode", "1"}, args...), Tmpfs: tmpfs,
		ExposedPorts:       []string{"9042/tcp"}, // publish one port (docker.StartContainer)
		HostConfigModifier: func(hc *container.HostConfig) { hc.NanoCPUs, hc.Memory = 1e9, 1<<30 },
	}, t.Logf)
	if n != nil {
		t.Cleanup(func() { _ = testcontainers.TerminateContainer(n) })
	}
	if err != nil {
		t.Fatalf("starting %s: %v", image, err)
	}
	return n
}

// execOut is `docker exec C cmd...`'s stdout; a non-zero status fails.
func execOut(t *testing.T, ctx context.Context, n testcontainers.Container, cmd ...string) string {
	t.Helper()
	code, r, err := n.Exec(ctx, cmd, tcexec.Multiplexed())
	if err != nil {
		t.Fatalf("exec %v: %v", cmd, err)
	}
	b, _ := io.ReadAll(r)
	if code != 0 {
		t.Fatalf("exec %v: status %d: %s", cmd, code, b)
	}
	return string(b)
}

// df is the data row of `df -P -B1 /var/lib/scylla`, the framework's
// command (the header checked as coreutils prints it).
func df(t *testing.T, ctx context.Context, n testcontainers.Container) []string {
	t.Helper()
	out := execOut(t, ctx, n, "df", "-P", "-B1", "/var/lib/scylla")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "Filesystem 1-blocks Used Available Capacity Mounted on" {
		t.Fatalf("df output:\n%s", out)
	}
	row := strings.Fields(lines[1])
	if len(row) != 6 {
		t.Fatalf("df row %q", lines[1])
	}
	return row
}

func logs(t *testing.T, ctx context.Context, n testcontainers.Container) string {
	t.Helper()
	r, err := n.Logs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, _ := io.ReadAll(r)
	return string(b)
}

func waitLog(t *testing.T, ctx context.Context, n testcontainers.Container, want string) {
	t.Helper()
	waitUntil(t, ctx, "log line "+want, func() (bool, string) {
		l := logs(t, ctx, n)
		return strings.Contains(l, want), l
	})
}

func waitOutput(t *testing.T, ctx context.Context, n testcontainers.Container, cmd []string, want string) string {
	t.Helper()
	var out string
	waitUntil(t, ctx, fmt.Sprintf("%v showing %q", cmd, want), func() (bool, string) {
		_, r, err := n.Exec(ctx, cmd, tcexec.Multiplexed())
		if err != nil {
			return false, err.Error()
		}
		b, _ := io.ReadAll(r)
		out = string(b)
		return strings.Contains(out, want), out
	})
	return out
}

// waitUntil polls cond until it holds or a minute passes (a start on a
// loaded machine), then fails with what cond last saw.
func waitUntil(t *testing.T, ctx context.Context, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("waiting for %s; last:\n%s", what, last)
		}
		time.Sleep(300 * time.Millisecond)
	}
}
