package scyllarest_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/cluster/fakescylla"
	"github.com/elasticity-dev/elasticity/cluster/scyllarest"
)

func TestClientAgainstFake(t *testing.T) {
	fc := fakescylla.New()
	defer fc.Close()
	for i, a := range []string{"127.0.4.2", "127.0.4.3", "127.0.4.4"} {
		if err := fc.Start(a, fakescylla.Ports{}, func(n *fakescylla.Node) { n.Load = float64(i+1) * 1e9; n.Rack = "rack" + string(rune('1'+i)) }); err != nil {
			t.Fatal(err)
		}
	}
	fc.Update("127.0.4.4", func(n *fakescylla.Node) { n.Down = true })
	srv := httptest.NewServer(fc.RESTHandler("127.0.4.2"))
	defer srv.Close()
	c := scyllarest.NewURL(srv.URL)
	ctx := context.Background()

	ids, err := c.HostIDs(ctx)
	if err != nil || len(ids) != 3 || ids["127.0.4.3"] == "" {
		t.Fatalf("HostIDs = %v, %v", ids, err)
	}
	if id, err := c.HostID(ctx); err != nil || id != ids["127.0.4.2"] {
		t.Fatalf("HostID = %q, %v; want %q", id, err, ids["127.0.4.2"])
	}
	if l, err := c.Live(ctx); err != nil || len(l) != 2 {
		t.Fatalf("Live = %v, %v", l, err)
	}
	if l, err := c.Down(ctx); err != nil || len(l) != 1 || l[0] != "127.0.4.4" {
		t.Fatalf("Down = %v, %v", l, err)
	}
	if l, err := c.Joining(ctx); err != nil || len(l) != 0 {
		t.Fatalf("Joining = %v, %v", l, err)
	}
	if m, err := c.OperationMode(ctx); err != nil || m != "NORMAL" {
		t.Fatalf("OperationMode = %q, %v", m, err)
	}
	if l, err := c.Load(ctx); err != nil || l != 1e9 {
		t.Fatalf("Load = %v, %v", l, err)
	}
	if m, err := c.LoadMap(ctx); err != nil || m["127.0.4.4"] != 3e9 {
		t.Fatalf("LoadMap = %v, %v", m, err)
	}
	if on, err := c.NativeTransportRunning(ctx); err != nil || !on {
		t.Fatalf("NativeTransportRunning = %v, %v", on, err)
	}
	if r, err := c.Rack(ctx, "127.0.4.3"); err != nil || r != "rack2" {
		t.Fatalf("Rack = %q, %v", r, err)
	}
	if err := c.SetTabletBalancing(ctx, false); err != nil || fc.Balancing() == nil || *fc.Balancing() {
		t.Fatalf("SetTabletBalancing: %v, state %v", err, fc.Balancing())
	}
	if err := c.QuiesceTopology(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveNode(ctx, ids["127.0.4.4"]); err != nil {
		t.Fatal(err)
	}
	if got := fc.Members(); len(got) != 2 {
		t.Fatalf("members after remove_node: %v", got)
	}
	err = c.RemoveNode(ctx, "no-such-id")
	var he *scyllarest.HTTPError
	if !errors.As(err, &he) || he.Status != 500 {
		t.Fatalf("RemoveNode(unknown) = %v, want HTTP 500", err)
	}
}

func TestLoadMapStringValues(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`[{"key":"127.0.0.2","value":"12345.5"},{"key":"127.0.0.3","value":7}]`))
	}))
	defer srv.Close()
	m, err := scyllarest.NewURL(srv.URL).LoadMap(context.Background())
	if err != nil || m["127.0.0.2"] != 12345.5 || m["127.0.0.3"] != 7 {
		t.Fatalf("LoadMap = %v, %v", m, err)
	}
}

// dropFirst closes the connection without answering for the first n requests.
func dropFirst(n int32, calls *atomic.Int32, status int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= n {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		w.WriteHeader(status)
		w.Write([]byte(`"NORMAL"`))
	})
}

func TestRetriesConnectionErrorsOnGet(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(dropFirst(2, &calls, 200))
	defer srv.Close()
	c := scyllarest.NewURL(srv.URL)
	c.Backoff = 10 * time.Millisecond
	if m, err := c.OperationMode(context.Background()); err != nil || m != "NORMAL" {
		t.Fatalf("OperationMode = %q, %v", m, err)
	}
	if calls.Load() != 3 {
		t.Fatalf("calls = %d, want 3", calls.Load())
	}
}

func TestNoRetryOnHTTPErrors(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(dropFirst(0, &calls, 404))
	defer srv.Close()
	c := scyllarest.NewURL(srv.URL)
	c.Backoff = 10 * time.Millisecond
	_, err := c.OperationMode(context.Background())
	var he *scyllarest.HTTPError
	if !errors.As(err, &he) || he.Status != 404 || calls.Load() != 1 {
		t.Fatalf("err = %v after %d calls; want one HTTP 404", err, calls.Load())
	}
	if scyllarest.IsConnectionError(err) {
		t.Fatal("an HTTP answer is not a connection error")
	}
}

func TestPostNotRetriedAfterSending(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(dropFirst(5, &calls, 200))
	defer srv.Close()
	c := scyllarest.NewURL(srv.URL)
	c.Backoff = 10 * time.Millisecond
	err := c.Decommission(context.Background())
	if err == nil || calls.Load() != 1 || !scyllarest.IsConnectionError(err) {
		t.Fatalf("Decommission = %v after %d calls; want one attempt and a connection error", err, calls.Load())
	}
}

func TestConnectionRefusedRetriedThenFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.4.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := scyllarest.NewURL("http://" + addr)
	c.Backoff = 5 * time.Millisecond
	start := time.Now()
	err = c.QuiesceTopology(context.Background()) // POST: dial errors are safe to retry
	if err == nil || !scyllarest.IsConnectionError(err) {
		t.Fatalf("err = %v, want a connection error", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("took too long")
	}
}

func TestTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer srv.Close()
	c := scyllarest.NewURL(srv.URL)
	c.Timeout, c.Attempts = 100*time.Millisecond, 1
	start := time.Now()
	if _, err := c.Live(context.Background()); err == nil {
		t.Fatal("want a timeout")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("timeout took %s", d)
	}
}
