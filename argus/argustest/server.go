// Package argustest is an httptest double of Argus's client API, built from
// the server's documented behaviour (scylladb/argus:
// argus/backend/controller/client_api.py, service/client_service.py,
// service/results_service.py, error_handlers.py): errors are answered with
// HTTP 200 and {"status": "error", "response": {"exception": ...}}, a
// submitted run must exist before its results, and UNSET cells are judged
// against the column's validation rule — PASS only when strictly better than
// every limit — with any ERROR cell answered as DataValidationError.
package argustest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
)

// Call is one request the double received.
type Call struct {
	Path          string
	Authorization string
	Body          map[string]any
}

// Server is the double.
type Server struct {
	*httptest.Server
	Token string

	mu     sync.Mutex
	calls  []Call
	runs   map[string]*Run
	tables map[string]bool // table names seen (metadata stored)
}

// Run is what the double knows of a run.
type Run struct {
	Status    string
	Finalized bool
	// Cells per table, with the status the server settled on.
	Cells map[string][]map[string]any
}

// New starts a double accepting token.
func New(token string) *Server {
	s := &Server{Token: token, runs: map[string]*Run{}, tables: map[string]bool{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// Calls returns the requests received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Run returns the run of that id (nil when unknown).
func (s *Server) Run(id string) *Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[id]
}

var (
	reSubmit   = regexp.MustCompile(`^/api/v1/client/testrun/([^/]+)/submit$`)
	reRunRoute = regexp.MustCompile(`^/api/v1/client/testrun/([^/]+)/([^/]+)/(submit_results|set_status|finalize)$`)
)

func reply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// apiError is handle_api_exception's answer: HTTP 200, status error.
func apiError(w http.ResponseWriter, exception, message string, args ...any) {
	if args == nil {
		args = []any{}
	}
	reply(w, http.StatusOK, map[string]any{"status": "error", "response": map[string]any{
		"trace_id": "test", "exception": exception, "message": message, "arguments": args}})
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if r.Method != http.MethodPost {
		reply(w, http.StatusMethodNotAllowed, map[string]any{"status": "error", "message": "Method Not Allowed"})
		return
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		apiError(w, "BadRequest", "body is not JSON")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, Call{Path: r.URL.Path, Authorization: r.Header.Get("Authorization"), Body: body})
	if r.Header.Get("Authorization") != "token "+s.Token {
		reply(w, http.StatusUnauthorized, map[string]any{"status": "error", "message": "Unauthorized"})
		return
	}
	if m := reSubmit.FindStringSubmatch(r.URL.Path); m != nil {
		if m[1] != "scylla-cluster-tests" {
			apiError(w, "ClientException", "Unsupported run type: "+m[1], m[1])
			return
		}
		// SCTTestRunSubmissionRequest(**request_data): every field is required.
		for _, k := range []string{"schema_version", "run_id", "job_name", "job_url", "started_by", "commit_id", "sct_config"} {
			if _, ok := body[k]; !ok {
				apiError(w, "TypeError", "missing required argument: '"+k+"'")
				return
			}
		}
		id, _ := body["run_id"].(string)
		if _, ok := s.runs[id]; !ok {
			s.runs[id] = &Run{Status: "created", Cells: map[string][]map[string]any{}}
		}
		reply(w, http.StatusOK, map[string]any{"status": "ok", "response": map[string]any{"id": id}})
		return
	}
	m := reRunRoute.FindStringSubmatch(r.URL.Path)
	if m == nil {
		reply(w, http.StatusNotFound, map[string]any{"status": "error", "message": "Not Found"})
		return
	}
	run := s.runs[m[2]]
	if run == nil {
		apiError(w, "DoesNotExist", "", m[2])
		return
	}
	switch m[3] {
	case "set_status":
		st, _ := body["new_status"].(string)
		switch st {
		case "created", "running", "failed", "test_error", "error", "passed", "aborted", "not_planned", "not_run":
		default:
			apiError(w, "ValueError", "'"+st+"' is not a valid TestStatus")
			return
		}
		run.Status = st
		reply(w, http.StatusOK, map[string]any{"status": "ok", "response": st})
	case "finalize":
		run.Finalized = true
		reply(w, http.StatusOK, map[string]any{"status": "ok", "response": "Finalized"})
	case "submit_results":
		s.submitResults(w, run, body)
	}
}

// submitResults applies results_service.Cell.update_cell_status_based_on_rules
// (fixed limits only: the double keeps no best results) and answers
// DataValidationError when a cell ends ERROR.
func (s *Server) submitResults(w http.ResponseWriter, run *Run, body map[string]any) {
	meta, _ := body["meta"].(map[string]any)
	name, _ := meta["name"].(string)
	if name == "" {
		apiError(w, "KeyError", "'name'")
		return
	}
	hib := map[string]any{}
	cols, _ := meta["columns_meta"].([]any)
	for _, c := range cols {
		cm, _ := c.(map[string]any)
		n, _ := cm["name"].(string)
		hib[n] = cm["higher_is_better"]
	}
	rules, _ := meta["validation_rules"].(map[string]any)
	cells, _ := body["results"].([]any)
	failed := false
	for _, c := range cells {
		cell, _ := c.(map[string]any)
		col, _ := cell["column"].(string)
		st, _ := cell["status"].(string)
		rule, _ := rules[col].(map[string]any)
		better, hasDir := hib[col].(bool)
		v, isNum := cell["value"].(float64)
		if st == "UNSET" && rule != nil && hasDir && isNum {
			var limits []float64
			if l, ok := rule["fixed_limit"].(float64); ok {
				limits = append(limits, l)
			}
			pass := true
			for _, l := range limits {
				if better && !(v > l) || !better && !(v < l) {
					pass = false
				}
			}
			st = "ERROR"
			if pass {
				st = "PASS"
			}
			cell["status"] = st
		}
		if st == "ERROR" {
			failed = true
		}
		run.Cells[name] = append(run.Cells[name], cell)
	}
	s.tables[name] = true
	if failed {
		apiError(w, "DataValidationError", "")
		return
	}
	reply(w, http.StatusOK, map[string]any{"status": "ok", "message": "Results submitted"})
}
