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

func TestSubmitLifecycle(t *testing.T) {
	dir := renderedRun(t)
	srv := argustest.New(token)
	defer srv.Close()
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
	if len(calls) != len(tables)+3 {
		t.Fatalf("%d calls, want submit + %d tables + set_status + finalize", len(calls), len(tables))
	}
	base := "/api/v1/client/testrun/scylla-cluster-tests/"
	if calls[0].Path != base+"submit" || calls[len(calls)-2].Path != base+out.RunID+"/set_status" || calls[len(calls)-1].Path != base+out.RunID+"/finalize" {
		t.Errorf("lifecycle %s … %s, %s", calls[0].Path, calls[len(calls)-2].Path, calls[len(calls)-1].Path)
	}
	for i, cl := range calls {
		if cl.Authorization != "token "+token {
			t.Errorf("call %d: Authorization %q", i, cl.Authorization)
		}
		if cl.Body["schema_version"] != argus.SchemaVersion {
			t.Errorf("call %d: schema_version %v", i, cl.Body["schema_version"])
		}
		if i >= 1 && i <= len(tables) {
			if cl.Path != base+out.RunID+"/submit_results" || cl.Body["run_id"] != out.RunID {
				t.Errorf("call %d: %s run_id %v", i, cl.Path, cl.Body["run_id"])
			}
			if m, _ := cl.Body["meta"].(map[string]any); m["name"] != tables[i-1].Meta.Name {
				t.Errorf("call %d: table %v, want %s", i, m["name"], tables[i-1].Meta.Name)
			}
		}
	}
	// The fixture's Cycle #1 P90 read breaks read_p90_ms ≤ 5: Argus,
	// judging the UNSET cell by the fixed_limit, answers DataValidationError.
	if len(out.Failed) != 1 || out.Failed[0] != "mixed - grow - latencies" || out.Tables != len(tables) {
		t.Errorf("outcome %+v", out)
	}
	run := srv.Run(out.RunID)
	if run == nil || run.Status != argus.StatusFailed || !run.Finalized {
		t.Fatalf("run on the server %+v", run)
	}
	statuses := map[string]string{}
	for _, c := range run.Cells["mixed - grow - latencies"] {
		if c["column"] == "P90 read" {
			statuses[c["row"].(string)] = c["status"].(string)
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
	if len(lines) != len(calls) || lines[0].Endpoint != argus.RouteSubmit || lines[1].Endpoint != argus.RouteSubmitResults ||
		lines[1].LocationParams["id"] != out.RunID || lines[1].TestType != argus.RunType || !lines[0].Success {
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
	if strings.Count(p, "POST "+srv.URL+"/api/v1/client/testrun/scylla-cluster-tests/") != out.Tables+3 || !strings.Contains(p, "/finalize") {
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
	// Wrong token: HTTP 401.
	c := &argus.Client{BaseURL: srv.URL, Token: "wrong", RunID: "5f3b0c62-1c1e-4d7a-9d7e-0a6b7d1f2c3e"}
	if err := c.SubmitRun(ctx, "j", "", "me", map[string]any{}); err == nil || !strings.Contains(err.Error(), "HTTP 401") {
		t.Errorf("wrong token: %v", err)
	}
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
