package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// The REST API's routing and replies as Seastar's httpd gives them to
// ScyllaDB (seastar src/http/routes.cc, include/seastar/http/exception.hh,
// handlers.hh):
//   - a path no route matches, or a route of another method, answers 404
//     with the JSON body {"message": "Not found", "code": 404};
//   - a trailing '/' is dropped before matching (routes::normalize_url), so
//     /gossiper/endpoint/live and /gossiper/endpoint/live/ are one route;
//   - a mandatory query parameter that is missing or empty answers 400
//     "Missing mandatory parameter 'NAME'" (verify_mandatory_params);
//   - a handler's exception becomes {"message": ..., "code": ...} with the
//     exception's status (json_exception): bad_param_exception is 400, any
//     other exception 500 with the exception printed as Seastar prints an
//     exception_ptr ("std::runtime_error (...)");
//   - a void answer (json_void) has an empty body.

// restError is an error with the HTTP status Seastar's base_exception
// subclasses carry.
type restError struct {
	status int
	msg    string
}

func (e *restError) Error() string { return e.msg }

// badParam is httpd::bad_param_exception (400).
func badParam(format string, args ...any) error {
	return &restError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// runtimeError is a std::runtime_error escaping a handler: 500, printed as
// Seastar prints the exception.
func runtimeError(format string, args ...any) error {
	return &restError{http.StatusInternalServerError, "std::runtime_error (" + fmt.Sprintf(format, args...) + ")"}
}

// noSuchKeyspace and noSuchTable are data_dictionary's messages
// (data_dictionary/data_dictionary.cc), which the API handlers turn into
// bad_param_exception (api/storage_service.cc validate_keyspace,
// parse_table_infos).
func noSuchKeyspace(ks string) error { return badParam("Can't find a keyspace %s", ks) }
func noSuchTable(ks, cf string) error {
	return badParam("Can't find a column family %s in keyspace %s", cf, ks)
}

// voidReply marks a handler's answer as json_void: an empty body.
type voidReply struct{}

// restFunc is one route's handler: its answer is written as JSON.
type restFunc func(r *http.Request) (any, error)

// restRouter is the API's route table.
type restRouter struct{ mux *http.ServeMux }

func newRESTRouter() *restRouter { return &restRouter{mux: http.NewServeMux()} }

// handle registers pattern ("METHOD /path/{param}") with the query
// parameters the API doc marks as required.
func (rt *restRouter) handle(pattern string, f restFunc, mandatory ...string) {
	rt.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		for _, p := range mandatory {
			if r.URL.Query().Get(p) == "" {
				writeRESTError(w, badParam("Missing mandatory parameter '%s'", p))
				return
			}
		}
		v, err := f(r)
		if err != nil {
			writeRESTError(w, err)
			return
		}
		b, err := json.Marshal(v)
		if err != nil {
			writeRESTError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if _, void := v.(voidReply); !void {
			w.Write(b) // as Seastar writes JSON: no newline after it
		}
	})
}

// ServeHTTP routes as Seastar's routes::handle does.
func (rt *restRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") {
		r2 := *r
		u := *r.URL
		u.Path = strings.TrimSuffix(p, "/")
		u.RawPath = ""
		r2.URL = &u
		r = &r2
	}
	if _, pattern := rt.mux.Handler(r); pattern == "" {
		writeRESTError(w, &restError{http.StatusNotFound, "Not found"})
		return
	}
	rt.mux.ServeHTTP(w, r)
}

// writeRESTError writes err as Seastar's json_exception.
func writeRESTError(w http.ResponseWriter, err error) {
	var re *restError
	if !errors.As(err, &re) {
		re = &restError{http.StatusInternalServerError, err.Error()}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(re.status)
	json.NewEncoder(w).Encode(map[string]any{"message": re.msg, "code": re.status})
}
