package argustest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

const tok = "t0k"

// call sends one request and decodes the answer.
func call(t *testing.T, s *Server, method, path string, body any, auth string) (int, map[string]any) {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, s.URL+"/api/v1/client"+path, rd)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func post(t *testing.T, s *Server, path string, body any) map[string]any {
	t.Helper()
	_, out := call(t, s, http.MethodPost, path, body, "token "+tok)
	return out
}

// exception is the answer's exception and message ("" when ok).
func exception(ans map[string]any) string {
	if ans["status"] == "ok" {
		return ""
	}
	r, _ := ans["response"].(map[string]any)
	return r["exception"].(string) + ": " + r["message"].(string)
}

func newRun(t *testing.T, s *Server, job string) string {
	t.Helper()
	id := uuid.NewString()
	ans := post(t, s, "/testrun/scylla-cluster-tests/submit", map[string]any{"schema_version": "v8", "run_id": id,
		"job_name": job, "job_url": "", "started_by": "me", "commit_id": "", "sct_config": nil})
	if ans["status"] != "ok" || ans["response"] != "Created" {
		t.Fatalf("submit: %v", ans)
	}
	return id
}

func pkgs(p ...map[string]any) map[string]any {
	list := make([]any, len(p))
	for i := range p {
		list[i] = p[i]
	}
	return map[string]any{"schema_version": "v8", "packages": list}
}

func table(name string, rule map[string]any, cells ...map[string]any) map[string]any {
	rules := map[string]any{}
	if rule != nil {
		rules["lat"] = rule
	}
	list := make([]any, len(cells))
	for i := range cells {
		list[i] = cells[i]
	}
	return map[string]any{"schema_version": "v8", "sut_timestamp": 0, "results": list, "meta": map[string]any{
		"name": name, "description": "", "sut_package_name": "", "rows_meta": []any{"r1"}, "validation_rules": rules,
		"columns_meta": []any{
			map[string]any{"name": "lat", "unit": "ms", "type": "FLOAT", "higher_is_better": false, "visible": true},
			map[string]any{"name": "note", "unit": "", "type": "TEXT", "higher_is_better": nil, "visible": true},
		}}}
}

func cell(v any) map[string]any {
	if s, ok := v.(string); ok {
		return map[string]any{"value_text": s, "column": "note", "row": "r1", "status": "UNSET"}
	}
	return map[string]any{"value": v, "column": "lat", "row": "r1", "status": "UNSET"}
}

var scylla = map[string]any{"name": "scylla-server", "version": "2025.1.0", "date": "20250325", "revision_id": "3eb8ef8c2ca4", "build_id": "b"}

// SCTTestRun.sut_timestamp: the package's date and revision; the
// -upgraded package first; a date or revision Python cannot parse is its ValueError.
func TestSUTTimestamp(t *testing.T) {
	s := New(tok)
	defer s.Close()
	s.RegisterTest("job")
	res := func(id string) map[string]any {
		return post(t, s, "/testrun/scylla-cluster-tests/"+id+"/submit_results", table("t", nil, cell(1.0)))
	}
	id := newRun(t, s, "job")
	if e := exception(res(id)); e != "ValueError: scylla-server package not found in packages - cannot determine SUT timestamp" {
		t.Errorf("no package: %s", e)
	}
	post(t, s, "/sct/"+id+"/packages/submit", pkgs(map[string]any{"name": "scylla-server", "date": "2025-03-25", "revision_id": "abc"}))
	if e := exception(res(id)); e != "ValueError: time data '2025-03-25' does not match format '%Y%m%d'" {
		t.Errorf("bad date: %s", e)
	}
	id = newRun(t, s, "job")
	post(t, s, "/sct/"+id+"/packages/submit", pkgs(map[string]any{"name": "scylla-server", "date": "20250325", "revision_id": "zz"}))
	if e := exception(res(id)); e != "ValueError: invalid literal for int() with base 16: 'zz'" {
		t.Errorf("bad revision: %s", e)
	}
	id = newRun(t, s, "job")
	upgraded := map[string]any{"name": "scylla-server-upgraded", "date": "20260101", "revision_id": "0f"}
	post(t, s, "/sct/"+id+"/packages/submit", pkgs(scylla, upgraded, scylla))
	if e := exception(res(id)); e != "" {
		t.Fatal(e)
	}
	run := s.Run(id)
	if len(run.Packages) != 2 { // equal packages are kept once
		t.Errorf("packages %+v", run.Packages)
	}
	if got, want := run.Cells["t"][0].SUTTimestamp, time.Date(2026, 1, 1, 0, 0, 0, 15000, time.UTC); !got.Equal(want) {
		t.Errorf("sut_timestamp %v, want %v (the -upgraded package)", got, want)
	}
	// A client's own sut_timestamp is kept.
	id = newRun(t, s, "job")
	tb := table("t", nil, cell(1.0))
	tb["sut_timestamp"] = 1700000000
	if e := exception(post(t, s, "/testrun/scylla-cluster-tests/"+id+"/submit_results", tb)); e != "" || !s.Run(id).Cells["t"][0].SUTTimestamp.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("client sut_timestamp: %s %v", e, s.Run(id).Cells["t"])
	}
}

// The cells as Cell(**cell) and update_best_results take them.
func TestCellShapes(t *testing.T) {
	s := New(tok)
	defer s.Close()
	s.RegisterTest("job")
	id := newRun(t, s, "job")
	post(t, s, "/sct/"+id+"/packages/submit", pkgs(scylla))
	path := "/testrun/scylla-cluster-tests/" + id + "/submit_results"
	extra := cell(1.0)
	extra["unit"] = "ms"
	noStatus := cell(1.0)
	delete(noStatus, "status")
	unknown := cell(1.0)
	unknown["column"] = "P99"
	textInLat := cell("x")
	textInLat["column"] = "lat"
	noName := table("t", nil)
	delete(noName["meta"].(map[string]any), "name")
	for name, c := range map[string]struct {
		body map[string]any
		want string
	}{
		"extra key":      {table("t", nil, extra), "TypeError: Cell.__init__() got an unexpected keyword argument 'unit'"},
		"no status":      {table("t", nil, noStatus), "TypeError: Cell.__init__() missing 1 required positional argument: 'status'"},
		"unknown column": {table("t", nil, unknown), "KeyError: 'P99'"},
		"no name":        {noName, "KeyError: 'name'"},
		"text with rule": {table("t", map[string]any{"fixed_limit": 5.0}, textInLat), "TypeError: '<' not supported between instances of 'NoneType' and 'float'"},
	} {
		if e := exception(post(t, s, path, c.body)); e != c.want {
			t.Errorf("%s: %q, want %q", name, e, c.want)
		}
	}
}

// Cell.update_cell_status_based_on_rules with the best results and the
// table's latest rules (update_validation_rules).
func TestValidationRules(t *testing.T) {
	s := New(tok)
	defer s.Close()
	s.RegisterTest("job")
	submit := func(rule map[string]any, v float64) (string, string) {
		id := newRun(t, s, "job")
		post(t, s, "/sct/"+id+"/packages/submit", pkgs(scylla))
		e := exception(post(t, s, "/testrun/scylla-cluster-tests/"+id+"/submit_results", table("t", rule, cell(v))))
		return e, s.Run(id).Cells["t"][0].Status
	}
	pct := map[string]any{"best_pct": 10.0, "best_abs": nil, "fixed_limit": nil}
	// The first result is its own best: within 10 % of itself.
	if e, st := submit(pct, 10); e != "" || st != "PASS" {
		t.Errorf("first: %s %s", e, st)
	}
	if e, st := submit(pct, 10.9); e != "" || st != "PASS" {
		t.Errorf("10.9 vs best 10 +10 %%: %s %s", e, st)
	}
	if e, st := submit(pct, 11); e != "DataValidationError: " || st != "ERROR" {
		t.Errorf("11 vs best 10 +10 %% (not strictly better than 11): %s %s", e, st)
	}
	if e, st := submit(pct, 5); e != "" || st != "PASS" { // a new best
		t.Errorf("5: %s %s", e, st)
	}
	if e, st := submit(pct, 6); e != "DataValidationError: " || st != "ERROR" {
		t.Errorf("6 vs best 5 +10 %%: %s %s", e, st)
	}
	// A rule no longer sent: an all-unset rule is appended; nothing to judge.
	if e, st := submit(nil, 100); e != "" || st != "PASS" {
		t.Errorf("rule dropped: %s %s", e, st)
	}
	rules := s.metas[tableKey{s.tests["job"].ID, "t"}].Rules["lat"]
	if len(rules) != 2 || rules[1].BestPct != nil {
		t.Errorf("rules %+v", rules)
	}
	// A cell sent as ERROR stays ERROR and fails the table.
	id := newRun(t, s, "job")
	post(t, s, "/sct/"+id+"/packages/submit", pkgs(scylla))
	c := cell(1.0)
	c["status"] = "ERROR"
	if e := exception(post(t, s, "/testrun/scylla-cluster-tests/"+id+"/submit_results", table("t", nil, c))); e != "DataValidationError: " {
		t.Errorf("ERROR cell: %s", e)
	}
	// Rows are only ever added to a table's metadata.
	tb := table("t", nil, cell(1.0))
	tb["meta"].(map[string]any)["rows_meta"] = []any{"r2"}
	post(t, s, "/testrun/scylla-cluster-tests/"+id+"/submit_results", tb)
	if rows := s.metas[tableKey{s.tests["job"].ID, "t"}].Rows; strings.Join(rows, ",") != "r1,r2" {
		t.Errorf("rows %v", rows)
	}
}

// Routes, envelopes, authorization and the run model.
func TestRoutesAndRuns(t *testing.T) {
	s := New(tok)
	defer s.Close()
	if code, ans := call(t, s, http.MethodPost, "/testrun/scylla-cluster-tests/submit", map[string]any{}, ""); code != http.StatusForbidden || ans["message"] != "Authorization required" {
		t.Errorf("no token: %d %v", code, ans)
	}
	if code, ans := call(t, s, http.MethodPost, "/testrun/scylla-cluster-tests/submit", map[string]any{}, "token nope"); code != 200 || exception(ans) != "APIException: User not found for supplied token" {
		t.Errorf("unknown token: %d %v", code, ans)
	}
	if code, _ := call(t, s, http.MethodGet, "/testrun/scylla-cluster-tests/x/finalize", nil, "token "+tok); code != http.StatusMethodNotAllowed {
		t.Errorf("GET finalize: %d", code)
	}
	if code, _ := call(t, s, http.MethodPost, "/testrun/scylla-cluster-tests/x/fetch", map[string]any{}, "token "+tok); code != http.StatusNotFound {
		t.Errorf("unknown route: %d", code)
	}
	if e := exception(post(t, s, "/testrun/generic-x/submit", map[string]any{})); e != "ClientException: Unsupported run type: generic-x" {
		t.Errorf("run type: %s", e)
	}
	if e := exception(post(t, s, "/testrun/scylla-cluster-tests/submit", map[string]any{"schema_version": "v8", "run_id": uuid.NewString()})); e != "TypeError: SCTTestRunSubmissionRequest.__init__() missing 1 required positional argument: 'job_name'" {
		t.Errorf("missing field: %s", e)
	}
	missing := uuid.NewString()
	ans := post(t, s, "/testrun/scylla-cluster-tests/"+missing+"/submit_results", table("t", nil))
	if r := ans["response"].(map[string]any); ans["status"] != "error" || r["exception"] != "DoesNotExist" || r["arguments"].([]any)[0] != missing {
		t.Errorf("results of an unknown run: %v", ans)
	}
	if e := exception(post(t, s, "/testrun/scylla-cluster-tests/"+missing+"/set_status", map[string]any{"new_status": "passed"})); !strings.HasPrefix(e, "DocumentNotFound") {
		t.Errorf("status of an unknown run: %s", e)
	}
	if e := exception(post(t, s, "/sct/"+missing+"/packages/submit", pkgs(scylla))); e != "SCTServiceException: ('Run not found', '"+missing+"')" {
		t.Errorf("packages of an unknown run: %s", e)
	}
	_, ans = call(t, s, http.MethodGet, "/testrun/scylla-cluster-tests/"+missing+"/get", nil, "token "+tok)
	if ans["status"] != "ok" || ans["response"] != nil {
		t.Errorf("get of an unknown run: %v", ans)
	}

	// A run of a job without a test has none, and /get says so.
	id := newRun(t, s, "nightly")
	_, ans = call(t, s, http.MethodGet, "/testrun/scylla-cluster-tests/"+id+"/get", nil, "token "+tok)
	if r := ans["response"].(map[string]any); r["build_id"] != "nightly" || r["test_id"] != nil || r["status"] != "created" {
		t.Errorf("get: %v", ans)
	}
	if e := exception(post(t, s, "/testrun/scylla-cluster-tests/"+id+"/set_status", map[string]any{"new_status": "done"})); e != "ValueError: 'done' is not a valid TestStatus" {
		t.Errorf("bad status: %s", e)
	}
	// Registering the job moves its runs under the test (move_test_runs).
	testID := s.RegisterTest("nightly")
	_, ans = call(t, s, http.MethodGet, "/testrun/scylla-cluster-tests/"+id+"/get", nil, "token "+tok)
	if r := ans["response"].(map[string]any); r["test_id"] != testID {
		t.Errorf("after registering: %v", ans)
	}
	// A target package names the run's version (process_target_version).
	post(t, s, "/sct/"+id+"/packages/submit", pkgs(map[string]any{"name": "scylla-server-target", "version": "2026.1.0"}))
	if r := s.Run(id); r.ScyllaVersion == nil || *r.ScyllaVersion != "2026.1.0" {
		t.Errorf("target version %+v", r)
	}
	if ans := post(t, s, "/testrun/scylla-cluster-tests/"+id+"/finalize", map[string]any{}); ans["response"] != "Finalized" || !s.Run(id).Finalized() {
		t.Errorf("finalize %v", ans)
	}
}
