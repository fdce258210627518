package argus_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
