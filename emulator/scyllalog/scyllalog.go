// Package scyllalog writes log lines in ScyllaDB's format, the one the
// framework's log watcher and SCT-style patterns parse:
//
//	INFO  2026-11-30 12:00:00,123 [shard 0:main] init - message
package scyllalog

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Levels as ScyllaDB prints them.
const (
	Error = "ERROR"
	Warn  = "WARN"
	Info  = "INFO"
	Debug = "DEBUG"
	Trace = "TRACE"
)

// Format returns one log line (with its trailing newline).
func Format(t time.Time, level string, shard int, group, logger, msg string) string {
	msg = strings.TrimRight(msg, "\n")
	return fmt.Sprintf("%-5s %s [shard %d:%s] %s - %s\n", level, t.Format("2006-01-02 15:04:05,000"), shard, group, logger, msg)
}

// Logger writes lines to w; each line is one Write. Safe for concurrent use.
type Logger struct {
	mu  sync.Mutex
	w   io.Writer
	Now func() time.Time // for tests; default time.Now
	// MinLevel drops lines below it (Debug and Trace are dropped by default).
	MinLevel string
}

// New returns a Logger writing to w at INFO and above.
func New(w io.Writer) *Logger { return &Logger{w: w, MinLevel: Info} }

var rank = map[string]int{Trace: 0, Debug: 1, Info: 2, Warn: 3, Error: 4}

// Logf logs on shard 0 in scheduling group "main"; its signature matches
// diskmodel's logf.
func (l *Logger) Logf(level, logger, format string, args ...any) {
	l.ShardLogf(0, "main", level, logger, format, args...)
}

// ShardLogf logs a line for a shard and scheduling group (e.g. "main",
// "strm", "stmt", "comp").
func (l *Logger) ShardLogf(shard int, group, level, logger, format string, args ...any) {
	if l == nil || rank[level] < rank[l.MinLevel] {
		return
	}
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	line := Format(now(), level, shard, group, logger, msg)
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(l.w, line)
}

// Raw writes line as is (plus a newline), as Seastar's async-signal-safe
// reports (stall backtraces) go to stderr with no level or timestamp. It
// shares the Logger's lock, so it never splits another line.
func (l *Logger) Raw(line string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(l.w, strings.TrimRight(line, "\n")+"\n")
}
