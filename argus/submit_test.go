package argus_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/elasticity-dev/elasticity/argus"
	"github.com/elasticity-dev/elasticity/argus/argustest"
	"github.com/elasticity-dev/elasticity/reporting"
)

const token = "s3cr3t-token"

// renderedRun copies the reporting fixture (a failed 90pct-scaleout run) and renders it.
func renderedRun(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "reporting", "testdata", "run1")
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := reporting.Render(dst, reporting.Options{}); err != nil {
		t.Fatal(err)
	}
	return dst
}

// fixtureJob is the job name Submit gives the fixture's run by default.
const fixtureJob = "elasticity/90pct-scaleout"

func TestSubmitLifecycle(t *testing.T) {
	dir := renderedRun(t)
	srv := argustest.New(token)
	defer srv.Close()
	testID := srv.RegisterTest(fixtureJob)
	tables, err := reporting.ReadArgus(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := &argus.Client{BaseURL: srv.URL, Token: token}
	out, err := argus.Submit(context.Background(), c, dir, argus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	calls := srv.Calls()
	const before = 3 // submit, packages, get
	if len(calls) != before+len(tables)+2 {
		t.Fatalf("%d calls, want submit + packages + get + %d tables + set_status + finalize", len(calls), len(tables))
	}
	base := "/api/v1/client/testrun/scylla-cluster-tests/"
	if calls[0].Path != base+"submit" || calls[1].Path != "/api/v1/client/sct/"+out.RunID+"/packages/submit" ||
		calls[2].Method != "GET" || calls[2].Path != base+out.RunID+"/get" ||
		calls[len(calls)-2].Path != base+out.RunID+"/set_status" || calls[len(calls)-1].Path != base+out.RunID+"/finalize" {
		t.Errorf("lifecycle %s, %s, %s %s … %s, %s", calls[0].Path, calls[1].Path, calls[2].Method, calls[2].Path, calls[len(calls)-2].Path, calls[len(calls)-1].Path)
	}
	for i, cl := range calls {
		if cl.Authorization != "token "+token {
			t.Errorf("call %d: Authorization %q", i, cl.Authorization)
		}
		if cl.Method == "POST" && cl.Body["schema_version"] != argus.SchemaVersion {
			t.Errorf("call %d: schema_version %v", i, cl.Body["schema_version"])
		}
		if i >= before && i < before+len(tables) {
			if cl.Path != base+out.RunID+"/submit_results" || cl.Body["run_id"] != out.RunID {
				t.Errorf("call %d: %s run_id %v", i, cl.Path, cl.Body["run_id"])
			}
			if m, _ := cl.Body["meta"].(map[string]any); m["name"] != tables[i-before].Meta.Name {
				t.Errorf("call %d: table %v, want %s", i, m["name"], tables[i-before].Meta.Name)
			}
		}
	}
	// The fixture's Cycle #1 P90 read breaks read_p90_ms ≤ 5: Argus,
	// judging the UNSET cell by the fixed_limit, answers DataValidationError.
	if len(out.Failed) != 1 || out.Failed[0] != "mixed - grow - latencies" || out.Tables != len(tables) {
		t.Errorf("outcome %+v", out)
	}
	run := srv.Run(out.RunID)
	if run == nil || run.Status != argus.StatusFailed || !run.Finalized() || run.TestID == nil || *run.TestID != testID {
		t.Fatalf("run on the server %+v", run)
	}
	statuses := map[string]string{}
	for _, c := range run.Cells["mixed - grow - latencies"] {
		if c.Column == "P90 read" {
			statuses[c.Row] = c.Status
		}
	}
	if statuses["Cycle #1"] != "ERROR" || statuses["Cycle #2"] != "PASS" {
		t.Errorf("P90 read judged %v", statuses)
	}
	// The replay log: one line per POST, Argus's fields, no token.
	b, err := os.ReadFile(out.Replay)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(token)) {
		t.Error("the replay log contains the token")
	}
	var lines []argus.Request
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var r argus.Request
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, r)
	}
	// GETs are not logged (ArgusClient.get writes no replay line).
	if len(lines) != len(calls)-1 || lines[0].Endpoint != argus.RouteSubmit || lines[1].Endpoint != argus.RouteSubmitPackages ||
		lines[1].LocationParams["id"] != out.RunID || lines[1].LocationParams["type"] != "" ||
		lines[2].Endpoint != argus.RouteSubmitResults || lines[2].LocationParams["type"] != argus.RunType ||
		lines[2].TestType != argus.RunType || !lines[0].Success {
		t.Errorf("replay log %+v", lines)
	}
	var failedLines int
	for _, l := range lines {
		if !l.Success {
			failedLines++
			if !strings.Contains(l.Error, "DataValidationError") {
				t.Errorf("failed line without its error: %+v", l)
			}
		}
	}
	if failedLines != 1 {
		t.Errorf("%d unsuccessful lines, want the one that failed validation", failedLines)
	}
	// Submitting again maps to the same Argus run.
	c2 := &argus.Client{BaseURL: srv.URL, Token: token}
	out2, err := argus.Submit(context.Background(), c2, dir, argus.Options{})
	if err != nil || out2.RunID != out.RunID {
		t.Errorf("second submission: %v, run %s vs %s", err, out2.RunID, out.RunID)
	}
}

func TestDryRunSendsNothing(t *testing.T) {
	dir := renderedRun(t)
	srv := argustest.New(token)
	defer srv.Close()
	var printed bytes.Buffer
	c := &argus.Client{BaseURL: srv.URL, Token: token, DryRun: &printed}
	out, err := argus.Submit(context.Background(), c, dir, argus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("dry run sent %d requests", n)
	}
	p := printed.String()
	if strings.Count(p, "POST "+srv.URL+"/api/v1/client/testrun/scylla-cluster-tests/") != out.Tables+3 || !strings.Contains(p, "/finalize") ||
		!strings.Contains(p, "POST "+srv.URL+"/api/v1/client/sct/"+out.RunID+"/packages/submit") || !strings.Contains(p, "GET "+srv.URL) {
		t.Errorf("printed:\n%s", p)
	}
	if strings.Contains(p, token) {
		t.Error("the dry run printed the token")
	}
}

func TestArgusErrors(t *testing.T) {
	srv := argustest.New(token)
	defer srv.Close()
	ctx := context.Background()
	// A token of no user: Argus's APIException, answered with HTTP 200.
	c := &argus.Client{BaseURL: srv.URL, Token: "wrong", RunID: "5f3b0c62-1c1e-4d7a-9d7e-0a6b7d1f2c3e"}
	if err := c.SubmitRun(ctx, "j", "", "me", map[string]any{}); err == nil || !strings.Contains(err.Error(), "APIException: User not found for supplied token") {
		t.Errorf("wrong token: %v", err)
	}
	srv.RegisterTest("j")
	// Results of an unknown run: HTTP 200 with status error, DoesNotExist.
	c.Token = token
	err := c.SubmitResults(ctx, map[string]any{"meta": map[string]any{"name": "t"}, "results": []any{}})
	if err == nil || argus.IsValidation(err) || !strings.Contains(err.Error(), "DoesNotExist") {
		t.Errorf("unknown run: %v", err)
	}
	// PASS only when strictly better than the limit: a value equal to the
	// fixed_limit of a lower-is-better column fails validation.
	if err := c.SubmitRun(ctx, "j", "", "me", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if err := c.SubmitPackages(ctx, []argus.Package{{Name: "scylla-server", Version: "2025.1.0", Date: "20250325", RevisionID: "3eb8ef8c2ca4"}}); err != nil {
		t.Fatal(err)
	}
	table := func(v float64) reporting.ArgusTable {
		hib := false
		limit := 10.0
		return reporting.ArgusTable{Meta: reporting.ArgusMeta{Name: "t", ColumnsMeta: []reporting.ArgusColumn{{Name: "P99 read", Unit: "ms", Type: "FLOAT", HigherIsBetter: &hib, Visible: true}},
			RowsMeta: []string{"Cycle #0"}, ValidationRules: map[string]reporting.ArgusRule{"P99 read": {FixedLimit: &limit}}},
			Results: []reporting.ArgusCell{{Value: &v, Column: "P99 read", Row: "Cycle #0", Status: "UNSET"}}}
	}
	if err := c.SubmitResults(ctx, table(9.99)); err != nil {
		t.Errorf("9.99 under 10: %v", err)
	}
	if err := c.SubmitResults(ctx, table(10)); !argus.IsValidation(err) {
		t.Errorf("10 at the limit of 10: %v, want DataValidationError", err)
	}
	// Unreachable server.
	c.BaseURL = "http://127.0.0.1:1"
	if err := c.Finalize(ctx); err == nil || strings.Contains(err.Error(), token) {
		t.Errorf("unreachable: %v", err)
	}
}

// withNodeLog replaces the run's node logs with one whose lines are these.
func withNodeLog(t *testing.T, dir string, lines ...string) {
	t.Helper()
	logs := filepath.Join(dir, "logs")
	if err := os.RemoveAll(logs); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logs, "node-1.log"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// realStart is how ScyllaDB 2025.1.0 names itself as it starts (main.cc).
var realStart = []string{
	"Scylla version 2025.1.0-0.20250325.3eb8ef8c2ca4 with build-id 2c1b3a8f0e9d7c6b5a4f3e2d1c0b9a8f7e6d5c4b starting ...",
	"INFO  2026-03-02 23:42:00,000 [shard 0:main] init - Scylla version 2025.1.0-0.20250325.3eb8ef8c2ca4 initialization completed.",
}

// Main's client (before issue 39) sent the run and then the tables with
// sut_timestamp 0 and no package: Argus cannot date them and answers its
// ValueError (client_service.py submit_results → SCTTestRun.sut_timestamp).
// For a job that is no test, Argus fails even earlier: the table metadata
// is looked up under the run's null test_id and ScyllaDB refuses it.
func TestTodaysSubmissionFailsWithArgusValueError(t *testing.T) {
	dir := renderedRun(t)
	tables, err := reporting.ReadArgus(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := argustest.New(token)
	defer srv.Close()
	srv.RegisterTest("registered")
	ctx := context.Background()
	for job, want := range map[string]string{
		"registered":   "ValueError: scylla-server package not found in packages - cannot determine SUT timestamp",
		"unregistered": `InvalidRequest: Error from server: code=2200 [Invalid query] message="Invalid null value in condition for column test_id"`,
	} {
		c := &argus.Client{BaseURL: srv.URL, Token: token, RunID: uuid.NewString()}
		if err := c.SubmitRun(ctx, job, "", "me", map[string]any{"cluster_backend": "local"}); err != nil {
			t.Fatal(err)
		}
		if tables[0].SUTTimestamp != 0 {
			t.Fatalf("the rendered table has sut_timestamp %d", tables[0].SUTTimestamp)
		}
		err := c.SubmitResults(ctx, tables[0])
		var ae *argus.Error
		if !errors.As(err, &ae) || ae.Exception+": "+ae.Message != want || argus.IsValidation(err) {
			t.Errorf("%s: %v, want %s", job, err, want)
		}
		if cells := srv.Run(c.RunID).Cells; len(cells) != 0 {
			t.Errorf("%s: cells stored %v", job, cells)
		}
	}
}

// submitToFixtureJob submits the run in dir to a new Argus double with
// fixtureJob registered, which the test's end closes.
func submitToFixtureJob(t *testing.T, dir string) (*argustest.Server, *argus.Outcome) {
	t.Helper()
	srv := argustest.New(token)
	t.Cleanup(srv.Close)
	srv.RegisterTest(fixtureJob)
	c := &argus.Client{BaseURL: srv.URL, Token: token}
	out, err := argus.Submit(context.Background(), c, dir, argus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return srv, out
}

// The new submission, against a run of real ScyllaDB: the scylla-server
// package carries the version, date, revision and build id the database
// printed, and Argus dates every cell from it.
func TestSubmitDatesResultsFromTheReportedVersion(t *testing.T) {
	dir := renderedRun(t)
	withNodeLog(t, dir, realStart...)
	srv, out := submitToFixtureJob(t, dir)
	want := argustest.Package{Name: "scylla-server", Version: "2025.1.0", Date: "20250325", RevisionID: "3eb8ef8c2ca4",
		BuildID: "2c1b3a8f0e9d7c6b5a4f3e2d1c0b9a8f7e6d5c4b"}
	run := srv.Run(out.RunID)
	if len(run.Packages) != 1 || run.Packages[0] != want || !out.SUT.Dated || !strings.Contains(out.SUT.Source, "logs/node-1.log") {
		t.Fatalf("packages %+v, sut %+v", run.Packages, out.SUT)
	}
	for _, cl := range srv.Calls() {
		if strings.HasSuffix(cl.Path, "/submit_results") && cl.Body["sut_timestamp"] != 0.0 {
			t.Errorf("%v sent sut_timestamp %v, want 0 (Argus derives it)", cl.Body["meta"], cl.Body["sut_timestamp"])
		}
	}
	// SCTTestRun.sut_timestamp: 2025-03-25 UTC + int("3eb8ef8c2ca4", 16) % 1e6 µs.
	wantTS := time.Date(2025, 3, 25, 0, 0, 0, 845668000, time.UTC)
	var n int
	for _, cells := range run.Cells {
		for _, c := range cells {
			n++
			if d := c.SUTTimestamp.Sub(wantTS); d < -time.Microsecond || d > time.Microsecond {
				t.Fatalf("cell %s/%s dated %v, want %v", c.Column, c.Row, c.SUTTimestamp, wantTS)
			}
		}
	}
	if n == 0 || out.Tables == 0 || len(out.Failed) != 1 {
		t.Errorf("%d cells stored, outcome %+v", n, out)
	}
}

// The emulator reports a version without a build date or revision: the
// package names it, and the tables carry the run's start as sut_timestamp.
func TestSubmitEmulatedVersion(t *testing.T) {
	dir := renderedRun(t) // its node log: "Scylla version 2025.1.0 initialization completed."
	srv, out := submitToFixtureJob(t, dir)
	res, err := reporting.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	run := srv.Run(out.RunID)
	if len(run.Packages) != 1 || run.Packages[0].Version != "2025.1.0" || run.Packages[0].Date != "" || out.SUT.Dated {
		t.Fatalf("packages %+v, sut %+v", run.Packages, out.SUT)
	}
	for _, cells := range run.Cells {
		for _, c := range cells {
			if !c.SUTTimestamp.Equal(res.StartedAt.Truncate(time.Second)) {
				t.Fatalf("cell dated %v, want the run's start %v", c.SUTTimestamp, res.StartedAt)
			}
		}
	}
}

// A job that is no Argus test is called out before any table is sent;
// once registered, the same submission lands under the new test.
func TestUnregisteredJobIsCalledOut(t *testing.T) {
	dir := renderedRun(t)
	srv := argustest.New(token)
	defer srv.Close()
	c := &argus.Client{BaseURL: srv.URL, Token: token}
	out, err := argus.Submit(context.Background(), c, dir, argus.Options{JobName: "nightly/elasticity"})
	var ue *argus.UnregisteredError
	if !errors.As(err, &ue) || ue.Job != "nightly/elasticity" || !strings.Contains(err.Error(), `job "nightly/elasticity" is not a registered Argus test`) ||
		!strings.Contains(err.Error(), `Build System Id is "nightly/elasticity"`) || !strings.Contains(err.Error(), srv.URL+"/admin/api/v1/test/create") {
		t.Fatalf("unregistered job: %v", err)
	}
	for _, cl := range srv.Calls() {
		if strings.HasSuffix(cl.Path, "/submit_results") || strings.HasSuffix(cl.Path, "/finalize") {
			t.Errorf("sent %s for an unregistered job", cl.Path)
		}
	}
	if w := srv.Warnings(); len(w) != 1 || !strings.Contains(w[0], `"nightly/elasticity"`) {
		t.Errorf("server warnings %v", w)
	}
	testID := srv.RegisterTest("nightly/elasticity")
	c2 := &argus.Client{BaseURL: srv.URL, Token: token}
	out2, err := argus.Submit(context.Background(), c2, dir, argus.Options{JobName: "nightly/elasticity"})
	if err != nil || out2.RunID != out.RunID {
		t.Fatalf("after registering: %v (run %s, first %s)", err, out2.RunID, out.RunID)
	}
	if run := srv.Run(out.RunID); run.TestID == nil || *run.TestID != testID || !run.Finalized() || len(run.Packages) != 1 {
		t.Errorf("run after registering %+v", run)
	}
}
