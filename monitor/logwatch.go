package monitor

import (
	"context"
	"io"
	"regexp"
	"strconv"
	"time"

	"github.com/elasticity-dev/elasticity/results"
)

// Severities of database_error events (SCT's names).
const (
	SeverityCritical = "CRITICAL"
	SeverityError    = "ERROR"
	SeverityWarning  = "WARNING"
	SeverityNormal   = "NORMAL"
)

// Error types of database_error events.
const (
	ErrReactorStalled = "REACTOR_STALLED"
	ErrNoSpace        = "NO_SPACE_ERROR"
	ErrBadAlloc       = "BAD_ALLOC"
	ErrStartupFailed  = "STARTUP_FAILED"
	ErrRuntime        = "RUNTIME_ERROR"
	ErrAborting       = "ABORTING_ON_SHARD"
	ErrSegmentation   = "SEGMENTATION"
	ErrDisk           = "DISK_ERROR"
	ErrFilesystem     = "FILESYSTEM_ERROR"
	ErrStacktrace     = "STACKTRACE"
	ErrIntegrity      = "INTEGRITY_CHECK"
	ErrSchema         = "SCHEMA_FAILURE"
	ErrDatabase       = "DATABASE_ERROR"
	ErrBacktrace      = "BACKTRACE"
)

// LogPattern turns matching log lines into events.
type LogPattern struct {
	Type     string
	Severity string
	Re       *regexp.Regexp
}

// LogPatterns are tried in order; the first match wins, so specific types
// come before the catch-all DATABASE_ERROR (as in SCT's DatabaseLogEvent list).
var LogPatterns = []LogPattern{
	{ErrReactorStalled, SeverityNormal, regexp.MustCompile(`Reactor stalled for (\d+(?:\.\d+)?) ms(?: on shard (\d+))?`)},
	{ErrNoSpace, SeverityError, regexp.MustCompile(`No space left on device`)},
	{ErrBadAlloc, SeverityError, regexp.MustCompile(`std::bad_alloc`)},
	{ErrStartupFailed, SeverityCritical, regexp.MustCompile(`init - Startup failed:`)},
	{ErrAborting, SeverityCritical, regexp.MustCompile(`Aborting on shard`)},
	{ErrSegmentation, SeverityCritical, regexp.MustCompile(`[Ss]egmentation`)},
	{ErrDisk, SeverityError, regexp.MustCompile(`storage_service - .*due to I/O errors.*Disk error: std::system_error`)},
	{ErrRuntime, SeverityError, regexp.MustCompile(`std::runtime_error`)},
	{ErrFilesystem, SeverityError, regexp.MustCompile(`filesystem_error`)},
	{ErrIntegrity, SeverityError, regexp.MustCompile(`integrity check failed`)},
	{ErrSchema, SeverityError, regexp.MustCompile(`Failed to load schema version`)},
	{ErrStacktrace, SeverityError, regexp.MustCompile(`stacktrace`)},
	{ErrDatabase, SeverityError, regexp.MustCompile(`(^ERROR|!\s*?ERR).*\[shard.*\]`)},
	{ErrBacktrace, SeverityError, regexp.MustCompile(`[Bb]acktrace`)},
}

// BenignPatterns are lines that match an error pattern but are expected
// during topology changes and shutdown; SCT filters the same ones. One table,
// so that adding an exclusion is a one-line change.
var BenignPatterns = []*regexp.Regexp{
	// Seastar's stall-report rate limit (LogWatcher counts it as stalls).
	suppressedRe,
	regexp.MustCompile(`audit:`), // SCT's BACKTRACE regex excludes audit lines
	regexp.MustCompile(`cql_server - exception while processing connection`),
	regexp.MustCompile(`seastar::sleep_aborted`),
	regexp.MustCompile(`seastar::gate_closed_exception`),
	regexp.MustCompile(`seastar::abort_requested_exception`),
	regexp.MustCompile(`seastar::broken_promise`),
	regexp.MustCompile(`rpc - client .*(connection dropped|fail to connect)`),
	regexp.MustCompile(`raft_topology - .*(aborted|abort requested)`),
	regexp.MustCompile(`view_update_generator - .*sleep_aborted`),
	regexp.MustCompile(`Shutting down`),
}

// logTime matches ScyllaDB's timestamp: "INFO  2026-11-30 12:00:00,123 [shard 0:main] ...".
var logTime = regexp.MustCompile(`^[A-Z]+\s+(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3})`)

// Classify returns the event a log line stands for, or false. The event's
// time is the line's own when it has one, else now.
func Classify(node, line string, now time.Time) (results.Event, bool) {
	for _, b := range BenignPatterns {
		if b.MatchString(line) {
			return results.Event{}, false
		}
	}
	for _, p := range LogPatterns {
		m := p.Re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		ev := results.Event{Time: lineTime(line, now), Node: node, Severity: p.Severity, ErrorType: p.Type, Line: line}
		if p.Type == ErrReactorStalled {
			ev.Type = results.EventStall
			ev.StallMS, _ = strconv.ParseFloat(m[1], 64)
		} else {
			ev.Type = results.EventDBError
		}
		return ev, true
	}
	return results.Event{}, false
}

func lineTime(line string, now time.Time) time.Time {
	return lineTimeIn(line, now, time.Local)
}

// lineTimeIn is the time of ScyllaDB's own timestamp, which is in the
// node's local time (loc), as UTC; now when the line has none.
func lineTimeIn(line string, now time.Time, loc *time.Location) time.Time {
	m := logTime.FindStringSubmatch(line)
	if m == nil {
		return now.UTC()
	}
	t, err := time.ParseInLocation("2006-01-02 15:04:05,000", m[1], loc)
	if err != nil {
		return now.UTC()
	}
	return t.UTC()
}

// Watch reads a node's log with a LogWatcher in the runner's time zone.
func Watch(ctx context.Context, node string, r io.Reader, emit func(results.Event)) error {
	return (&LogWatcher{Node: node, Emit: emit}).Watch(ctx, r)
}
