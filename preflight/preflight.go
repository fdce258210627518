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
	Backend string // local | docker | aws | static
	OutDir  string // where results (and, for local, node data) go
	// PlannedDiskBytes is what the run will write on this machine (local: the
	// nodes' data; other backends: results only).
	PlannedDiskBytes int64
	// PlannedMemoryBytes is what the run's local processes need.
	PlannedMemoryBytes int64
	Binary             string // the elasticity binary (local backend)
	BaseAddress        string // first loopback address of local nodes
	Getenv             func(string) string
	// DockerPing reports whether a Docker engine answers (nil: not checked).
	DockerPing func(ctx context.Context) error
}

// Check is one check's outcome.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Error lists the failed checks.
type Error struct{ Failed []Check }

func (e *Error) Error() string {
	parts := make([]string, len(e.Failed))
	for i, c := range e.Failed {
		parts[i] = c.Name + ": " + c.Detail
	}
	return "pre-flight failed (use --skip-preflight to bypass): " + strings.Join(parts, "; ")
}

// Run performs the checks for in.Backend. It returns every check and an
// *Error when any failed.
func Run(ctx context.Context, in Input) ([]Check, error) {
	if in.Getenv == nil {
		in.Getenv = os.Getenv
	}
	var checks []Check
	checks = append(checks, diskCheck(in))
	if in.PlannedMemoryBytes > 0 {
		checks = append(checks, memoryCheck(in.PlannedMemoryBytes))
	}
	switch in.Backend {
	case "local", "":
		checks = append(checks, binaryCheck(in.Binary), loopbackCheck(in.BaseAddress))
	case "docker":
		checks = append(checks, dockerCheck(ctx, in))
	case "aws":
		checks = append(checks, awsCredentialsCheck(in.Getenv))
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
	dir := existingParent(in.OutDir)
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return Check{Name: "disk", Detail: fmt.Sprintf("cannot read free space of %s: %v", dir, err)}
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	// Room for the data plus half again for compaction and logs, and 256 MiB for results.
	need := in.PlannedDiskBytes + in.PlannedDiskBytes/2 + 256<<20
	c := Check{Name: "disk", OK: free >= need,
		Detail: fmt.Sprintf("%s free in %s, %s needed", human(free), dir, human(need))}
	return c
}

func memoryCheck(need int64) Check {
	avail, err := memAvailable()
	if err != nil {
		return Check{Name: "memory", OK: true, Detail: "not checked: " + err.Error()}
	}
	return Check{Name: "memory", OK: avail >= need, Detail: fmt.Sprintf("%s available, %s needed", human(avail), human(need))}
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

func dockerCheck(ctx context.Context, in Input) Check {
	if in.DockerPing == nil {
		return Check{Name: "docker", OK: true, Detail: "not checked"}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := in.DockerPing(ctx); err != nil {
		return Check{Name: "docker", Detail: "no Docker engine answers: " + err.Error()}
	}
	return Check{Name: "docker", OK: true, Detail: "engine answers"}
}

// awsCredentialsCheck looks for a source of credentials without reading or
// printing any value.
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
