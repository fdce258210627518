// Package argus submits a run's results to an Argus server the way Argus's
// own SCT client does (scylladb/argus argus/client/base.py ArgusClient,
// argus/client/sct/client.py ArgusSCTClient): submit the run under a
// client-chosen run id, submit_results once per table, set_status from the
// verdict, finalize. Every POST is also recorded in Argus's replay-log JSONL
// (argus/client/replay_log.py) so a run can be ingested later.
package argus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// RunType is the run type (test plugin) of SCT runs in Argus.
const RunType = "scylla-cluster-tests"

// SchemaVersion is the schema_version ArgusSCTClient sends with every body.
const SchemaVersion = "v8"

// Routes of Argus's client API (ArgusClient.Routes, and
// ArgusSCTClient.Routes for the SCT plugin's), under /api/v1/client.
const (
	RouteSubmit         = "/testrun/$type/submit"
	RouteGet            = "/testrun/$type/$id/get"
	RouteSetStatus      = "/testrun/$type/$id/set_status"
	RouteSubmitResults  = "/testrun/$type/$id/submit_results"
	RouteFinalize       = "/testrun/$type/$id/finalize"
	RouteSubmitPackages = "/sct/$id/packages/submit"
)

// Test statuses (argus/common/enums.py TestStatus).
const (
	StatusPassed = "passed"
	StatusFailed = "failed"
	StatusError  = "error"
	StatusAbort  = "aborted"
)

// Error is an answer Argus gave with "status": "error" (it answers errors
// with HTTP 200) or an unexpected HTTP status.
type Error struct {
	Method, Path string
	HTTPStatus   int
	Exception    string // e.g. "DataValidationError"
	Message      string
}

func (e *Error) Error() string {
	what := e.Exception
	if e.Message != "" && e.Message != e.Exception {
		what = strings.TrimSpace(what + ": " + e.Message)
	}
	if e.HTTPStatus != http.StatusOK {
		return fmt.Sprintf("argus: %s %s: HTTP %d %s", e.Method, e.Path, e.HTTPStatus, what)
	}
	return fmt.Sprintf("argus: %s %s: %s", e.Method, e.Path, what)
}

// IsValidation reports whether err is Argus's DataValidationError: the
// results were stored but a cell failed its validation rule.
func IsValidation(err error) bool {
	var ae *Error
	return errors.As(err, &ae) && ae.Exception == "DataValidationError"
}

// Client talks to one Argus server about one run.
type Client struct {
	BaseURL string // e.g. https://argus.scylladb.com
	Token   string // sent as "Authorization: token <Token>"; never logged
	RunID   string // client-chosen run id (a UUID)
	HTTP    *http.Client
	// DryRun prints every request here instead of sending it (the token is not printed).
	DryRun io.Writer
	// Replay receives one JSONL line per POST, as Argus's ReplayLog writes them.
	Replay io.Writer
	Now    func() time.Time

	mu sync.Mutex
}

// Request is one replay-log line (argus/client/replay_log.py ReplayLog.write).
type Request struct {
	Method         string            `json:"method"`
	Endpoint       string            `json:"endpoint"`
	LocationParams map[string]string `json:"location_params"`
	Params         map[string]string `json:"params"`
	Body           map[string]any    `json:"body"`
	TestType       string            `json:"test_type"`
	TS             int64             `json:"ts"`
	Success        bool              `json:"success"`
	Error          string            `json:"error,omitempty"`
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// SubmitRun creates the run (submit_sct_run's body; the server requires
// every one of these keys).
func (c *Client) SubmitRun(ctx context.Context, jobName, jobURL, startedBy string, config map[string]any) error {
	return c.post(ctx, RouteSubmit, map[string]any{
		"run_id": c.RunID, "job_name": jobName, "job_url": jobURL, "started_by": startedBy,
		"commit_id": "", "origin_url": nil, "branch_name": nil, "sct_config": config,
	})
}

// SubmitResults sends one table (GenericResultTable.as_dict, any value
// that marshals to it). A DataValidationError answer is returned as an
// *Error for which IsValidation is true.
func (c *Client) SubmitResults(ctx context.Context, table any) error {
	b, err := json.Marshal(table)
	if err != nil {
		return fmt.Errorf("argus: encoding a results table: %w", err)
	}
	body := map[string]any{}
	if err := json.Unmarshal(b, &body); err != nil {
		return fmt.Errorf("argus: encoding a results table: %w", err)
	}
	body["run_id"] = c.RunID
	return c.post(ctx, RouteSubmitResults, body)
}

// Package is a package the run tested (argus/client/sct/types.py Package):
// SCT submits scylla-server's version, build date (YYYYMMDD), revision id
// and build id, from which Argus dates the run's results.
type Package struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	Date       string `json:"date"`
	RevisionID string `json:"revision_id"`
	BuildID    string `json:"build_id"`
}

// SubmitPackages sends the run's packages (ArgusSCTClient.submit_packages).
func (c *Client) SubmitPackages(ctx context.Context, pkgs []Package) error {
	list := make([]any, len(pkgs))
	for i, p := range pkgs {
		list[i] = p
	}
	return c.post(ctx, RouteSubmitPackages, map[string]any{"packages": list})
}

// RunInfo is what the client reads back of a run (the fields of the
// SCTTestRun document that /get answers with that it needs).
type RunInfo struct {
	ID       string    `json:"id"`
	BuildID  string    `json:"build_id"` // the job name
	TestID   *string   `json:"test_id"`  // null: no Argus test has the job name as its build_system_id
	Status   string    `json:"status"`
	Packages []Package `json:"packages"`
}

// GetRun reads the run back (ArgusClient.get_run). It returns nil, nil in
// a dry run and when Argus knows no such run.
func (c *Client) GetRun(ctx context.Context) (*RunInfo, error) {
	url := c.url(RouteGet)
	if c.DryRun != nil {
		fmt.Fprintf(c.DryRun, "GET %s\n  Authorization: token <ARGUS_TOKEN>\n", url)
		return nil, nil
	}
	raw, err := c.send(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var run RunInfo
	if err := json.Unmarshal(raw, &run); err != nil {
		return nil, fmt.Errorf("argus: reading run %s back: %w", c.RunID, err)
	}
	return &run, nil
}

// SetStatus sets the run's status (passed, failed, error ...).
func (c *Client) SetStatus(ctx context.Context, status string) error {
	return c.post(ctx, RouteSetStatus, map[string]any{"new_status": status})
}

// Finalize ends the run.
func (c *Client) Finalize(ctx context.Context) error {
	return c.post(ctx, RouteFinalize, map[string]any{})
}

func (c *Client) url(endpoint string) string {
	p := strings.NewReplacer("$type", RunType, "$id", c.RunID).Replace(endpoint)
	return strings.TrimRight(c.BaseURL, "/") + "/api/v1/client" + p
}

// post sends one request and checks Argus's envelope, as check_response does.
func (c *Client) post(ctx context.Context, endpoint string, body map[string]any) error {
	body["schema_version"] = SchemaVersion
	loc := map[string]string{}
	if strings.Contains(endpoint, "$type") {
		loc["type"] = RunType
	}
	if strings.Contains(endpoint, "$id") {
		loc["id"] = c.RunID
	}
	rec := Request{Method: http.MethodPost, Endpoint: endpoint, LocationParams: loc, Body: body, TestType: RunType, TS: c.now().UnixMilli()}
	payload, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("argus: encoding %s: %w", endpoint, err)
	}
	url := c.url(endpoint)
	if c.DryRun != nil {
		rec.Error = "dry run: not sent"
		c.record(rec)
		var pretty bytes.Buffer
		_ = json.Indent(&pretty, payload, "  ", "  ")
		fmt.Fprintf(c.DryRun, "POST %s\n  Authorization: token <ARGUS_TOKEN>\n  %s\n", url, pretty.String())
		return nil
	}
	_, err = c.send(ctx, http.MethodPost, url, payload)
	rec.Success = err == nil
	if err != nil {
		rec.Error = err.Error()
	}
	c.record(rec)
	return err
}

// send makes one request and checks Argus's envelope (check_response): an
// answer other than HTTP 200 with "status": "ok" is an *Error. It returns
// the envelope's "response".
func (c *Client) send(ctx context.Context, method, url string, payload []byte) (json.RawMessage, error) {
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, fmt.Errorf("argus: %w", err)
	}
	req.Header.Set("Authorization", "token "+c.Token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("argus: %s %s: %w", method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("argus: %s %s: reading the answer: %w", method, req.URL.Path, err)
	}
	ae := &Error{Method: method, Path: req.URL.Path, HTTPStatus: resp.StatusCode}
	var env struct {
		Status   string          `json:"status"`
		Message  string          `json:"message"`
		Response json.RawMessage `json:"response"`
	}
	if jerr := json.Unmarshal(b, &env); jerr != nil {
		ae.Message = "not a JSON answer: " + snippet(b)
		return nil, ae
	}
	if resp.StatusCode != http.StatusOK {
		ae.Message = snippet(b)
		return nil, ae
	}
	if env.Status == "ok" {
		return env.Response, nil
	}
	var detail struct {
		Exception string `json:"exception"`
		Message   string `json:"message"`
		Arguments []any  `json:"arguments"`
	}
	if json.Unmarshal(env.Response, &detail) == nil && detail.Exception != "" {
		ae.Exception, ae.Message = detail.Exception, detail.Message
		if ae.Message == "" && len(detail.Arguments) > 0 {
			ae.Message = fmt.Sprint(detail.Arguments[0])
		}
		return nil, ae
	}
	ae.Exception = "status " + fmt.Sprintf("%q", env.Status)
	ae.Message = snippet(b)
	return nil, ae
}

func (c *Client) record(r Request) {
	if c.Replay == nil {
		return
	}
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _ = c.Replay.Write(append(b, '\n'))
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
