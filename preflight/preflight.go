// Package preflight checks, before a long run starts, that the machine can
// finish it: disk for the planned data, memory, and the tools and credentials
// the backend needs. A failing check aborts in seconds instead of hours.
package preflight

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Input describes the run to check.
type Input struct {
	OutDir string // where results (and, for local, node data) go
	// PlannedDiskBytes is what the run will write on this machine (local: the
	// nodes' data; other backends: results only).
	PlannedDiskBytes int64
	// PlannedMemoryBytes is what the run's local processes need;
	// MemoryDetail says what it is made of, MemorySettings what to change
	// when it does not fit (both optional).
	PlannedMemoryBytes int64
	MemoryDetail       string
	MemorySettings     string
	Getenv             func(string) string
	// MemAvailable reads /proc/meminfo's MemAvailable (nil: the real file).
	MemAvailable func() (int64, error)
	// Checks are the backend's own checks (its tools, images and
	// credentials), run in order after disk and memory. Each backend
	// registers them with its provision.Backend (Preflight).
	Checks []Func
}

// Func is one backend check: it gives zero or more checks (zero when it
// does not apply to this run).
type Func func(ctx context.Context, in Input) []Check

// Check is one check's outcome.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Error lists the failed checks.
type Error struct{ Failed []Check }

func (e *Error) Error() string {
	return "pre-flight failed (use --skip-preflight to bypass): " + e.Checks()
}

// Checks lists the failed checks: "name: detail; name: detail".
func (e *Error) Checks() string {
	parts := make([]string, len(e.Failed))
	for i, c := range e.Failed {
		parts[i] = c.Name + ": " + c.Detail
	}
	return strings.Join(parts, "; ")
}

// Run performs the checks: disk, memory, then in.Checks. It returns every
// check and an *Error when any failed.
func Run(ctx context.Context, in Input) ([]Check, error) {
	if in.Getenv == nil {
		in.Getenv = os.Getenv
	}
	var checks []Check
	checks = append(checks, diskCheck(in))
	if in.PlannedMemoryBytes > 0 {
		checks = append(checks, memoryCheck(in))
	}
	for _, f := range in.Checks {
		checks = append(checks, f(ctx, in)...)
	}
	var failed []Check
	for _, c := range checks {
		if !c.OK {
			failed = append(failed, c)
		}
	}
	if len(failed) > 0 {
		return checks, &Error{Failed: failed}
	}
	return checks, nil
}

// existingParent walks up to the first directory that exists (the out dir is usually new).
func existingParent(p string) string {
	p, _ = filepath.Abs(p)
	for {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		parent := filepath.Dir(p)
		if parent == p {
			return p
		}
		p = parent
	}
}

func diskCheck(in Input) Check {
	return diskCheckIn("disk", existingParent(in.OutDir), in.PlannedDiskBytes)
}

// DiskAt checks the free space of another directory the run writes its
// planned data to (docker: the engine's root), named name; nothing when
// dir is "" or the out dir's file system is that directory.
func DiskAt(name, dir string) Func {
	return func(_ context.Context, in Input) []Check {
		if dir == "" || dir == existingParent(in.OutDir) {
			return nil
		}
		return []Check{diskCheckIn(name, dir, in.PlannedDiskBytes)}
	}
}

func diskCheckIn(name, dir string, planned int64) Check {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return Check{Name: name, Detail: fmt.Sprintf("cannot read free space of %s: %v", dir, err)}
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	// Room for the data plus half again for compaction and logs, and 256 MiB for results.
	need := planned + planned/2 + 256<<20
	c := Check{Name: name, OK: free >= need,
		Detail: fmt.Sprintf("%s free in %s, %s needed", human(free), dir, human(need))}
	return c
}

func memoryCheck(in Input) Check {
	readAvail := in.MemAvailable
	if readAvail == nil {
		readAvail = memAvailable
	}
	avail, err := readAvail()
	if err != nil {
		return Check{Name: "memory", OK: true, Detail: "not checked: " + err.Error()}
	}
	need := in.PlannedMemoryBytes
	c := Check{Name: "memory", OK: avail >= need, Detail: fmt.Sprintf("%s available, %s needed", human(avail), human(need))}
	if in.MemoryDetail != "" {
		c.Detail += " (" + in.MemoryDetail + ")"
	}
	if !c.OK && in.MemorySettings != "" {
		c.Detail += ": lower " + in.MemorySettings
	}
	return c
}

func memAvailable() (int64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "MemAvailable:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, err := strconv.ParseInt(f[1], 10, 64)
				return kb << 10, err
			}
		}
	}
	return 0, errors.New("no MemAvailable in /proc/meminfo")
}

// Binary checks that the elasticity executable emulated nodes run is there.
func Binary(bin string) Func {
	return func(context.Context, Input) []Check { return []Check{binaryCheck(bin)} }
}

func binaryCheck(bin string) Check {
	if bin == "" {
		return Check{Name: "binary", OK: true, Detail: "not checked (no binary given)"}
	}
	st, err := os.Stat(bin)
	if err != nil {
		return Check{Name: "binary", Detail: fmt.Sprintf("%s: %v", bin, err)}
	}
	if st.Mode()&0o111 == 0 {
		return Check{Name: "binary", Detail: bin + " is not executable"}
	}
	return Check{Name: "binary", OK: true, Detail: bin}
}

// Loopback checks that nodes can listen on addr (their first 127.0.0.N).
func Loopback(addr string) Func {
	return func(context.Context, Input) []Check { return []Check{loopbackCheck(addr)} }
}

func loopbackCheck(addr string) Check {
	if addr == "" {
		addr = "127.0.0.2"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return Check{Name: "loopback", Detail: fmt.Sprintf("cannot bind %s (nodes listen on their own 127.0.0.N): %v", addr, err)}
	}
	ln.Close()
	return Check{Name: "loopback", OK: true, Detail: addr + " bindable"}
}

// Docker checks that a Docker engine answers ping (nil: not checked).
func Docker(ping func(ctx context.Context) error) Func {
	return func(ctx context.Context, _ Input) []Check { return []Check{dockerCheck(ctx, ping)} }
}

func dockerCheck(ctx context.Context, ping func(ctx context.Context) error) Check {
	if ping == nil {
		return Check{Name: "docker", OK: true, Detail: "not checked"}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := ping(ctx); err != nil {
		return Check{Name: "docker", Detail: "no Docker engine answers: " + err.Error()}
	}
	return Check{Name: "docker", OK: true, Detail: "engine answers"}
}

// DockerImage checks the run's image with find, which finds it in the
// engine or pulls it and names the image in its error.
func DockerImage(find func(ctx context.Context) error) Func {
	return func(ctx context.Context, _ Input) []Check { return []Check{dockerImageCheck(ctx, find)} }
}

func dockerImageCheck(ctx context.Context, find func(ctx context.Context) error) Check {
	// A pull of a real image can take minutes.
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	if err := find(ctx); err != nil {
		return Check{Name: "docker-image", Detail: err.Error()}
	}
	return Check{Name: "docker-image", OK: true, Detail: "present"}
}

// AIOPerShard is what one ScyllaDB shard reserves of the kernel's AIO
// slots: storage 1024 + preempt 2 + network 50000 iocbs
// (docs/dev/docker-hub.md: aio_max_nr >= aio_nr + 51026 * ncpus).
const AIOPerShard = 51026

// AIO checks that fs.aio-max-nr leaves room for every shard of every
// container (all share the host's kernel) beyond what is in use already:
// smps are the --smp of every ScyllaDB container the run starts (nothing
// to check when empty: the image double uses no AIO). readMax and readNr
// read /proc/sys/fs/aio-max-nr and aio-nr (nil: the real files).
func AIO(smps []int, readMax, readNr func() (int64, error)) Func {
	return func(context.Context, Input) []Check {
		if len(smps) == 0 {
			return nil
		}
		return []Check{aioCheck(smps, readMax, readNr)}
	}
}

func aioCheck(smps []int, readMax, readNr func() (int64, error)) Check {
	if readMax == nil {
		readMax = func() (int64, error) { return readProcInt("/proc/sys/fs/aio-max-nr") }
	}
	if readNr == nil {
		readNr = func() (int64, error) { return readProcInt("/proc/sys/fs/aio-nr") }
	}
	maxNr, err := readMax()
	if err != nil {
		return Check{Name: "aio", OK: true, Detail: "not checked: " + err.Error()}
	}
	nr, err := readNr()
	if err != nil {
		return Check{Name: "aio", OK: true, Detail: "not checked: " + err.Error()}
	}
	shards, largest := 0, 0
	for _, s := range smps {
		shards += s
		largest = max(largest, s)
	}
	need := nr + int64(AIOPerShard*shards)
	if maxNr >= need {
		return Check{Name: "aio", OK: true, Detail: fmt.Sprintf("fs.aio-max-nr %d ≥ %d (aio-nr %d + %d × %d shards, largest --smp %d)", maxNr, need, nr, AIOPerShard, shards, largest)}
	}
	return Check{Name: "aio", Detail: fmt.Sprintf("fs.aio-max-nr is %d, the run's %d shards (%d containers, largest --smp %d) need %d (aio-nr %d + %d per shard, docs/dev/docker-hub.md): raise it with sysctl -w fs.aio-max-nr=%d",
		maxNr, shards, len(smps), largest, need, nr, AIOPerShard, need)}
}

func readProcInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// AWSCredentials looks for a source of AWS credentials in the run's
// environment and shared files, without reading or printing any value.
func AWSCredentials() Func {
	return func(_ context.Context, in Input) []Check { return []Check{awsCredentialsCheck(in.Getenv)} }
}

func awsCredentialsCheck(getenv func(string) string) Check {
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"} {
		if getenv(v) != "" {
			return Check{Name: "aws-credentials", OK: true, Detail: "from " + v}
		}
	}
	home := getenv("HOME")
	for _, f := range []string{getenv("AWS_SHARED_CREDENTIALS_FILE"), filepath.Join(home, ".aws", "credentials"), filepath.Join(home, ".aws", "config")} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err == nil {
			return Check{Name: "aws-credentials", OK: true, Detail: "from " + f}
		}
	}
	return Check{Name: "aws-credentials", Detail: "no AWS credentials found (environment, shared files); an instance role cannot be checked from here"}
}

func human(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}
