package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Program is one [program:x] section. Zero fields take supervisord's
// defaults (supervisor/options.py, ServerOptions.processes_from_section):
// autorestart=unexpected, startsecs=1, startretries=3, exitcodes=0,
// stopwaitsecs=10, stopsignal=TERM.
type Program struct {
	Name         string
	Command      []string
	Env          []string
	Autorestart  string // "unexpected" (default), "true", "false"
	StartSecs    int
	StartRetries int
	ExitCodes    []int
	StopWaitSecs int
	// Stdout and Stderr receive the program's output
	// (stdout_logfile=/dev/stdout, stderr_logfile=/dev/stderr in the image).
	Stdout, Stderr io.Writer
}

func (p *Program) defaults() {
	if p.Autorestart == "" {
		p.Autorestart = "unexpected"
	}
	if p.StartSecs == 0 {
		p.StartSecs = 1
	}
	if p.StartRetries == 0 {
		p.StartRetries = 3
	}
	if p.ExitCodes == nil {
		p.ExitCodes = []int{0}
	}
	if p.StopWaitSecs == 0 {
		p.StopWaitSecs = 10
	}
}

// Process states (supervisor/states.py).
const (
	StateStopped  = "STOPPED"
	StateStarting = "STARTING"
	StateRunning  = "RUNNING"
	StateBackoff  = "BACKOFF"
	StateStopping = "STOPPING"
	StateExited   = "EXITED"
	StateFatal    = "FATAL"
)

// Supervisor runs programs as supervisord does and logs what it does in
// supervisord's format ("2006-01-02 15:04:05,000 INFO spawned: 'x' with
// pid N", supervisor/loggers.py and supervisor/process.py).
type Supervisor struct {
	// Log receives supervisord's own lines (stdout: nodaemon=true echoes
	// the log there, supervisor/options.py make_logger).
	Log io.Writer
	// LogTwice writes each line twice: branch-2025.2 and later also set
	// logfile=/dev/stdout (dist/docker/etc/supervisord.conf), so the file
	// handler and the nodaemon echo both print to the container's stdout.
	LogTwice bool
	Now      func() time.Time

	mu    sync.Mutex
	procs []*proc
}

type proc struct {
	Program
	state   string
	pid     int
	started time.Time
	cmd     *exec.Cmd
	desc    string
}

func (s *Supervisor) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Supervisor) logf(level, format string, args ...any) {
	t := s.now()
	line := fmt.Sprintf("%s,%03d %s %s\n", t.Format("2006-01-02 15:04:05"), t.Nanosecond()/1e6, level, fmt.Sprintf(format, args...))
	s.mu.Lock()
	defer s.mu.Unlock()
	io.WriteString(s.Log, line)
	if s.LogTwice {
		io.WriteString(s.Log, line)
	}
}

// Add registers a program; call before Run.
func (s *Supervisor) Add(p Program) {
	p.defaults()
	s.procs = append(s.procs, &proc{Program: p, state: StateStopped})
}

// Run starts every program (autostart) and supervises them until ctx ends,
// then stops them (stopsignal TERM, SIGKILL after stopwaitsecs). A program
// that gives up (FATAL) does not end the supervisor: the container stays.
func (s *Supervisor) Run(ctx context.Context) {
	s.logf("INFO", "supervisord started with pid %d", os.Getpid())
	var wg sync.WaitGroup
	for _, p := range s.procs {
		wg.Add(1)
		go func() { defer wg.Done(); s.supervise(ctx, p) }()
	}
	wg.Wait()
}

func (s *Supervisor) set(p *proc, state string, pid int) {
	s.mu.Lock()
	p.state, p.pid = state, pid
	s.mu.Unlock()
}

// supervise is one program's state machine (supervisor/process.py:
// Subprocess.spawn, finish, transition).
func (s *Supervisor) supervise(ctx context.Context, p *proc) {
	backoff := 0
	for ctx.Err() == nil {
		cmd := exec.Command(p.Command[0], p.Command[1:]...)
		cmd.Env = append(os.Environ(), p.Env...)
		cmd.Stdout, cmd.Stderr = p.Stdout, p.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		start := s.now()
		if err := cmd.Start(); err != nil {
			s.logf("INFO", "spawnerr: can't find command '%s'", p.Command[0])
			backoff++
			if !s.backoff(ctx, p, backoff) {
				return
			}
			continue
		}
		s.mu.Lock()
		p.cmd, p.started, p.state, p.pid = cmd, start, StateStarting, cmd.Process.Pid
		s.mu.Unlock()
		s.logf("INFO", "spawned: '%s' with pid %d", p.Name, cmd.Process.Pid)
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		running := time.NewTimer(time.Duration(p.StartSecs)*time.Second + 10*time.Millisecond)
		var werr error
	wait:
		for {
			select {
			case <-running.C:
				// STARTING -> RUNNING once up for more than startsecs.
				backoff = 0
				s.set(p, StateRunning, cmd.Process.Pid)
				s.logf("INFO", "success: %s entered RUNNING state, process has stayed up for > than %d seconds (startsecs)", p.Name, p.StartSecs)
			case werr = <-exited:
				break wait
			case <-ctx.Done():
				running.Stop()
				s.stop(p, cmd, exited)
				return
			}
		}
		running.Stop()
		es, msg := decodeWaitStatus(cmd.ProcessState)
		s.mu.Lock()
		wasRunning := p.state == StateRunning
		s.mu.Unlock()
		_ = werr
		if !wasRunning {
			// Exited before startsecs: STARTING -> BACKOFF.
			s.logf("WARN", "exited: %s (%s; not expected)", p.Name, msg)
			backoff++
			if !s.backoff(ctx, p, backoff) {
				return
			}
			continue
		}
		expected := es >= 0 && containsInt(p.ExitCodes, es)
		if expected {
			s.logf("INFO", "exited: %s (%s; expected)", p.Name, msg)
		} else {
			s.logf("WARN", "exited: %s (%s; not expected)", p.Name, msg)
		}
		s.set(p, StateExited, 0)
		if p.Autorestart == "true" || p.Autorestart == "unexpected" && !expected {
			continue // EXITED -> STARTING
		}
		<-ctx.Done()
		return
	}
}

// backoff waits backoff seconds before the next try (BACKOFF: delay = now
// + backoff) or gives up when backoff exceeds startretries; false = stop.
func (s *Supervisor) backoff(ctx context.Context, p *proc, backoff int) bool {
	if backoff > p.StartRetries {
		s.set(p, StateFatal, 0)
		s.mu.Lock()
		p.desc = "Exited too quickly (process log may have details)"
		s.mu.Unlock()
		s.logf("INFO", "gave up: %s entered FATAL state, too many start retries too quickly", p.Name)
		<-ctx.Done()
		return false
	}
	s.set(p, StateBackoff, 0)
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Duration(backoff) * time.Second):
		return true
	}
}

func (s *Supervisor) stop(p *proc, cmd *exec.Cmd, exited <-chan error) {
	s.set(p, StateStopping, cmd.Process.Pid)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	deadline := time.After(time.Duration(p.StopWaitSecs) * time.Second)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-exited:
			_, msg := decodeWaitStatus(cmd.ProcessState)
			s.set(p, StateStopped, 0)
			s.logf("INFO", "stopped: %s (%s)", p.Name, msg)
			return
		case <-tick.C:
			s.logf("INFO", "waiting for %s to die", p.Name)
		case <-deadline:
			s.logf("WARN", "killing '%s' (%d) with SIGKILL", p.Name, cmd.Process.Pid)
			_ = cmd.Process.Kill()
		}
	}
}

// decodeWaitStatus mirrors supervisor/options.py decode_wait_status.
func decodeWaitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, "unknown"
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok {
		return ps.ExitCode(), fmt.Sprintf("exit status %d", ps.ExitCode())
	}
	if ws.Signaled() {
		msg := "terminated by " + signame(ws.Signal())
		if ws.CoreDump() {
			msg += " (core dumped)"
		}
		return -1, msg
	}
	return ws.ExitStatus(), fmt.Sprintf("exit status %d", ws.ExitStatus())
}

var signames = map[syscall.Signal]string{syscall.SIGKILL: "SIGKILL", syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT",
	syscall.SIGABRT: "SIGABRT", syscall.SIGSEGV: "SIGSEGV", syscall.SIGHUP: "SIGHUP", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2", syscall.SIGBUS: "SIGBUS"}

func signame(sig syscall.Signal) string {
	if n, ok := signames[sig]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// Status is one line of `supervisorctl status`.
type Status struct {
	Name, State string
	PID         int
	Since       time.Time
	Description string
}

// Status reports every program's state, sorted by name.
func (s *Supervisor) Status() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Status
	for _, p := range s.procs {
		st := Status{Name: p.Name, State: p.state, PID: p.pid, Since: p.started, Description: p.desc}
		if p.state == StateRunning {
			up := s.now().Sub(p.started).Round(time.Second)
			st.Description = fmt.Sprintf("pid %d, uptime %d:%02d:%02d", p.pid, int(up.Hours()), int(up.Minutes())%60, int(up.Seconds())%60)
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Signal sends sig to a running program (supervisorctl signal SIG name).
func (s *Supervisor) Signal(name string, sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.procs {
		if p.Name != name {
			continue
		}
		if p.cmd == nil || p.cmd.Process == nil || (p.state != StateRunning && p.state != StateStarting) {
			return errors.New("ERROR (not running)")
		}
		if err := p.cmd.Process.Signal(sig); err != nil {
			return fmt.Errorf("ERROR (%v)", err)
		}
		return nil
	}
	return errors.New("ERROR (no such process)")
}

// ControlAddress is supervisord's [inet_http_server] (dist/docker/etc/supervisord.conf).
const ControlAddress = "127.0.0.1:9001"

// Serve answers supervisorctl on ln until ctx ends. Real supervisorctl
// speaks XML-RPC; the double's supervisorctl and supervisord are one binary
// and use two plain HTTP endpoints instead.
func (s *Supervisor) Serve(ctx context.Context, ln net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		for _, st := range s.Status() {
			fmt.Fprintf(w, "%-32s %-10s %s\n", st.Name, st.State, st.Description)
		}
	})
	mux.HandleFunc("POST /signal", func(w http.ResponseWriter, r *http.Request) {
		name, sigName := r.FormValue("name"), strings.TrimPrefix(strings.ToUpper(r.FormValue("signal")), "SIG")
		var sig syscall.Signal
		for k, v := range signames {
			if v == "SIG"+sigName {
				sig = k
			}
		}
		if sig == 0 {
			fmt.Fprintf(w, "ERROR: bad signal name '%s'\n", r.FormValue("signal"))
			return
		}
		if err := s.Signal(name, sig); err != nil {
			fmt.Fprintf(w, "%s: %v\n", name, err)
			return
		}
		fmt.Fprintf(w, "%s: signalled\n", name)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	_ = srv.Serve(ln)
}
