package cluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// CQL native protocol v4 opcodes used by PingCQL.
const (
	cqlOpError     = 0x00
	cqlOpOptions   = 0x05
	cqlOpSupported = 0x06
)

// PingCQL checks that a CQL server answers on host:port: it sends an OPTIONS
// frame (protocol v4) and expects SUPPORTED. Sessions are the load
// generator's business; this only tells that the port is serving.
func PingCQL(ctx context.Context, host string, port int, timeout time.Duration) error {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("connecting to CQL %s: %w", addr, err)
	}
	defer conn.Close()
	deadline := time.Now().Add(timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = conn.SetDeadline(deadline)
	// version 4 request, no flags, stream 1, OPTIONS, empty body
	if _, err := conn.Write([]byte{0x04, 0x00, 0x00, 0x01, cqlOpOptions, 0, 0, 0, 0}); err != nil {
		return fmt.Errorf("sending CQL OPTIONS to %s: %w", addr, err)
	}
	var hdr [9]byte
	if _, err := io.ReadFull(conn, hdr[:]); err != nil {
		return fmt.Errorf("reading CQL answer from %s: %w", addr, err)
	}
	if hdr[0]&0x80 == 0 {
		return fmt.Errorf("CQL %s: answer is not a response frame (version byte %#x)", addr, hdr[0])
	}
	switch hdr[4] {
	case cqlOpSupported:
		return nil
	case cqlOpError:
		return fmt.Errorf("CQL %s answered OPTIONS with an ERROR frame", addr)
	default:
		return fmt.Errorf("CQL %s answered OPTIONS with opcode %#x, want SUPPORTED", addr, hdr[4])
	}
}
