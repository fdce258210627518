package image

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/internal/scyllaversion"
)

func mustVersion(t *testing.T, s string) scyllaversion.Version {
	t.Helper()
	v, err := scyllaversion.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The entrypoint's flags per version, patch included, from
// dist/docker/commandlineparser.py at each release tag: --dc/--rack from
// scylla-2025.4.0 (absent @scylla-2025.3.8); --blocked-reactor-notify-ms
// from scylla-2025.4.4 (absent @scylla-2025.4.3, present @scylla-2025.4.5,
// @scylla-2026.1.0, @scylla-2026.3.0-rc0).
func TestEntrypointFlagsPerVersion(t *testing.T) {
	for _, tc := range []struct {
		version         string
		dcRack, stallMS bool
	}{
		{"2025.1.0", false, false}, {"2025.2.3", false, false}, {"2025.3.8", false, false},
		{"2025.4.0-0.20251217.abc", true, false}, {"2025.4.3", true, false},
		{"2025.4.5", true, true}, {"2025.4.10", true, true},
		{"2026.1.0", true, true}, {"2026.2.0", true, true}, {"2026.3.0~rc0", true, true},
	} {
		flags := " " + strings.Join(EntrypointFlags(mustVersion(t, tc.version)), " ") + " "
		for f, want := range map[string]bool{"--dc": tc.dcRack, "--rack": tc.dcRack, "--blocked-reactor-notify-ms": tc.stallMS} {
			if got := strings.Contains(flags, " "+f+" "); got != want {
				t.Errorf("%s: entrypoint flag %s present = %v, want %v", tc.version, f, got, want)
			}
		}
		if !strings.Contains(flags, "--developer-mode") || !strings.Contains(flags, "--seeds") {
			t.Errorf("%s: common flags missing: %s", tc.version, flags)
		}
	}
}

// scyllasetup.py arguments(): scylla-2025.1.0 to 2025.4.3 always append
// --blocked-reactor-notify-ms 999999999, and a user's own is unknown to
// commandlineparser.py's parse_known_args, so it goes through as an extra
// argument: scylla gets it twice and refuses it (Seastar's
// app_template::run, boost multiple_occurrences). From 2025.4.4
// (2025.4.5, 2026.1, 2026.3) it is an entrypoint flag (default '25')
// passed once.
func TestStallThresholdPerVersion(t *testing.T) {
	args := []string{"--seeds", "10.0.0.2", "--listen-address", "10.0.0.2", "--smp", "2", "--memory", "1024M",
		"--overprovisioned", "1", "--developer-mode", "1", "--blocked-reactor-notify-ms", "25"}
	refused := "option '--blocked-reactor-notify-ms' cannot be specified more than once"
	for _, tc := range []struct {
		version string
		wantErr string
		wantMS  string
	}{
		{"2025.1.0", refused, ""},
		{"2025.3.0", refused, ""},
		{"2025.4.0", refused, ""},
		{"2025.4.3", refused, ""},
		{"2025.4.5", "", "25"},
		{"2026.1.0", "", "25"},
		{"2026.3.0", "", "25"},
	} {
		v := mustVersion(t, tc.version)
		p, err := ParseEntrypoint(v, args)
		if err != nil {
			t.Fatalf("%s: %v", tc.version, err)
		}
		s, err := BuildSetup(v, p, "10.0.0.9")
		if err != nil {
			t.Fatalf("%s: %v", tc.version, err)
		}
		cmd := s.ScyllaCommandLine()
		vals, err := ParseScylla(cmd)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%s: scylla %v: err %v, want %q", tc.version, cmd, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.version, err)
		}
		if got := vals["blocked-reactor-notify-ms"]; len(got) != 1 || got[0] != tc.wantMS {
			t.Errorf("%s: --blocked-reactor-notify-ms = %v, want [%s]", tc.version, got, tc.wantMS)
		}
	}
	// Without a user value, 2025.1.0 and 2025.4.0 run with the hard-coded
	// threshold (no stalls reported); 2025.4.5 with the flag's default 25.
	for version, want := range map[string]int{"2025.1.0": 999999999, "2025.4.0": 999999999, "2025.4.5": 25} {
		v := mustVersion(t, version)
		p, _ := ParseEntrypoint(v, args[:len(args)-2])
		s, _ := BuildSetup(v, p, "10.0.0.9")
		vals, err := ParseScylla(s.ScyllaCommandLine())
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := ScyllaConfig(vals, version, os.ReadFile)
		if err != nil || cfg.BlockedReactorNotifyMS != want {
			t.Errorf("%s threshold = %d (%v), want %d", version, cfg.BlockedReactorNotifyMS, err, want)
		}
	}
}

// SCYLLA_NODE_EXPORTER_ARGS (dist/common/sysconfig/scylla-node-exporter)
// at each tag, and the program itself (supervisord.conf.d/
// scylla-node-exporter.conf) present up to 2026.2, removed first in
// scylla-2026.3.0-rc0.
func TestNodeExporterPerVersion(t *testing.T) {
	for _, tc := range []struct {
		version                 string
		present, ethtool, units bool
	}{
		{"2025.1.0", true, false, false}, {"2025.4.0", true, false, false}, {"2025.4.1", true, true, false},
		{"2025.4.5", true, true, false}, {"2026.1.0", true, true, false}, {"2026.2.0", true, true, true},
		{"2026.2.5", true, true, true}, {"2026.3.0", false, true, true},
	} {
		v := mustVersion(t, tc.version)
		if got := v.NodeExporter(); got != tc.present {
			t.Errorf("%s: node_exporter present = %v, want %v", tc.version, got, tc.present)
		}
		args := strings.Join(nodeExporterArgs(v), " ")
		if got := strings.Contains(args, "--collector.ethtool "); got != tc.ethtool {
			t.Errorf("%s: ethtool collector = %v, want %v (%s)", tc.version, got, tc.ethtool, args)
		}
		if got := strings.Contains(args, "--collector.systemd "); got != tc.units {
			t.Errorf("%s: systemd collector = %v, want %v (%s)", tc.version, got, tc.units, args)
		}
	}
}

// The scylla command line of scylla-server.sh with scyllasetup.py's
// arguments, in order.
func TestScyllaCommandLine(t *testing.T) {
	v := mustVersion(t, "2025.1")
	p, err := ParseEntrypoint(v, []string{"--seeds=10.0.0.2,10.0.0.3", "--listen-address", "10.0.0.4", "--api-address", "0.0.0.0",
		"--cluster-name", "c1", "--endpoint-snitch", "GossipingPropertyFileSnitch", "--vcpus", "2", "--dev", "1"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := BuildSetup(v, p, "10.0.0.9")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(s.ScyllaCommandLine(), " ")
	want := "--log-to-syslog 0 --log-to-stdout 1 --network-stack posix --developer-mode=1 --overprovisioned " +
		"--listen-address 10.0.0.4 --rpc-address 10.0.0.4 --seed-provider-parameters seeds=10.0.0.2,10.0.0.3 --api-address 0.0.0.0 " +
		"--alternator-address 10.0.0.4 --cluster-name c1 --endpoint-snitch GossipingPropertyFileSnitch --blocked-reactor-notify-ms 999999999 --vcpus 2"
	if got != want {
		t.Errorf("scylla command line\n got %s\nwant %s", got, want)
	}
	cfg, err := ScyllaConfig(mustParse(t, s.ScyllaCommandLine()), "2025.1.0", func(string) ([]byte, error) {
		return []byte("dc=dc1\nrack=rack2\nprefer_local=true\n"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ListenAddress != "10.0.0.4" || cfg.DC != "dc1" || cfg.Rack != "rack2" || cfg.VCPUs != 2 ||
		strings.Join(cfg.Seeds, ",") != "10.0.0.2,10.0.0.3" || cfg.ClusterName != "c1" {
		t.Errorf("config %+v", cfg)
	}
}

func mustParse(t *testing.T, args []string) map[string][]string {
	t.Helper()
	v, err := ParseScylla(args)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// argparse behaviour of parse_known_args: choices, missing value, unknown
// flags kept as extras (so --dc on 2025.1 reaches scylla, which does not
// know it).
func TestEntrypointArgparse(t *testing.T) {
	v1 := mustVersion(t, "2025.1")
	_, err := ParseEntrypoint(v1, []string{"--developer-mode", "2"})
	var ue *UsageError
	if !errors.As(err, &ue) || ue.Msg != "argument --developer-mode: invalid choice: '2' (choose from '0', '1')" {
		t.Errorf("invalid choice: %v", err)
	}
	if _, err := ParseEntrypoint(v1, []string{"--smp"}); err == nil || !strings.Contains(err.Error(), "argument --smp: expected one argument") {
		t.Errorf("missing value: %v", err)
	}
	p, err := ParseEntrypoint(v1, []string{"--dc", "dc1", "--smp", "1"})
	if err != nil || strings.Join(p.Extra, " ") != "--dc dc1" || p.Values["smp"] != "1" {
		t.Fatalf("extras %v %v", p, err)
	}
	s, _ := BuildSetup(v1, p, "10.0.0.9")
	if _, err := ParseScylla(s.ScyllaCommandLine()); err == nil || err.Error() != "unrecognised option '--dc'" {
		t.Errorf("2025.1 --dc at scylla: %v", err)
	}
	// 2025.4: --dc/--rack write cassandra-rackdc.properties and default the snitch.
	v4 := mustVersion(t, "2025.4")
	p, err = ParseEntrypoint(v4, []string{"--dc", "dc1", "--rack", "r2"})
	if err != nil {
		t.Fatal(err)
	}
	s, err = BuildSetup(v4, p, "10.0.0.9")
	if err != nil || s.RackDC != "dc=dc1\nrack=r2\n" || !strings.Contains(s.DockerArgs, "--endpoint-snitch GossipingPropertyFileSnitch") {
		t.Errorf("2025.4 dc/rack: %+v %v", s, err)
	}
	p, _ = ParseEntrypoint(v4, []string{"--dc", "dc1", "--endpoint-snitch", "SimpleSnitch"})
	if _, err := BuildSetup(v4, p, "10.0.0.9"); err == nil || !strings.Contains(err.Error(), "Cannot use dc and rack parameters together with endpoint snitch 'SimpleSnitch'") {
		t.Errorf("snitch conflict: %v", err)
	}
}

// The double's main reports the refusal as Seastar's app_template::run
// does: "error: ...\n\nTry --help.\n", status 2.
func TestScyllaMainRefusesRepeatedOption(t *testing.T) {
	var out bytes.Buffer
	code := ScyllaMain(context.Background(), []string{"--smp", "1", "--blocked-reactor-notify-ms", "999999999", "--blocked-reactor-notify-ms", "25"}, &out, &out)
	if code != 2 || !strings.Contains(out.String(), "error: option '--blocked-reactor-notify-ms' cannot be specified more than once\n\nTry --help.\n") {
		t.Errorf("exit %d, output:\n%s", code, out.String())
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func sh(t *testing.T) string {
	p, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("needs sh")
	}
	return p
}

// supervisord's rules (supervisor/process.py): a program that exits before
// startsecs is retried startretries (3) times with a growing delay, then
// FATAL; the supervisor keeps running.
func TestSupervisorGivesUpAfterStartRetries(t *testing.T) {
	if testing.Short() {
		t.Skip("takes ~7 s (supervisord's backoff of 1+2+3 s)")
	}
	var log syncBuf
	s := &Supervisor{Log: &log}
	s.Add(Program{Name: "scylla", Command: []string{sh(t), "-c", "exit 2"}, Stdout: &log, Stderr: &log})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	waitFor(t, 15*time.Second, "FATAL", func() bool {
		return strings.Contains(log.String(), "gave up: scylla entered FATAL state, too many start retries too quickly")
	})
	if n := strings.Count(log.String(), "exited: scylla (exit status 2; not expected)"); n != 4 {
		t.Errorf("%d failed starts, want 4 (1 + startretries 3):\n%s", n, log.String())
	}
	select {
	case <-done:
		t.Fatal("the supervisor ended when its program went FATAL")
	default:
	}
	if st := s.Status(); st[0].State != StateFatal {
		t.Errorf("status %+v", st)
	}
	cancel()
	<-done
}

// A program killed after it reached RUNNING is restarted (autorestart =
// unexpected: terminated by a signal is not an expected exit).
func TestSupervisorRestartsAKilledProgram(t *testing.T) {
	var log syncBuf
	s := &Supervisor{Log: &log}
	s.Add(Program{Name: "scylla", Command: []string{sh(t), "-c", "exec sleep 60"}, Stdout: &log, Stderr: &log})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	waitFor(t, 5*time.Second, "RUNNING", func() bool { return s.Status()[0].State == StateRunning })
	if !strings.Contains(log.String(), "success: scylla entered RUNNING state, process has stayed up for > than 1 seconds (startsecs)") {
		t.Errorf("no success line:\n%s", log.String())
	}
	first := s.Status()[0].PID
	if err := s.Signal("scylla", syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "restart", func() bool { st := s.Status()[0]; return st.PID != 0 && st.PID != first })
	if !strings.Contains(log.String(), "WARN exited: scylla (terminated by SIGKILL; not expected)") || strings.Count(log.String(), "spawned: 'scylla' with pid") != 2 {
		t.Errorf("log:\n%s", log.String())
	}
	cancel()
	<-done
	if !strings.Contains(log.String(), "stopped: scylla (terminated by SIGTERM)") {
		t.Errorf("no stop line:\n%s", log.String())
	}
}

// The double's node takes the filesystem of /var/lib/scylla as its disk,
// as a real node does, whatever size the command line names.
func TestScyllaDiskIsTheFilesystem(t *testing.T) {
	vals := mustParse(t, []string{"--listen-address", "10.0.0.2", "--disk-gb", "468", "--storage-scale-mib-per-gb", "0.5"})
	cfg, err := ScyllaConfig(vals, "2025.4.5", os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.DiskFromFilesystem || cfg.DataDir != DataMountpoint {
		t.Errorf("disk from filesystem %v, data dir %s", cfg.DiskFromFilesystem, cfg.DataDir)
	}
}
