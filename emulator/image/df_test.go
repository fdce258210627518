package image

import (
	"bytes"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// The table as coreutils' src/df.c prints it (get_header, get_dev,
// print_table): POSIX_MODE captions "<N>-blocks" and "Capacity", minimum
// widths 14/5/5/5/4, numbers right-aligned, one space between columns,
// the last column unpadded, percent rounded up. The expected text is GNU
// df 9.1's for the same figures.
func TestDfTableAsCoreutilsPrintsIt(t *testing.T) {
	rows := []dfRow{{source: "tmpfs", target: "/var/lib/scylla", blockSize: 4096, blocks: 262144, bfree: 262144 - 1001, bavail: 262144 - 1001}}
	got := formatDf(dfOptions{posix: true, blockSize: 1}, rows)
	want := "Filesystem       1-blocks    Used  Available Capacity Mounted on\n" +
		"tmpfs          1073741824 4100096 1069641728       1% /var/lib/scylla\n"
	if got != want {
		t.Errorf("df -P -B1\n got %q\nwant %q", got, want)
	}
	got = formatDf(dfOptions{posix: true, blockSize: 1024}, []dfRow{{source: "/dev/vda", target: "/", blockSize: 4096, blocks: 66053021, bfree: 66053021 - 3800656, bavail: 20074660}})
	want = "Filesystem     1024-blocks     Used Available Capacity Mounted on\n" +
		"/dev/vda         264212084 15202624  80298640      16% /\n"
	if got != want {
		t.Errorf("df -P\n got %q\nwant %q", got, want)
	}
	got = formatDf(dfOptions{blockSize: 1}, []dfRow{{source: "proc", target: "/proc", blockSize: 4096}})
	want = "Filesystem     1B-blocks  Used Available Use% Mounted on\n" +
		"proc                   0     0         0    - /proc\n"
	if got != want {
		t.Errorf("df -B1 (empty filesystem)\n got %q\nwant %q", got, want)
	}
}

// getopt_long's forms of the options the double implements, and a clear
// refusal (status 1, naming the option) of the ones it does not.
func TestDfOptions(t *testing.T) {
	for _, args := range [][]string{{"-P", "-B1", "/x"}, {"-PB1", "/x"}, {"-P", "-B", "1", "/x"}, {"--portability", "--block-size=1", "/x"},
		{"--port", "--block-size", "1", "/x"}, {"-B1", "-P", "--", "/x"}} {
		o, err := parseDf(args)
		if err != nil || !o.posix || o.blockSize != 1 || len(o.files) != 1 || o.files[0] != "/x" {
			t.Errorf("df %v: %+v, %v", args, o, err)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-h", "/"}, "option '-h' is not implemented"},
		{[]string{"-Ph", "/"}, "option '-h' is not implemented"},
		{[]string{"--output=size", "/"}, "option '--output' is not implemented"},
		{[]string{"-B1M", "/"}, "invalid -B argument '1M'"},
		{[]string{"-z", "/"}, "invalid option -- 'z'"},
		{[]string{"--bogus", "/"}, "unrecognized option '--bogus'"},
		{[]string{"-B"}, "option requires an argument -- 'B'"},
	} {
		var out, errb bytes.Buffer
		if code := DfMain(tc.args, &out, &errb); code != 1 || !strings.Contains(errb.String(), tc.want) || out.Len() != 0 {
			t.Errorf("df %v: status %d, stderr %q, stdout %q; want 1 and %q", tc.args, code, errb.String(), out.String(), tc.want)
		}
	}
	var out, errb bytes.Buffer
	if code := DfMain([]string{"-P", "-B1"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "give a FILE") {
		t.Errorf("df without FILE: %d %q", code, errb.String())
	}
}

// The figures are statfs's of the FILE (gnulib fsusage: f_frsize units;
// used = blocks - bfree, available = bavail), one row per FILE; a missing
// FILE is "df: FILE: No such file or directory" and status 1, the others
// still printed.
func TestDfReadsTheFilesystem(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := DfMain([]string{"-P", "-B1", dir + "/missing", dir}, &out, &errb)
	if code != 1 || errb.String() != "df: "+dir+"/missing: No such file or directory\n" {
		t.Errorf("status %d, stderr %q", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "Filesystem 1-blocks Used Available Capacity Mounted on" {
		t.Fatalf("table %q", out.String())
	}
	f := strings.Fields(lines[1])
	if len(f) != 6 {
		t.Fatalf("row %q: want 6 fields", lines[1])
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	size, _ := strconv.ParseUint(f[1], 10, 64)
	if want := st.Blocks * uint64(st.Frsize); size != want {
		t.Errorf("size %d, statfs says %d", size, want)
	}
	if !strings.HasPrefix(dir, f[5]) {
		t.Errorf("mounted on %q, not a prefix of %s", f[5], dir)
	}
}

func TestParseMountinfo(t *testing.T) {
	in := "36 35 98:0 /mnt1 /mnt/a\\040b rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n" +
		"100 36 0:50 / /var/lib/scylla rw,nosuid,nodev,noexec,relatime - tmpfs tmpfs rw,size=1048576k\n" +
		"garbage\n"
	got := parseMountinfo(strings.NewReader(in))
	want := []mountEntry{{source: "/dev/root", target: "/mnt/a b", fstype: "ext3"}, {source: "tmpfs", target: "/var/lib/scylla", fstype: "tmpfs"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestProgramForArgv0(t *testing.T) {
	for argv0, want := range map[string]string{"df": "df", "/usr/bin/df": "df", "/usr/bin/scylla": "scylla", "supervisorctl": "supervisorctl",
		"/elasticity": "", "elasticity": "", "/usr/bin/node_exporter": ""} {
		got, ok := ProgramFor(argv0)
		if got != want || ok != (want != "") {
			t.Errorf("ProgramFor(%q) = %q, %v; want %q", argv0, got, ok, want)
		}
	}
}

// node_exporter's filesystem collector (collector/filesystem_linux.go):
// every mount not excluded by its defaults, sizes Blocks/Bfree/Bavail ×
// Bsize of statfs of the mount point.
func TestNodeExporterFilesystemsAreStatfs(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(filesystemCollector{})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, mf := range mfs {
		if mf.GetName() != "node_filesystem_size_bytes" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var mp, fstype string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "mountpoint":
					mp = l.GetValue()
				case "fstype":
					fstype = l.GetValue()
				}
			}
			if fsMountPointsExcluded.MatchString(mp) || fsTypesExcluded.MatchString(fstype) {
				t.Errorf("%s (%s) is excluded by node_exporter's defaults", mp, fstype)
			}
			var st syscall.Statfs_t
			if syscall.Statfs(mp, &st) != nil {
				continue
			}
			if want := float64(st.Blocks) * float64(st.Bsize); m.GetGauge().GetValue() != want {
				t.Errorf("%s: size %g, statfs %g", mp, m.GetGauge().GetValue(), want)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Skip("no filesystem here that node_exporter reports")
	}
}
