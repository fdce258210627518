package docker

import (
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	mnetwork "github.com/moby/moby/api/types/network"

	"github.com/elasticity-dev/elasticity/internal/scyllaversion"
	"github.com/elasticity-dev/elasticity/provision"
)

func TestScyllaContainerRequestsThreeRacks(t *testing.T) {
	p := New(Options{Image: "scylladb/scylla:2025.1", HostCPUs: 8, HostMemoryGB: 32,
		Now: func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }})
	p.spec = provision.ClusterSpec{RunID: "run-7", Scenario: "90pct-scaleout", ClusterName: "elasticity-run-7", DC: "dc1",
		Racks: []string{"rack1", "rack2", "rack3"}, NodesPerRack: 1, InstanceType: "i4i.large", TTL: 2 * time.Hour,
		ExtraArgs: []string{"--abort-on-lsa-bad-alloc", "1"}}
	seeds := []string{"10.213.9.2"}
	for i, rack := range p.spec.Racks {
		ip := []string{"10.213.9.2", "10.213.9.3", "10.213.9.4"}[i]
		name := []string{"node-1", "node-2", "node-3"}[i]
		req, err := p.Request(provision.Node{Name: name, DC: "dc1", Rack: rack, InstanceType: "i4i.large", Address: ip}, seeds, "elasticity-net")
		if err != nil {
			t.Fatal(err)
		}
		want := "--seeds 10.213.9.2 --listen-address " + ip + " --rpc-address " + ip + " --broadcast-address " + ip +
			" --broadcast-rpc-address " + ip + " --api-address 0.0.0.0 --smp 2 --memory 8192M --overprovisioned 1 --developer-mode 1" +
			" --endpoint-snitch GossipingPropertyFileSnitch --cluster-name elasticity-run-7 --abort-on-lsa-bad-alloc 1"
		if got := strings.Join(req.Cmd, " "); got != want {
			t.Errorf("%s flags:\n got %s\nwant %s", name, got, want)
		}
		if req.Image != "scylladb/scylla:2025.1" || req.Name != "elasticity-run-7-"+name || len(req.Entrypoint) != 0 {
			t.Errorf("%s: image %q name %q entrypoint %v", name, req.Image, req.Name, req.Entrypoint)
		}
		if len(req.Networks) != 1 || req.Networks[0] != "elasticity-net" || req.NetworkAliases["elasticity-net"][0] != name {
			t.Errorf("%s network: %v %v", name, req.Networks, req.NetworkAliases)
		}
		wantLabels := map[string]string{LabelRunID: "run-7", LabelScenario: "90pct-scaleout", LabelNode: name, LabelCreatedBy: "elasticity",
			LabelCreatedAt: "2026-11-30T12:00:00Z", LabelKeepUntil: "2026-11-30T14:00:00Z"}
		for k, v := range wantLabels {
			if req.Labels[k] != v {
				t.Errorf("%s label %s = %q, want %q", name, k, req.Labels[k], v)
			}
		}
		// The rack goes into cassandra-rackdc.properties (images before 2025.4).
		if len(req.Files) != 1 || req.Files[0].ContainerFilePath != "/etc/scylla/cassandra-rackdc.properties" {
			t.Fatalf("%s files: %+v", name, req.Files)
		}
		b, _ := io.ReadAll(req.Files[0].Reader)
		if string(b) != "dc=dc1\nrack="+rack+"\nprefer_local=true\n" {
			t.Errorf("%s rackdc: %q", name, b)
		}
		hc := &container.HostConfig{}
		req.HostConfigModifier(hc)
		if hc.NanoCPUs != 2e9 || hc.Memory != 9<<30 {
			t.Errorf("%s limits: cpus %d memory %d", name, hc.NanoCPUs, hc.Memory)
		}
		eps := map[string]*mnetwork.EndpointSettings{"elasticity-net": {}}
		req.EndpointSettingsModifier(eps)
		if eps["elasticity-net"].IPAMConfig.IPv4Address != netip.MustParseAddr(ip) {
			t.Errorf("%s fixed address: %v", name, eps["elasticity-net"].IPAMConfig)
		}
	}
}

func TestResourcesWithinHostLimitsAndDCRackFlags(t *testing.T) {
	p := New(Options{HostCPUs: 2, HostMemoryGB: 24, Version: scyllaversion.Version{Year: 2025, Minor: 4, Patch: 5}})
	it, _ := provision.LookupInstanceType("i4i.4xlarge")
	if smp, mem := p.Resources(it); smp != 2 || mem != 6 {
		t.Fatalf("i4i.4xlarge on a 2-core 24 GiB host: smp %d mem %v", smp, mem)
	}
	p.spec = provision.ClusterSpec{RunID: "r", DC: "dc1"}
	req, err := p.Request(provision.Node{Name: "node-4", DC: "dc1", Rack: "rack2", InstanceType: "i4i.4xlarge", Address: "10.213.1.5"}, []string{"10.213.1.2"}, "n")
	if err != nil {
		t.Fatal(err)
	}
	// scylla-2025.4.5 dist/docker/commandlineparser.py: --dc, --rack and
	// --blocked-reactor-notify-ms are entrypoint flags.
	if cmd := strings.Join(req.Cmd, " "); !strings.Contains(cmd, "--blocked-reactor-notify-ms 25 --dc dc1 --rack rack2") || strings.Contains(cmd, "snitch") || len(req.Files) != 0 {
		t.Fatalf("2025.4.5+ images take --dc/--rack and the stall threshold: %s", cmd)
	}
	// scylla-2025.4.0: --dc and --rack, no stall flag (scyllasetup.py
	// appends 999999999 itself).
	p.opts.Version = scyllaversion.Version{Year: 2025, Minor: 4}
	if cmd := strings.Join(p.mustCmd(t, "i4i.4xlarge"), " "); strings.Contains(cmd, "--blocked-reactor-notify-ms") || !strings.Contains(cmd, "--dc dc1 --rack rack2") {
		t.Fatalf("2025.4.0 takes --dc/--rack but no stall threshold: %s", cmd)
	}
	if _, err := p.Request(provision.Node{Name: "x", InstanceType: "m1.tiny", Address: "10.0.0.1"}, nil, "n"); err == nil || !strings.Contains(err.Error(), "i4i.large") {
		t.Fatalf("unknown type: %v", err)
	}
}

func TestEmulatorImageCommand(t *testing.T) {
	p := New(Options{Image: "elasticity-emulator:2025.1", Emulated: true, HostCPUs: 2, HostMemoryGB: 24,
		NodeArgs: func(provision.Node, provision.InstanceType) []string {
			return []string{"--storage-scale-mib-per-gb", "0.5"}
		}})
	p.spec = provision.ClusterSpec{RunID: "r", ClusterName: "c", DC: "dc1"}
	req, err := p.Request(provision.Node{Name: "node-1", DC: "dc1", Rack: "rack1", InstanceType: "i4i.large", Address: "10.213.1.2"}, []string{"10.213.1.2"}, "n")
	if err != nil {
		t.Fatal(err)
	}
	// The double takes the real image's command line; the emulator models
	// the catalog instance (2 vCPUs, 16 GB, 468 GB) from extra arguments,
	// and the host only bounds the container (6 GiB = 24 GiB / 4, +1 GiB headroom).
	want := "--seeds 10.213.1.2 --listen-address 10.213.1.2 --rpc-address 10.213.1.2 --broadcast-address 10.213.1.2 --broadcast-rpc-address 10.213.1.2" +
		" --api-address 0.0.0.0 --smp 2 --memory 6144M --overprovisioned 1 --developer-mode 1 --endpoint-snitch GossipingPropertyFileSnitch --cluster-name c" +
		" --instance-type i4i.large --vcpus 2 --memory-gb 16 --disk-gb 468 --storage-scale-mib-per-gb 0.5"
	if got := strings.Join(req.Cmd, " "); got != want || len(req.Entrypoint) != 0 {
		t.Fatalf("emulator command:\n got %s\nwant %s", got, want)
	}
	hc := &container.HostConfig{}
	req.HostConfigModifier(hc)
	if hc.NanoCPUs != 2e9 || hc.Memory != 7<<30 {
		t.Fatalf("emulator limits: cpus %d memory %d", hc.NanoCPUs, hc.Memory)
	}
}

func TestResourcesTable(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      Options
		typ       string
		smp       int
		memGB     float64
		nanoCPUs  int64
		memLimitB int64
	}{
		{"derived, large host", Options{HostCPUs: 64, HostMemoryGB: 1024}, "i4i.4xlarge", 16, 128, 16e9, 129 << 30},
		{"derived, capped by a 2-core 16 GiB host", Options{HostCPUs: 2, HostMemoryGB: 16}, "i4i.xlarge", 2, 4, 2e9, 5 << 30},
		{"override for every type", Options{HostCPUs: 8, HostMemoryGB: 64, SMP: 1, MemoryGB: 2}, "i4i.4xlarge", 1, 2, 1e9, 3 << 30},
		{"base type keeps the override", Options{HostCPUs: 8, HostMemoryGB: 64, SMP: 1, MemoryGB: 2, BaseInstanceType: "i4i.large"}, "i4i.large", 1, 2, 1e9, 3 << 30},
		{"twice the base", Options{HostCPUs: 8, HostMemoryGB: 64, SMP: 1, MemoryGB: 2, BaseInstanceType: "i4i.large"}, "i4i.xlarge", 2, 4, 2e9, 5 << 30},
		// 8 shards of 2 GiB cut to the host's 2 CPUs: 2 shards of 2 GiB.
		{"8× the base, capped by host", Options{HostCPUs: 2, HostMemoryGB: 32, SMP: 1, MemoryGB: 2, BaseInstanceType: "i4i.large"}, "i4i.4xlarge", 2, 4, 2e9, 5 << 30},
		{"half the base rounds up to 1", Options{HostCPUs: 8, HostMemoryGB: 64, SMP: 1, MemoryGB: 1, BaseInstanceType: "i4i.xlarge"}, "i4i.large", 1, 1, 1e9, 2 << 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(tc.opts)
			it, err := provision.LookupInstanceType(tc.typ)
			if err != nil {
				t.Fatal(err)
			}
			smp, mem := p.Resources(it)
			if smp != tc.smp || mem != tc.memGB {
				t.Fatalf("%s: smp %d mem %v, want %d %v", tc.typ, smp, mem, tc.smp, tc.memGB)
			}
			p.spec = provision.ClusterSpec{RunID: "r", DC: "dc1"}
			req, err := p.Request(provision.Node{Name: "node-1", DC: "dc1", Rack: "r1", InstanceType: tc.typ, Address: "10.213.1.2"}, nil, "n")
			if err != nil {
				t.Fatal(err)
			}
			hc := &container.HostConfig{}
			req.HostConfigModifier(hc)
			if hc.NanoCPUs != tc.nanoCPUs || hc.Memory != tc.memLimitB {
				t.Fatalf("limits: cpus %d memory %d, want %d %d", hc.NanoCPUs, hc.Memory, tc.nanoCPUs, tc.memLimitB)
			}
		})
	}
}

func TestSeedsAreTheOldestLiveNodes(t *testing.T) {
	p := New(Options{})
	for i, a := range []string{"10.0.0.5", "10.0.0.2", "10.0.0.3", "10.0.0.4"} {
		name := "node-" + string(rune('1'+i))
		p.nodes[name] = &member{idx: []int{5, 2, 3, 4}[i], node: provision.Node{Name: name, Address: a}}
	}
	if got := strings.Join(p.seedsLocked(), ","); got != "10.0.0.2,10.0.0.3,10.0.0.4" {
		t.Fatalf("seeds %s", got)
	}
}

func (p *Provider) mustCmd(t *testing.T, typ string) []string {
	t.Helper()
	req, err := p.Request(provision.Node{Name: "node-4", DC: "dc1", Rack: "rack2", InstanceType: typ, Address: "10.213.1.5"}, []string{"10.213.1.2"}, "n")
	if err != nil {
		t.Fatal(err)
	}
	return req.Cmd
}

// A node's data file system: a tmpfs of its catalog disk × the storage
// scale at /var/lib/scylla, counted in the container's memory limit, and
// ScyllaDB's options for a small disk (db/config.cc); none with
// docker.data_mount none.
func TestDataMount(t *testing.T) {
	p := New(Options{HostCPUs: 2, HostMemoryGB: 24, SMP: 1, MemoryGB: 1, BaseInstanceType: "i4i.large", StorageScaleMiBPerGB: 4, Version: scyllaversion.Version{Year: 2026, Minor: 3}})
	p.spec = provision.ClusterSpec{RunID: "r", DC: "dc1"}
	for _, tc := range []struct {
		typ, tmpfs, args string
		limit            int64
	}{
		// 468 GB × 4 MiB = 1872 MiB; commitlog total 16 GB × 4 = 64 MiB; tablets 5 GiB × 4 MiB/GB.
		{"i4i.large", "rw,size=1872m,mode=1777", "--commitlog-segment-size-in-mb 8 --commitlog-total-space-in-mb 64 --schema-commitlog-segment-size-in-mb 32 --target-tablet-size-in-bytes 22517998", 2<<30 + 1872<<20},
		// 3750 GB × 4 = 15000 MiB; 128 GB × 4 = 512 MiB; 2 shards of 1 GiB.
		{"i4i.4xlarge", "rw,size=15000m,mode=1777", "--commitlog-segment-size-in-mb 8 --commitlog-total-space-in-mb 512 ", 3<<30 + 15000<<20},
	} {
		req, err := p.Request(provision.Node{Name: "node-1", DC: "dc1", Rack: "r1", InstanceType: tc.typ, Address: "10.213.1.2"}, nil, "n")
		if err != nil {
			t.Fatal(err)
		}
		hc := &container.HostConfig{}
		req.HostConfigModifier(hc)
		if req.Tmpfs[DataDir] != tc.tmpfs || hc.Memory != tc.limit || !strings.Contains(strings.Join(req.Cmd, " "), tc.args) {
			t.Errorf("%s: tmpfs %v, memory limit %d (want %d), command %s", tc.typ, req.Tmpfs, hc.Memory, tc.limit, strings.Join(req.Cmd, " "))
		}
	}
	p.opts.DataMount = DataNone
	req, err := p.Request(provision.Node{Name: "node-1", DC: "dc1", Rack: "r1", InstanceType: "i4i.large", Address: "10.213.1.2"}, nil, "n")
	if err != nil {
		t.Fatal(err)
	}
	hc := &container.HostConfig{}
	req.HostConfigModifier(hc)
	if len(req.Tmpfs) != 0 || hc.Memory != 2<<30 || strings.Contains(strings.Join(req.Cmd, " "), "commitlog") {
		t.Errorf("data_mount none: tmpfs %v, memory limit %d, command %v", req.Tmpfs, hc.Memory, req.Cmd)
	}
}

// df -P -B1 as GNU coreutils prints it (POSIX format, 1-byte blocks).
func TestParseDF(t *testing.T) {
	u, err := ParseDF("Filesystem       1-blocks      Used  Available Capacity Mounted on\ntmpfs          1962934272 104857600 1858076672       6% /var/lib/scylla\n")
	if err != nil || u.TotalBytes != 1962934272 || u.AvailBytes != 1858076672 || u.UsedBytes != 104857600 {
		t.Fatalf("%+v %v", u, err)
	}
	// Reserved blocks count as used (total − available), as node_exporter's size − avail.
	u, err = ParseDF("Filesystem         1-blocks        Used   Available Capacity Mounted on\n/dev/vda       270553174016 15709995008 82083299328      17% /\n")
	if err != nil || u.UsedBytes != 270553174016-82083299328 {
		t.Fatalf("%+v %v", u, err)
	}
	for _, bad := range []string{"", "df: /var/lib/scylla: No such file or directory", "Filesystem 1-blocks Used Available Capacity Mounted on\ntmpfs x 1 2 3% /var/lib/scylla", "Filesystem 1-blocks\ntmpfs 1"} {
		if _, err := ParseDF(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
