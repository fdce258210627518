package awssim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// On the machine image scylla-server runs with --log-to-syslog 1
// --log-to-stdout 0 (scylladb dist/common/sysconfig/scylla-server), so its
// log lives in journald. Seastar's syslog line (seastar src/util/log.cc,
// logger::do_log) is the stdout line without its level and timestamp:
// " [shard 0:main] init - message", with the level carried as the syslog
// priority (error → LOG_ERR 3, warn → LOG_WARNING 4, info → LOG_INFO 6,
// debug and trace → LOG_DEBUG 7).
var priorities = map[string]int{"ERROR": 3, "WARN": 4, "INFO": 6, "DEBUG": 7, "TRACE": 7}

type journalEntry struct {
	t        time.Time
	priority int
	message  string // as syslog() received it
}

// parseNodeLine turns one line of the emulated node's ScyllaDB-format log
// ("INFO  2026-11-30 12:00:00,123 [shard 0:main] init - message") into the
// journal entry seastar's syslog output would have made of it. A line that
// is not a log line (seastar's raw stall reports and backtraces go to the
// process's stderr) is what journald records from a unit's stdio: priority
// 6, systemd's default SyslogLevel=info.
func parseNodeLine(line string, prev journalEntry) journalEntry {
	lvl, rest, ok := strings.Cut(line, " ")
	p, known := priorities[lvl]
	rest = strings.TrimLeft(rest, " ")
	if ok && known && len(rest) >= 23 {
		if t, err := time.ParseInLocation("2006-01-02 15:04:05,000", rest[:23], time.Local); err == nil {
			return journalEntry{t: t, priority: p, message: rest[23:]}
		}
	}
	t := prev.t
	if t.IsZero() {
		t = time.Now()
	}
	return journalEntry{t: t, priority: 6, message: line}
}

type journalOpts struct {
	unit   string
	follow bool
	lines  int // -1: all
	output string
	quiet  bool
}

// journalctlArgs recognises a journalctl command line.
func journalctlArgs(command string) ([]string, bool) {
	f := strings.Fields(command)
	if len(f) == 0 || (f[0] != "journalctl" && f[0] != "/usr/bin/journalctl" && !(f[0] == "sudo" && len(f) > 1 && f[1] == "journalctl")) {
		return nil, false
	}
	if f[0] == "sudo" {
		f = f[1:]
	}
	out := f[1:]
	for i, a := range out {
		out[i] = strings.Trim(a, `'"`)
	}
	return out, true
}

func parseJournalOpts(args []string) (journalOpts, error) {
	o := journalOpts{lines: -2, output: "short"}
	val := func(i *int, a, short, long string) (string, bool, error) {
		switch {
		case a == short || a == long:
			if *i+1 >= len(args) {
				return "", true, fmt.Errorf("option '%s' requires an argument", a)
			}
			*i++
			return args[*i], true, nil
		case strings.HasPrefix(a, long+"="):
			return strings.TrimPrefix(a, long+"="), true, nil
		case short != "" && strings.HasPrefix(a, short) && len(a) > len(short):
			return strings.TrimPrefix(a, short), true, nil
		}
		return "", false, nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if v, ok, err := val(&i, a, "-u", "--unit"); ok {
			if err != nil {
				return o, err
			}
			o.unit = strings.TrimSuffix(v, ".service")
			continue
		}
		if v, ok, err := val(&i, a, "-n", "--lines"); ok {
			if err != nil {
				return o, err
			}
			if v == "all" || v == "+all" {
				o.lines = -1
			} else if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				o.lines = n
			} else {
				return o, fmt.Errorf("failed to parse lines '%s'", v)
			}
			continue
		}
		if v, ok, err := val(&i, a, "-o", "--output"); ok {
			if err != nil {
				return o, err
			}
			o.output = v
			continue
		}
		switch a {
		case "-f", "--follow":
			o.follow = true
		case "-q", "--quiet":
			o.quiet = true
		case "--no-pager", "-a", "--all", "-b", "--boot", "--no-hostname", "--utc":
		default:
			return o, fmt.Errorf("unrecognized option '%s' (not simulated)", a)
		}
	}
	if o.lines == -2 {
		o.lines = -1
		if o.follow {
			o.lines = 10 // journalctl -f shows the last 10 lines unless -n says otherwise
		}
	}
	switch o.output {
	case "short", "short-iso", "short-precise", "cat", "json":
	default:
		return o, fmt.Errorf("output mode '%s' is not simulated", o.output)
	}
	return o, nil
}

// journalctl answers one journalctl command from the node's log; it
// returns the exit status.
func (in *instance) journalctl(args []string, stdout, stderr io.Writer, stop <-chan struct{}) uint32 {
	o, err := parseJournalOpts(args)
	if err != nil {
		fmt.Fprintf(stderr, "journalctl: %v\n", err)
		return 1
	}
	pid := 0
	in.lifeMu.Lock()
	if in.node != nil {
		pid = in.node.Pid
	}
	in.lifeMu.Unlock()
	host := "ip-" + strings.ReplaceAll(in.private, ".", "-")
	w := bufio.NewWriter(stdout)
	emit := func(e journalEntry) error {
		var line string
		switch o.output {
		case "cat":
			line = e.message
		case "json":
			b, _ := json.Marshal(map[string]string{
				"__REALTIME_TIMESTAMP": strconv.FormatInt(e.t.UnixMicro(), 10),
				"PRIORITY":             strconv.Itoa(e.priority),
				"SYSLOG_FACILITY":      "1",
				"SYSLOG_IDENTIFIER":    "scylla",
				"_PID":                 strconv.Itoa(pid),
				"_SYSTEMD_UNIT":        "scylla-server.service",
				"_HOSTNAME":            host,
				"MESSAGE":              e.message,
			})
			line = string(b)
		case "short-iso":
			line = fmt.Sprintf("%s %s scylla[%d]: %s", e.t.Format("2006-01-02T15:04:05-0700"), host, pid, e.message)
		case "short-precise":
			line = fmt.Sprintf("%s %s scylla[%d]: %s", e.t.Format("Jan 02 15:04:05.000000"), host, pid, e.message)
		default:
			line = fmt.Sprintf("%s %s scylla[%d]: %s", e.t.Format("Jan 02 15:04:05"), host, pid, e.message)
		}
		if _, err := w.WriteString(line + "\n"); err != nil {
			return err
		}
		return nil
	}
	if o.unit != "scylla-server" {
		if !o.quiet {
			fmt.Fprintln(w, "-- No entries --")
		}
		w.Flush()
		if !o.follow {
			return 0
		}
		<-stop
		return 0
	}
	f, err := os.Open(in.logPath())
	var rd *bufio.Reader
	var entries []journalEntry
	var prev journalEntry
	var partial string
	if err == nil {
		defer f.Close()
		rd = bufio.NewReaderSize(f, 64<<10)
		for {
			s, err := rd.ReadString('\n')
			if err != nil {
				partial = s
				break
			}
			prev = parseNodeLine(strings.TrimRight(s, "\n"), prev)
			entries = append(entries, prev)
		}
	}
	if o.lines >= 0 && len(entries) > o.lines {
		entries = entries[len(entries)-o.lines:]
	}
	if len(entries) == 0 && !o.quiet && !o.follow {
		fmt.Fprintln(w, "-- No entries --")
	}
	for _, e := range entries {
		if emit(e) != nil {
			return 1
		}
	}
	if w.Flush() != nil {
		return 1
	}
	if !o.follow {
		return 0
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return 0
		case <-tick.C:
		}
		if rd == nil {
			if f, err = os.Open(in.logPath()); err != nil {
				continue
			}
			defer f.Close()
			rd = bufio.NewReaderSize(f, 64<<10)
		}
		for {
			s, err := rd.ReadString('\n')
			if err != nil {
				partial += s
				break
			}
			s, partial = partial+s, ""
			prev = parseNodeLine(strings.TrimRight(s, "\n"), prev)
			if emit(prev) != nil {
				return 1
			}
		}
		if w.Flush() != nil {
			return 1
		}
	}
}
