package argus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
	Tables int      // tables sent
	Failed []string // tables Argus answered with DataValidationError
	Status string   // the status set
	Replay string   // the replay log written ("" without one)
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
	if err := c.SubmitRun(ctx, job, opt.JobURL, by, config); err != nil {
		return out, fmt.Errorf("submitting the run: %w", err)
	}
	logf("argus: run %s submitted", c.RunID)
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
