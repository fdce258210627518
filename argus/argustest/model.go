package argustest

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Package is one package of a run (argus/backend/plugins/sct/udt.py
// PackageVersion: every field optional, equality over all five).
type Package struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	Date       string `json:"date"`
	RevisionID string `json:"revision_id"`
	BuildID    string `json:"build_id"`
}

// Run is what the double keeps of an SCT run (plugins/sct/testrun.py
// SCTTestRun over plugins/core.py PluginModelBase), with the fields its
// /get answer carries.
type Run struct {
	ID            string    `json:"id"`
	BuildID       string    `json:"build_id"` // the job name (init_sct_run)
	TestID        *string   `json:"test_id"`  // nil when no test has build_system_id == BuildID
	GroupID       *string   `json:"group_id"`
	ReleaseID     *string   `json:"release_id"`
	Status        string    `json:"status"`
	StartedBy     string    `json:"started_by"`
	BuildJobURL   string    `json:"build_job_url"`
	ScmRevisionID string    `json:"scm_revision_id"`
	TestMethod    *string   `json:"test_method"`
	Packages      []Package `json:"packages"`
	VersionSource *string   `json:"version_source"`
	ScyllaVersion *string   `json:"scylla_version"`
	EndTime       time.Time `json:"end_time"`

	// Not part of Argus's run document: where the double keeps the cells
	// it stored for the run (generic_result_data_v1), by table name.
	Cells map[string][]Cell `json:"-"`
}

// Finalized reports whether finalize set the run's end time.
func (r *Run) Finalized() bool { return !r.EndTime.IsZero() && r.EndTime.Unix() != 0 }

// Test is a registered Argus test (models/web.py ArgusTest): runs whose
// job name equals its build_system_id are assigned to it.
type Test struct {
	ID, GroupID, ReleaseID, BuildSystemID, PluginName string
}

// pyError is a Python exception as Argus's handle_api_exception reports it
// (error_handlers.py): the class name, str(exception) and its args.
type pyError struct {
	Exception string
	Message   string
	Args      []any
}

func (e *pyError) Error() string { return e.Exception + ": " + e.Message }

func raise(exception, message string, args ...any) *pyError {
	if args == nil {
		args = []any{message}
	}
	return &pyError{Exception: exception, Message: message, Args: args}
}

// testStatuses are argus/common/enums.py TestStatus's values.
var testStatuses = map[string]bool{"created": true, "running": true, "failed": true, "test_error": true,
	"error": true, "passed": true, "aborted": true, "not_planned": true, "not_run": true}

// submissionFields are SCTTestRunSubmissionRequest's fields
// (plugins/sct/testrun.py); the first seven are required.
var submissionFields = []string{"schema_version", "run_id", "job_name", "job_url", "started_by", "commit_id",
	"sct_config", "origin_url", "branch_name", "runner_public_ip", "runner_private_ip"}

const requiredSubmissionFields = 7

// checkSubmission is SCTTestRunSubmissionRequest(**request_data): a missing
// required field or an unknown one is a TypeError.
func checkSubmission(body map[string]any) *pyError {
	known := map[string]bool{}
	for i, f := range submissionFields {
		known[f] = true
		if _, ok := body[f]; !ok && i < requiredSubmissionFields {
			return raise("TypeError", fmt.Sprintf("SCTTestRunSubmissionRequest.__init__() missing 1 required positional argument: '%s'", f))
		}
	}
	for k := range body {
		if !known[k] {
			return raise("TypeError", fmt.Sprintf("SCTTestRunSubmissionRequest.__init__() got an unexpected keyword argument '%s'", k))
		}
	}
	if _, err := uuid.Parse(fmt.Sprint(body["run_id"])); err != nil {
		// init_sct_run: run.id = UUID(req.run_id)
		return raise("ValueError", "badly formed hexadecimal UUID string")
	}
	return nil
}

// sutPackageNames is the order SCTTestRun.sut_timestamp looks packages up in.
func sutPackageNames(name string) []string {
	return []string{name + "-upgraded", name + "-upgrade-target", name, name + "-target"}
}

// sutTimestamp is SCTTestRun.sut_timestamp (plugins/sct/testrun.py): the
// SUT package's date (YYYYMMDD, UTC) plus its revision id, read as hex,
// modulo 1e6 in microseconds; without the package, Argus's ValueError.
func (r *Run) sutTimestamp(sutPackageName string) (float64, *pyError) {
	var pkg *Package
	for _, name := range sutPackageNames(sutPackageName) {
		for i := range r.Packages {
			if r.Packages[i].Name == name {
				pkg = &r.Packages[i]
				break
			}
		}
		if pkg != nil {
			break
		}
	}
	if pkg == nil {
		return 0, raise("ValueError", sutPackageName+" package not found in packages - cannot determine SUT timestamp")
	}
	day, err := time.ParseInLocation("20060102", pkg.Date, time.UTC)
	if err != nil || len(pkg.Date) != 8 {
		return 0, raise("ValueError", fmt.Sprintf("time data '%s' does not match format '%%Y%%m%%d'", pkg.Date))
	}
	rev, ok := pythonHex(pkg.RevisionID)
	if !ok {
		return 0, raise("ValueError", fmt.Sprintf("invalid literal for int() with base 16: '%s'", pkg.RevisionID))
	}
	return float64(day.Unix()) + float64(rev)/1e6, nil
}

// pythonHex is int(s, 16) % 1000000 for the revision ids Argus sees (git
// hashes: hex, optionally 0x-prefixed, surrounding whitespace allowed).
func pythonHex(s string) (int64, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimPrefix(s, "0x")
	s = strings.ReplaceAll(s, "_", "")
	if s == "" {
		return 0, false
	}
	var mod int64
	for _, c := range s {
		d, err := strconv.ParseInt(string(c), 16, 64)
		if err != nil {
			return 0, false
		}
		mod = (mod*16 + d) % 1000000
	}
	return mod, true
}
