package emulator

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// api_address moves the REST API off the listen address, as scylla.yaml's
// api_address does (conf/scylla.yaml ships api_address: 127.0.0.1): REST
// answers there and the listen address refuses the port.
func TestAPIAddressMovesREST(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := DefaultConfig()
	c.ListenAddress, c.APIAddress, c.DataDir = "127.0.77.1", "127.0.77.2", t.TempDir()
	c.Stderr = io.Discard
	done := make(chan error, 1)
	go func() { done <- Run(ctx, c) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("node: %v", err)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	var body string
	for {
		resp, err := http.Get("http://127.0.77.2:10000/storage_service/operation_mode")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			if strings.Contains(body, "NORMAL") {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("REST at the api address never answered NORMAL: %v %q", err, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, err := net.DialTimeout("tcp", "127.0.77.1:10000", time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("REST at the listen address: got %v, want connection refused", err)
	}
	// CQL still listens on the listen address (it opens after the join).
	for {
		cn, err := net.DialTimeout("tcp", "127.0.77.1:9042", time.Second)
		if err == nil {
			cn.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("CQL at the listen address: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestAPIAddressMustBeAnIP(t *testing.T) {
	c := DefaultConfig()
	c.DataDir, c.APIAddress, c.Stderr = t.TempDir(), "localhost", io.Discard
	if err := Run(context.Background(), c); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "--api-address") {
		t.Fatalf("got %v, want an invalid --api-address error", err)
	}
}
