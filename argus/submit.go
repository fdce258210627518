package argus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/elasticity-dev/elasticity/reporting"
	"github.com/elasticity-dev/elasticity/results"
)

// runNamespace makes run ids stable: the same run directory always maps to
// the same Argus run, so a second submission updates rather than duplicates.
var runNamespace = uuid.MustParse("5b0c2e3e-6c1f-4d35-9a8e-2f6f2a1f7e10")

// RunIDFor is the Argus run id of a run: its own id when that is a UUID,
// else a name-based UUID of the run id and start time.
func RunIDFor(res *results.Result) string {
	if u, err := uuid.Parse(res.Setup.RunID); err == nil {
		return u.String()
	}
	return uuid.NewSHA1(runNamespace, []byte(res.Setup.RunID+"@"+res.StartedAt.UTC().Format(time.RFC3339Nano))).String()
}

// StatusFor maps a run's status to Argus's TestStatus; results that failed
// Argus's validation fail a run that otherwise passed (as SCT's
// FailedResultEvent does).
func StatusFor(res *results.Result, validationFailed bool) string {
	switch res.Status {
	case results.StatusPassed:
		if validationFailed {
			return StatusFailed
		}
		return StatusPassed
	case results.StatusFailed:
		return StatusFailed
	case results.StatusInterrupted:
		return StatusAbort
	}
	return StatusError
}

// Outcome is what a submission did.
type Outcome struct {
	RunID  string
	SUT    *SUT     // the database version submitted (nil: none known)
	Tables int      // tables sent
	Failed []string // tables Argus answered with DataValidationError
	Status string   // the status set
	Replay string   // the replay log written ("" without one)
}

// UnregisteredError is a run Argus created without a test: no Argus test
// has the job name as its build_system_id (plugins/core.py
// assign_categories only logs a warning), so the run stays invisible and
// Argus cannot store its results (results live under the test's id).
type UnregisteredError struct {
	Job, RunID, BaseURL string
}

func (e *UnregisteredError) Error() string {
	return fmt.Sprintf("job %q is not a registered Argus test: Argus created run %s without a test, so the run is not shown and cannot store results.\n"+
		"  To register it, an Argus admin adds a test whose Build System Id is %q (plugin %s) on Argus's admin page,\n"+
		"  or POSTs build_id %q, plugin_name %q, test_name, pretty_name, build_url, group_id and release_id to %s/admin/api/v1/test/create;\n"+
		"  or pass --job-name with a registered test's Build System Id.\n"+
		"  Then submit again: the run id stays the same and Argus moves this run under the new test.",
		e.Job, e.RunID, e.Job, RunType, e.Job, RunType, strings.TrimRight(e.BaseURL, "/"))
}

// Options of a submission.
type Options struct {
	JobName, JobURL, StartedBy string
	Logf                       func(format string, args ...any)
}

// Submit sends a rendered run directory (result.json's data and argus/) to
// Argus: the run, one submit_results per table, set_status, finalize.
func Submit(ctx context.Context, c *Client, dir string, opt Options) (*Outcome, error) {
	res, err := reporting.Load(dir)
	if err != nil {
		return nil, err
	}
	tables, err := reporting.ReadArgus(dir)
	if err != nil {
		return nil, err
	}
	if c.RunID == "" {
		c.RunID = RunIDFor(res)
	}
	logf := opt.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	out := &Outcome{RunID: c.RunID}
	if c.Replay == nil {
		name := fmt.Sprintf("argus_replay_log_%s_%d_%d.jsonl", c.RunID, time.Now().UnixNano(), os.Getpid())
		path := filepath.Join(dir, reporting.DirArgus, name)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("argus: opening the replay log: %w", err)
		}
		defer f.Close()
		c.Replay, out.Replay = f, path
		defer func() { c.Replay = nil }()
	}
	job := opt.JobName
	if job == "" {
		job = "elasticity/" + res.Setup.Scenario
	}
	by := opt.StartedBy
	if by == "" {
		by = "elasticity"
	}
	config := map[string]any{
		"cluster_backend": res.Setup.Backend,
		"test_method":     "elasticity." + res.Setup.Scenario,
		"n_db_nodes":      strconv.Itoa(len(res.Setup.InitialNodes)),
		"elasticity": map[string]any{
			"run_id": res.Setup.RunID, "scenario": res.Setup.Scenario, "emulated": res.Setup.Emulated,
			"database_version": res.Setup.DatabaseVersion, "status": res.Status, "reason": res.Reason,
		},
	}
	if out.SUT, err = SUTOf(dir, res); err != nil {
		return nil, err
	}
	if err := c.SubmitRun(ctx, job, opt.JobURL, by, config); err != nil {
		return out, fmt.Errorf("submitting the run: %w", err)
	}
	logf("argus: run %s submitted as job %s", c.RunID, job)
	if err := submitSUT(ctx, c, out.SUT, res, tables, logf); err != nil {
		return out, err
	}
	if err := checkRegistered(ctx, c, job, logf); err != nil {
		return out, err
	}
	for _, t := range tables {
		err := c.SubmitResults(ctx, t)
		switch {
		case IsValidation(err):
			out.Failed = append(out.Failed, t.Meta.Name)
			logf("argus: %s: failed Argus's validation (see the run's Results tab)", t.Meta.Name)
		case err != nil:
			return out, fmt.Errorf("submitting table %q: %w", t.Meta.Name, err)
		}
		out.Tables++
	}
	out.Status = StatusFor(res, len(out.Failed) > 0)
	if err := c.SetStatus(ctx, out.Status); err != nil {
		return out, fmt.Errorf("setting the run status: %w", err)
	}
	if err := c.Finalize(ctx); err != nil {
		return out, fmt.Errorf("finalizing the run: %w", err)
	}
	logf("argus: %d tables sent, status %s, run finalized", out.Tables, out.Status)
	return out, nil
}

// submitSUT tells Argus which database the run tested, as SCT does
// (sdcm/tester.py argus_collect_packages): a scylla-server package. When
// its version carries a build date and revision, Argus dates every table
// from it (sut_timestamp 0); when it does not (the emulator's versions),
// the package still names the version and each table carries the run's
// start as its sut_timestamp, for Argus would refuse to date it.
func submitSUT(ctx context.Context, c *Client, sut *SUT, res *results.Result, tables []reporting.ArgusTable, logf func(string, ...any)) error {
	if sut != nil {
		if err := c.SubmitPackages(ctx, []Package{sut.Package}); err != nil {
			return fmt.Errorf("submitting the %s package: %w", SUTPackageName, err)
		}
		logf("argus: %s %s (%s)", SUTPackageName, sut.Package.Version, sut.Source)
		if sut.Dated {
			return nil
		}
	}
	ts := res.StartedAt.Unix()
	for i := range tables {
		if tables[i].SUTTimestamp == 0 {
			tables[i].SUTTimestamp = ts
		}
	}
	logf("argus: the database version has no build date: tables are dated by the run's start (%s)", res.StartedAt.UTC().Format(time.RFC3339))
	return nil
}

// checkRegistered reads the run back and fails with *UnregisteredError
// when Argus gave it no test.
func checkRegistered(ctx context.Context, c *Client, job string, logf func(string, ...any)) error {
	run, err := c.GetRun(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("reading the run back: %w", err)
	case run == nil && c.DryRun != nil:
		return nil
	case run == nil:
		return fmt.Errorf("reading the run back: Argus has no run %s after creating it", c.RunID)
	case run.TestID == nil || *run.TestID == "":
		return &UnregisteredError{Job: job, RunID: c.RunID, BaseURL: c.BaseURL}
	}
	logf("argus: job %s is Argus test %s", job, *run.TestID)
	return nil
}
