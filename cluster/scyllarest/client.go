// Package scyllarest is a client for the ScyllaDB REST admin API (port 10000).
// It speaks the paths and JSON shapes of real ScyllaDB, so it works unchanged
// against a real node and against the emulator.
package scyllarest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Defaults of a new Client.
const (
	DefaultTimeout  = 15 * time.Second
	DefaultAttempts = 4
	DefaultBackoff  = 250 * time.Millisecond
)

// Client talks to one node's REST API. It is safe for concurrent use.
type Client struct {
	// Base is the API root, e.g. http://127.0.0.2:10000.
	Base string
	// Timeout bounds one short call (queries and quick changes). Long
	// operations (Decommission, RemoveNode, QuiesceTopology) are bounded only
	// by their context, because ScyllaDB answers them when the work is done.
	Timeout time.Duration
	// Attempts is how often a call is tried when the connection fails; 4xx/5xx
	// answers are never retried.
	Attempts int
	// Backoff is the pause before the first retry; it doubles every retry.
	Backoff time.Duration
	HTTP    *http.Client
}

// New returns a client for host:port.
func New(host string, port int) *Client {
	return NewURL("http://" + net.JoinHostPort(host, strconv.Itoa(port)))
}

// NewURL returns a client for an API root such as an httptest server URL.
func NewURL(base string) *Client {
	return &Client{
		Base:     strings.TrimRight(base, "/"),
		Timeout:  DefaultTimeout,
		Attempts: DefaultAttempts,
		Backoff:  DefaultBackoff,
		HTTP:     &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second}},
	}
}

// HTTPError is a non-2xx answer.
type HTTPError struct {
	Method string
	Path   string
	Status int
	Body   string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.Path, e.Status, strings.TrimSpace(e.Body))
}

// KeyValue is ScyllaDB's map encoding: [{"key": ..., "value": ...}].
type KeyValue[V any] struct {
	Key   string `json:"key"`
	Value V      `json:"value"`
}

// HostIDs maps node address to host id (GET /storage_service/host_id).
func (c *Client) HostIDs(ctx context.Context) (map[string]string, error) {
	var kv []KeyValue[string]
	if err := c.get(ctx, "/storage_service/host_id", &kv); err != nil {
		return nil, err
	}
	m := make(map[string]string, len(kv))
	for _, e := range kv {
		m[e.Key] = e.Value
	}
	return m, nil
}

// HostID is this node's own host id (GET /storage_service/hostid/local).
func (c *Client) HostID(ctx context.Context) (string, error) {
	var s string
	err := c.get(ctx, "/storage_service/hostid/local", &s)
	return s, err
}

// Live lists the addresses this node sees alive (GET /gossiper/endpoint/live/).
func (c *Client) Live(ctx context.Context) ([]string, error) {
	return c.list(ctx, "/gossiper/endpoint/live/")
}

// Down lists the addresses this node sees down (GET /gossiper/endpoint/down/).
func (c *Client) Down(ctx context.Context) ([]string, error) {
	return c.list(ctx, "/gossiper/endpoint/down/")
}

// Joining lists joining nodes (GET /storage_service/nodes/joining).
func (c *Client) Joining(ctx context.Context) ([]string, error) {
	return c.list(ctx, "/storage_service/nodes/joining")
}

// Leaving lists leaving nodes (GET /storage_service/nodes/leaving).
func (c *Client) Leaving(ctx context.Context) ([]string, error) {
	return c.list(ctx, "/storage_service/nodes/leaving")
}

// NaturalEndpoints are the addresses of the replicas of a partition key
// given in nodetool style, e.g. "42" for a bigint key
// (GET /storage_service/natural_endpoints/{keyspace}?cf=&key=).
func (c *Client) NaturalEndpoints(ctx context.Context, keyspace, table, key string) ([]string, error) {
	return c.list(ctx, "/storage_service/natural_endpoints/"+url.PathEscape(keyspace)+"?cf="+url.QueryEscape(table)+"&key="+url.QueryEscape(key))
}

// OperationMode is STARTING, JOINING, NORMAL, LEAVING, DECOMMISSIONED, DRAINING,
// DRAINED (GET /storage_service/operation_mode).
func (c *Client) OperationMode(ctx context.Context) (string, error) {
	var s string
	err := c.get(ctx, "/storage_service/operation_mode", &s)
	return s, err
}

// Load is the bytes of data this node holds (GET /storage_service/load).
func (c *Client) Load(ctx context.Context) (float64, error) {
	var f float64
	err := c.get(ctx, "/storage_service/load", &f)
	return f, err
}

// LoadMap maps node address to its load in bytes (GET /storage_service/load_map).
func (c *Client) LoadMap(ctx context.Context) (map[string]float64, error) {
	var kv []KeyValue[json.Number]
	if err := c.get(ctx, "/storage_service/load_map", &kv); err != nil {
		return nil, err
	}
	m := make(map[string]float64, len(kv))
	for _, e := range kv {
		// Some ScyllaDB versions send the number as a string.
		f, err := strconv.ParseFloat(strings.Trim(string(e.Value), `"`), 64)
		if err != nil {
			return nil, fmt.Errorf("load_map value %q of %s: %w", e.Value, e.Key, err)
		}
		m[e.Key] = f
	}
	return m, nil
}

// NativeTransportRunning says whether the CQL server is up (GET /storage_service/native_transport).
func (c *Client) NativeTransportRunning(ctx context.Context) (bool, error) {
	var b bool
	err := c.get(ctx, "/storage_service/native_transport", &b)
	return b, err
}

// Datacenter of host, or of this node when host is "" (GET /snitch/datacenter).
func (c *Client) Datacenter(ctx context.Context, host string) (string, error) {
	var s string
	err := c.get(ctx, "/snitch/datacenter"+hostQuery(host), &s)
	return s, err
}

// Rack of host, or of this node when host is "" (GET /snitch/rack).
func (c *Client) Rack(ctx context.Context, host string) (string, error) {
	var s string
	err := c.get(ctx, "/snitch/rack"+hostQuery(host), &s)
	return s, err
}

func hostQuery(host string) string {
	if host == "" {
		return ""
	}
	return "?host=" + url.QueryEscape(host)
}

// Decommission streams this node's data away and removes it from the ring
// (POST /storage_service/decommission). It returns when ScyllaDB answers,
// which is when the decommission is finished.
func (c *Client) Decommission(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/storage_service/decommission", nil, true)
}

// RemoveNode removes a dead node by host id (POST /storage_service/remove_node).
// ignoreNodes are host ids of other dead nodes to ignore.
func (c *Client) RemoveNode(ctx context.Context, hostID string, ignoreNodes ...string) error {
	q := url.Values{"host_id": {hostID}}
	if len(ignoreNodes) > 0 {
		q.Set("ignore_nodes", strings.Join(ignoreNodes, ","))
	}
	return c.do(ctx, http.MethodPost, "/storage_service/remove_node?"+q.Encode(), nil, true)
}

// Flush writes every memtable of every keyspace to disk, as `nodetool
// flush` does (POST /storage_service/flush).
func (c *Client) Flush(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/storage_service/flush", nil, true)
}

// KeyspaceCleanup drops the keyspace's data this node no longer owns, as
// `nodetool cleanup` does (POST /storage_service/keyspace_cleanup/{keyspace},
// cf = the tables, all when none; api/storage_service.cc
// force_keyspace_cleanup). ScyllaDB answers when the cleanup compaction is
// done; with tablets it is a no-op.
func (c *Client) KeyspaceCleanup(ctx context.Context, keyspace string, tables ...string) error {
	path := "/storage_service/keyspace_cleanup/" + url.PathEscape(keyspace)
	if len(tables) > 0 {
		path += "?" + url.Values{"cf": {strings.Join(tables, ",")}}.Encode()
	}
	return c.do(ctx, http.MethodPost, path, nil, true)
}

// QuiesceTopology blocks until no topology operation or tablet migration is
// in flight (POST /storage_service/quiesce_topology).
func (c *Client) QuiesceTopology(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/storage_service/quiesce_topology", nil, true)
}

// SetTabletBalancing enables or disables the tablet load balancer
// (POST /storage_service/tablets/balancing?enabled=).
func (c *Client) SetTabletBalancing(ctx context.Context, enabled bool) error {
	return c.do(ctx, http.MethodPost, "/storage_service/tablets/balancing?enabled="+strconv.FormatBool(enabled), nil, false)
}

func (c *Client) list(ctx context.Context, path string) ([]string, error) {
	var l []string
	err := c.get(ctx, path, &l)
	return l, err
}

func (c *Client) get(ctx context.Context, path string, out any) error {
	return c.do(ctx, http.MethodGet, path, out, false)
}

// do runs one call with retries on connection failures. GETs are retried on
// any transport error; POSTs only when the connection could not be made, so
// that a change is never sent twice.
func (c *Client) do(ctx context.Context, method, path string, out any, long bool) error {
	attempts := max(c.Attempts, 1)
	backoff := c.Backoff
	var lastErr error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("%s %s%s: %w (last error: %v)", method, c.Base, path, ctx.Err(), lastErr)
			case <-t.C:
			}
			backoff *= 2
		}
		body, err := c.once(ctx, method, path, long)
		if err == nil {
			if out == nil || len(bytes.TrimSpace(body)) == 0 {
				return nil
			}
			if err := json.Unmarshal(body, out); err != nil {
				return fmt.Errorf("decoding %s %s%s answer %q: %w", method, c.Base, path, truncate(body, 200), err)
			}
			return nil
		}
		lastErr = err
		var he *HTTPError
		if errors.As(err, &he) || ctx.Err() != nil {
			return err
		}
		if method != http.MethodGet && !isDialError(err) {
			return err
		}
	}
	return fmt.Errorf("after %d attempts: %w", attempts, lastErr)
}

func (c *Client) once(ctx context.Context, method, path string, long bool) ([]byte, error) {
	if !long && c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, nil)
	if err != nil {
		return nil, fmt.Errorf("building %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s%s: %w", method, c.Base, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, fmt.Errorf("reading %s %s%s answer: %w", method, c.Base, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, &HTTPError{Method: method, Path: path, Status: resp.StatusCode, Body: string(truncate(body, 500))}
	}
	return body, nil
}

// isDialError reports whether the request never reached the server.
func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// IsConnectionError reports whether err is a transport failure (the node
// does not answer) rather than an answer from the node.
func IsConnectionError(err error) bool {
	if err == nil {
		return false
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
