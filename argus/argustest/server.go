// Package argustest is an httptest double of the Argus server's client API
// for SCT runs, rebuilt from the server's code (scylladb/argus):
//
//   - routes and answers: argus/backend/controller/client_api.py (under
//     /api/v1/client, controller/api.py) and the SCT plugin's
//     plugins/sct/controller.py (/sct/<run id>/packages/submit); every
//     route answers {"status": "ok", "response": ...} except submit_results,
//     which answers {"status": "ok", "message": "Results submitted"};
//   - errors: error_handlers.py handle_api_exception answers any exception
//     with HTTP 200 and {"status": "error", "response": {"trace_id",
//     "exception", "message", "arguments"}}; an API token that matches no
//     user is service/user.py load_logged_in_user's APIException, no token
//     login_required's HTTP 403;
//   - the run: plugins/sct/testrun.py SCTTestRun.submit_run/init_sct_run
//     (build_id is the job name; an existing run id is kept as it is),
//     plugins/core.py PluginModelBase.assign_categories (test_id only when a
//     test's build_system_id is the job name; otherwise a warning and none),
//     plugins/sct/service.py SCTService.submit_packages (packages appended
//     unless equal to one the run has);
//   - results: service/client_service.py ClientService.submit_results, with
//     SCTTestRun.sut_timestamp and service/results_service.py
//     (update_best_results, Cell.update_cell_status_based_on_rules) and
//     models/result.py (table metadata and its validation rules).
package argustest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// PluginSCT is the SCT plugin's run type (plugins/sct/testrun.py _plugin_name).
const PluginSCT = "scylla-cluster-tests"

// Call is one request the double received.
type Call struct {
	Method        string
	Path          string
	Authorization string
	Body          map[string]any
}

// Server is the double.
type Server struct {
	*httptest.Server
	Token string

	mu       sync.Mutex
	calls    []Call
	runs     map[string]*Run
	tests    map[string]*Test // by build_system_id
	metas    map[tableKey]*TableMeta
	bests    map[bestKey]best
	warnings []string
}

// New starts a double accepting token (the API token of its one user).
func New(token string) *Server {
	s := &Server{Token: token, runs: map[string]*Run{}, tests: map[string]*Test{},
		metas: map[tableKey]*TableMeta{}, bests: map[bestKey]best{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// RegisterTest registers a test whose build_system_id is jobName, as
// Argus's admin does (service/release_manager.py create_test), and moves
// the job's existing runs under it (move_test_runs). It returns the test id.
func (s *Server) RegisterTest(jobName string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &Test{ID: uuid.NewString(), GroupID: uuid.NewString(), ReleaseID: uuid.NewString(), BuildSystemID: jobName, PluginName: PluginSCT}
	s.tests[jobName] = t
	for _, r := range s.runs {
		if r.BuildID == jobName {
			r.assign(t)
		}
	}
	return t.ID
}

// Calls returns the requests received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Run returns a copy of the run of that id (nil when unknown).
func (s *Server) Run(id string) *Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[id]
	if r == nil {
		return nil
	}
	c := *r
	c.Packages = append([]Package(nil), r.Packages...)
	c.Cells = map[string][]Cell{}
	for k, v := range r.Cells {
		c.Cells[k] = append([]Cell(nil), v...)
	}
	return &c
}

// Warnings returns what the server logged as warnings (assign_categories'
// "Test entity missing for key ...").
func (s *Server) Warnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.warnings...)
}

func (r *Run) assign(t *Test) {
	r.TestID, r.GroupID, r.ReleaseID = &t.ID, &t.GroupID, &t.ReleaseID
}

var (
	reSubmit   = regexp.MustCompile(`^/api/v1/client/testrun/([^/]+)/submit$`)
	reRunRoute = regexp.MustCompile(`^/api/v1/client/testrun/([^/]+)/([^/]+)/(get|set_status|finalize|submit_results)$`)
	rePackages = regexp.MustCompile(`^/api/v1/client/sct/([^/]+)/packages/submit$`)
)

// routeMethod is the method each client_api.py route accepts.
var routeMethod = map[string]string{"submit": http.MethodPost, "get": http.MethodGet, "set_status": http.MethodPost,
	"finalize": http.MethodPost, "submit_results": http.MethodPost, "packages": http.MethodPost}

func reply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// apiError is handle_api_exception's answer: HTTP 200, status error.
func apiError(w http.ResponseWriter, e *pyError) {
	args := e.Args
	if args == nil {
		args = []any{}
	}
	reply(w, http.StatusOK, map[string]any{"status": "error", "response": map[string]any{
		"trace_id": "argustest", "exception": e.Exception, "message": e.Message, "arguments": args}})
}

// route names the request's route and its run type and run id.
func route(path string) (name, runType, runID string) {
	if m := reSubmit.FindStringSubmatch(path); m != nil {
		return "submit", m[1], ""
	}
	if m := reRunRoute.FindStringSubmatch(path); m != nil {
		return m[3], m[1], m[2]
	}
	if m := rePackages.FindStringSubmatch(path); m != nil {
		return "packages", PluginSCT, m[1]
	}
	return "", "", ""
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	name, runType, runID := route(r.URL.Path)
	if name == "" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<!doctype html>\n<title>404 Not Found</title>\n<h1>Not Found</h1>\n")
		return
	}
	if r.Method != routeMethod[name] {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusMethodNotAllowed)
		fmt.Fprint(w, "<!doctype html>\n<title>405 Method Not Allowed</title>\n<h1>Method Not Allowed</h1>\n")
		return
	}
	var body map[string]any
	if r.Method == http.MethodPost {
		// get_payload: a body that is not JSON is an exception.
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			s.record(r, nil)
			apiError(w, raise("Exception", "Payload is not json"))
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, Call{Method: r.Method, Path: r.URL.Path, Authorization: r.Header.Get("Authorization"), Body: body})
	if perr, code := s.authorize(r.Header.Get("Authorization")); code != 0 {
		if perr != nil {
			apiError(w, perr)
			return
		}
		reply(w, code, map[string]any{"status": "error", "message": "Authorization required"})
		return
	}
	if runType != PluginSCT {
		apiError(w, raise("ClientException", "Unsupported run type: "+runType, "Unsupported run type: "+runType, runType))
		return
	}
	answer, perr := s.dispatch(name, runID, body)
	if perr != nil {
		apiError(w, perr)
		return
	}
	reply(w, http.StatusOK, answer)
}

func (s *Server) record(r *http.Request, body map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, Call{Method: r.Method, Path: r.URL.Path, Authorization: r.Header.Get("Authorization"), Body: body})
}

// authorize is load_logged_in_user and login_required
// (service/user.py): "token <t>" must name a user; no header is HTTP 403.
func (s *Server) authorize(header string) (*pyError, int) {
	if header == "" {
		return nil, http.StatusForbidden
	}
	var schema, token string
	if n, _ := fmt.Sscan(header, &schema, &token); n < 2 {
		return raise("APIException", "Malformed authorization header"), http.StatusOK
	}
	if schema == "token" && token != s.Token {
		return raise("APIException", "User not found for supplied token"), http.StatusOK
	}
	if schema != "token" {
		return nil, http.StatusForbidden
	}
	return nil, 0
}

func ok(response any) map[string]any { return map[string]any{"status": "ok", "response": response} }

func (s *Server) dispatch(name, runID string, body map[string]any) (map[string]any, *pyError) {
	switch name {
	case "submit":
		return s.submitRun(body)
	case "submit_results":
		return s.submitResults(runID, body)
	case "packages":
		return s.submitPackages(runID, body)
	}
	run := s.runs[runID]
	if name == "get" {
		// ClientService.get_run: an unknown run is a null response.
		if run == nil {
			return ok(nil), nil
		}
		return ok(run), nil
	}
	if run == nil {
		// load_test_run: coodie's DocumentNotFound.
		return nil, raise("DocumentNotFound", "SCTTestRun matching query does not exist")
	}
	switch name {
	case "set_status":
		st, _ := body["new_status"].(string)
		if _, has := body["new_status"]; !has {
			return nil, raise("KeyError", "'new_status'", "new_status")
		}
		if !testStatuses[st] {
			return nil, raise("ValueError", fmt.Sprintf("'%s' is not a valid TestStatus", st))
		}
		run.Status = st
		return ok(st), nil
	default: // finalize: finish_run sets the end time.
		run.EndTime = time.Now().UTC()
		return ok("Finalized"), nil
	}
}

// submitRun is SCTTestRun.submit_run: an existing run id keeps its run;
// a new one is created under the job name and assigned its test.
func (s *Server) submitRun(body map[string]any) (map[string]any, *pyError) {
	if perr := checkSubmission(body); perr != nil {
		return nil, perr
	}
	id := uuid.MustParse(fmt.Sprint(body["run_id"])).String()
	if s.runs[id] == nil {
		run := &Run{ID: id, Status: "created", Packages: []Package{}, EndTime: time.Unix(0, 0).UTC(), Cells: map[string][]Cell{}}
		run.BuildID, _ = body["job_name"].(string)
		run.StartedBy, _ = body["started_by"].(string)
		run.BuildJobURL, _ = body["job_url"].(string)
		run.ScmRevisionID, _ = body["commit_id"].(string)
		if t := s.tests[run.BuildID]; t != nil {
			run.assign(t)
		} else {
			s.warnings = append(s.warnings, fmt.Sprintf("Test entity missing for key %q, run won't be visible until this is corrected", run.BuildID))
		}
		s.runs[id] = run
	}
	if cfg, ok := body["sct_config"].(map[string]any); ok {
		if m, ok := cfg["test_method"].(string); ok {
			s.runs[id].TestMethod = &m
		}
	}
	return ok("Created"), nil
}

// submitPackages is SCTService.submit_packages: each package is appended
// unless the run has an equal one; a "target" package sets the run's
// version (process_target_version).
func (s *Server) submitPackages(runID string, body map[string]any) (map[string]any, *pyError) {
	list, has := body["packages"]
	if !has {
		return nil, raise("KeyError", "'packages'", "packages")
	}
	run := s.runs[runID]
	if run == nil {
		return nil, raise("SCTServiceException", "('Run not found', '"+runID+"')", "Run not found", runID)
	}
	items, _ := list.([]any)
	for _, item := range items {
		m, isMap := item.(map[string]any)
		if !isMap {
			return nil, raise("TypeError", "argus.backend.plugins.sct.udt.PackageVersion() argument after ** must be a mapping")
		}
		var p Package
		for field, dst := range map[string]*string{"name": &p.Name, "version": &p.Version, "date": &p.Date, "revision_id": &p.RevisionID, "build_id": &p.BuildID} {
			switch v := m[field].(type) {
			case nil:
			case string:
				*dst = v
			default:
				return nil, raise("ValidationError", fmt.Sprintf("1 validation error for PackageVersion\n%s\n  Input should be a valid string", field))
			}
		}
		if strings.Contains(p.Name, "target") && !(run.VersionSource != nil && strings.Contains(*run.VersionSource, "upgrade-target") && p.Name == "scylla-server-target") {
			name, version := p.Name, p.Version
			run.VersionSource, run.ScyllaVersion = &name, &version
		}
		if !hasPackage(run.Packages, p) {
			run.Packages = append(run.Packages, p)
		}
	}
	return ok("added"), nil
}

func hasPackage(list []Package, p Package) bool {
	for _, q := range list {
		if q == p {
			return true
		}
	}
	return false
}
