package results

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Severities of database events, SCT's names (sdcm/sct_events/__init__.py Severity).
const (
	SeverityCritical = "CRITICAL"
	SeverityError    = "ERROR"
	SeverityWarning  = "WARNING"
	SeverityNormal   = "NORMAL"
	SeverityDebug    = "DEBUG"
)

// Severities lists the severities a scenario may give an error type.
var Severities = []string{SeverityCritical, SeverityError, SeverityWarning, SeverityNormal, SeverityDebug}

// DefaultSeverities are the severities of the database error types, from
// scylla-cluster-tests defaults/severities.yaml (DatabaseLogEvent.*).
// STARTUP_FAILED is not a DatabaseLogEvent there: SCT fails wait_for_init on
// "Startup failed" lines, so it is CRITICAL here. A scenario overrides them
// with `severities:`.
var DefaultSeverities = map[string]string{
	"NO_SPACE_ERROR":    SeverityError,
	"BAD_ALLOC":         SeverityError,
	"SCHEMA_FAILURE":    SeverityError,
	"RUNTIME_ERROR":     SeverityError,
	"FILESYSTEM_ERROR":  SeverityError,
	"DISK_ERROR":        SeverityError,
	"BACKTRACE":         SeverityError,
	"ABORTING_ON_SHARD": SeverityError,
	"SEGMENTATION":      SeverityError,
	"INTEGRITY_CHECK":   SeverityError,
	"DATABASE_ERROR":    SeverityError,
	"STACKTRACE":        SeverityError,
	"STARTUP_FAILED":    SeverityCritical,
}

// Phases lists the phases in run order (what expected_errors[].during may name besides steps and cycles).
var Phases = []Phase{PhaseProvision, PhaseSchema, PhaseFill, PhaseHold, PhaseCompactions, PhaseCalibrate, PhaseSteady, PhaseNemesis, PhaseFinalHold, PhaseTeardown}

// ErrorTypes are the error types a filter or severity may name, sorted.
func ErrorTypes() []string {
	out := make([]string, 0, len(DefaultSeverities))
	for t := range DefaultSeverities {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// ErrorFilter is one entry of a scenario's expected_errors (SCT's
// DbEventsFilter): events it matches do not fail the run. Type and Regex
// (on the original line) both match when both are set; During names a
// nemesis step, a cycle or a phase the event must have happened in;
// MaxCount > 0 expects at most that many events, the rest fail the run.
type ErrorFilter struct {
	Type     string `json:"type,omitempty"`
	Regex    string `json:"regex,omitempty"`
	During   string `json:"during,omitempty"`
	MaxCount int    `json:"max_count,omitempty"`
}

// ErrorEvent is one database error, placed in the run's timeline.
type ErrorEvent struct {
	Time     time.Time `json:"time"`
	Node     string    `json:"node"`
	Type     string    `json:"type"`
	Severity string    `json:"severity"`
	Phase    Phase     `json:"phase,omitempty"`
	Step     string    `json:"step,omitempty"`  // nemesis step ("" outside the nemesis)
	Cycle    string    `json:"cycle,omitempty"` // "Cycle #0" ... ("" outside measured cycles)
	Line     string    `json:"line"`
	// Expected: a scenario filter (Filter, its index in expected_errors) expects it.
	Expected bool `json:"expected"`
	Filter   *int `json:"filter,omitempty"`
}

// Failing reports whether the event's severity fails a run.
func (e ErrorEvent) Failing() bool {
	return e.Severity == SeverityError || e.Severity == SeverityCritical
}

// Matches reports whether f selects e (ignoring MaxCount).
func (f ErrorFilter) Matches(e ErrorEvent, re *regexp.Regexp) bool {
	if f.Type != "" && !strings.EqualFold(f.Type, e.Type) {
		return false
	}
	if re != nil && !re.MatchString(e.Line) {
		return false
	}
	if f.During != "" && f.During != e.Step && f.During != e.Cycle && f.During != string(e.Phase) {
		return false
	}
	return true
}

// JudgeErrors applies severities (type -> severity overrides of the
// defaults) and filters to events, in time order, and returns the events
// that fail the run: unexpected ERROR or CRITICAL ones. A filter whose
// regex does not compile matches nothing (scenarios validate it).
func JudgeErrors(events []ErrorEvent, severities map[string]string, filters []ErrorFilter) []ErrorEvent {
	sort.SliceStable(events, func(i, j int) bool { return events[i].Time.Before(events[j].Time) })
	res := make([]*regexp.Regexp, len(filters))
	for i, f := range filters {
		if f.Regex != "" {
			re, err := regexp.Compile(f.Regex)
			if err != nil {
				re = regexp.MustCompile(`$.^`)
			}
			res[i] = re
		}
	}
	used := make([]int, len(filters))
	var failing []ErrorEvent
	for i := range events {
		e := &events[i]
		if s, ok := severities[e.Type]; ok {
			e.Severity = s
		} else if s, ok := DefaultSeverities[e.Type]; ok {
			e.Severity = s
		}
		e.Expected, e.Filter = false, nil
		for fi, f := range filters {
			if !f.Matches(*e, res[fi]) || (f.MaxCount > 0 && used[fi] >= f.MaxCount) {
				continue
			}
			used[fi]++
			e.Expected, e.Filter = true, &fi
			break
		}
		if !e.Expected && e.Failing() {
			failing = append(failing, *e)
		}
	}
	return failing
}

// ErrorsReason names the first failing events (at most three) for a run's reason.
func ErrorsReason(failing []ErrorEvent) string {
	var parts []string
	for i, e := range failing {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(failing)-3))
			break
		}
		where := string(e.Phase)
		if e.Step != "" {
			where = e.Step
		}
		if e.Cycle != "" {
			where += ", " + e.Cycle
		}
		parts = append(parts, fmt.Sprintf("%s %s on %s at %s (%s): %s", e.Severity, e.Type, e.Node, e.Time.UTC().Format("15:04:05"), where, trimLine(e.Line)))
	}
	return fmt.Sprintf("%d unexpected database error event(s): %s", len(failing), strings.Join(parts, "; "))
}

func trimLine(s string) string {
	if len(s) > 160 {
		return s[:160] + "..."
	}
	return s
}
