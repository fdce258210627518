package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/elasticity-dev/elasticity/argus"
)

// EnvArgusToken holds the Argus API token; it is never printed.
const EnvArgusToken = "ARGUS_TOKEN"

func init() {
	addCommand(func(e *env) *cobra.Command {
		root := &cobra.Command{Use: "argus", Short: "Send results to an Argus server"}
		var o argusFlags
		submit := &cobra.Command{
			Use:   "submit RUN_DIR --url URL [--dry-run] [--run-id UUID] [--job-name NAME] [--job-url URL]",
			Short: "Submit a run's tables to Argus",
			Long: `submit sends a rendered run directory to Argus the way Argus's SCT client does:
the run (run type scylla-cluster-tests, run id --run-id or one derived from
the run), the scylla-server package (the version, build date and revision
the database reported in RUN_DIR/logs/, from which Argus dates the
results), then reads the run back: a job name that is no registered Argus
test (no test has it as its Build System Id) stops here and says how to
register it. Then one submit_results per table of RUN_DIR/argus/,
set_status from the run's verdict, finalize. The token is read from $` + EnvArgusToken + ` and sent as
"Authorization: token ..."; it is never printed. Every request is also
appended to RUN_DIR/argus/argus_replay_log_<run id>_<...>.jsonl (Argus's
replay-log format) for offline ingest. --dry-run prints the requests
instead of sending them.

A table Argus answers with DataValidationError (a cell failed its
validation rule) is reported and the run's status set to failed.

Exit code: 0 sent, 1 a table failed Argus's validation, 2 invalid input
or a job that is not a registered Argus test, 3 Argus could not be reached
or answered an error.`,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				o.dir = args[0]
				return argusSubmit(cmd.Context(), e, o)
			},
		}
		submit.Flags().StringVar(&o.url, "url", "", "base URL of the Argus server, e.g. https://argus.scylladb.com")
		submit.Flags().BoolVar(&o.dryRun, "dry-run", false, "print the requests instead of sending them")
		submit.Flags().StringVar(&o.runID, "run-id", "", "Argus run id (a UUID; default: derived from the run, stable across submissions)")
		submit.Flags().StringVar(&o.jobName, "job-name", "", "job name of the run in Argus (default elasticity/<scenario>)")
		submit.Flags().StringVar(&o.jobURL, "job-url", "", "job URL of the run in Argus")
		root.AddCommand(submit)
		return root
	})
	submitToArgus = func(ctx context.Context, e *env, dir, url string) error {
		return argusSubmit(ctx, e, argusFlags{dir: dir, url: url})
	}
	checkArgus = func(e *env, url string) error { return argusTarget(e, url, false) }
}

// submitToArgus is how `run --argus-url` submits at the end of a run, and
// checkArgus how it checks the URL and the token before the run starts.
var (
	submitToArgus func(ctx context.Context, e *env, dir, url string) error
	checkArgus    func(e *env, url string) error
)

// argusTarget checks an Argus URL and that a token is set.
func argusTarget(e *env, u string, dryRun bool) error {
	if u == "" {
		return errors.New("--url is required")
	}
	if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("Argus URL %q: want http(s)://host", u)
	}
	if e.Getenv(EnvArgusToken) == "" && !dryRun {
		return fmt.Errorf("$%s is not set", EnvArgusToken)
	}
	return nil
}

type argusFlags struct {
	dir, url, runID, jobName, jobURL string
	dryRun                           bool
}

func argusSubmit(ctx context.Context, e *env, o argusFlags) error {
	if err := checkRunDir(o.dir); err != nil {
		return withCode(ExitInvalid, fmt.Errorf("argus submit: %w", err))
	}
	if err := argusTarget(e, o.url, o.dryRun); err != nil {
		return withCode(ExitInvalid, fmt.Errorf("argus submit: %w", err))
	}
	if o.runID != "" {
		if _, err := uuid.Parse(o.runID); err != nil {
			return withCode(ExitInvalid, fmt.Errorf("argus submit: --run-id %q is not a UUID", o.runID))
		}
	}
	token := e.Getenv(EnvArgusToken)
	c := &argus.Client{BaseURL: o.url, Token: token, RunID: o.runID}
	if o.dryRun {
		c.DryRun = e.Stdout
	}
	logf := func(format string, args ...any) { fmt.Fprintf(e.Stderr, format+"\n", args...) }
	out, err := argus.Submit(ctx, c, o.dir, argus.Options{JobName: o.jobName, JobURL: o.jobURL, StartedBy: e.Getenv("USER"), Logf: logf})
	if err != nil {
		var unregistered *argus.UnregisteredError
		code := ExitRunError
		if out == nil || errors.As(err, &unregistered) {
			// nothing was sent (the run directory could not be read), or the
			// job name is not one Argus knows: the input must change.
			code = ExitInvalid
		}
		return withCode(code, fmt.Errorf("argus submit: %s", redact(err.Error(), token)))
	}
	if out.Replay != "" {
		fmt.Fprintf(e.Stdout, "replay log: %s\n", out.Replay)
	}
	if o.dryRun {
		fmt.Fprintf(e.Stdout, "dry run: %d tables of run %s not sent\n", out.Tables, out.RunID)
		return nil
	}
	fmt.Fprintf(e.Stdout, "argus run %s: %d tables, status %s\n", out.RunID, out.Tables, out.Status)
	if len(out.Failed) > 0 {
		return withCode(ExitFailed, fmt.Errorf("argus submit: failed Argus's validation: %s", strings.Join(out.Failed, "; ")))
	}
	return nil
}

// redact keeps the token out of anything printed.
func redact(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "<ARGUS_TOKEN>")
}
