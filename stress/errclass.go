package stress

import (
	"context"
	"errors"
	"strings"

	"github.com/gocql/gocql"
)

// Error classes of latency.jsonl (results.LatencyRecord.Errors keys).
const (
	ErrTimeout      = "timeout"       // client or server (read/write) timeout
	ErrUnavailable  = "unavailable"   // not enough live replicas, or coordinator bootstrapping
	ErrOverloaded   = "overloaded"    // coordinator shed the request
	ErrNoSpace      = "no_space"      // a replica's disk is full
	ErrNoConnection = "no_connection" // no host or connection could take the request
	ErrCancelled    = "cancelled"     // the run ended and the operation was abandoned
	ErrOther        = "other"
)

// ClassifyError names the class of a failed CQL operation.
func ClassifyError(err error) string {
	if err == nil {
		return ""
	}
	var wt *gocql.RequestErrWriteTimeout
	var rt *gocql.RequestErrReadTimeout
	var un *gocql.RequestErrUnavailable
	var re gocql.RequestError
	msg := err.Error()
	switch {
	case strings.Contains(msg, "No space left") || strings.Contains(msg, "no space left"):
		return ErrNoSpace
	case errors.Is(err, context.Canceled):
		return ErrCancelled
	case errors.Is(err, gocql.ErrTimeoutNoResponse), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &wt), errors.As(err, &rt):
		return ErrTimeout
	case errors.As(err, &un):
		return ErrUnavailable
	case errors.Is(err, gocql.ErrNoConnections), errors.Is(err, gocql.ErrConnectionClosed),
		errors.Is(err, gocql.ErrHostDown), errors.Is(err, gocql.ErrNoConnectionsInPool), errors.Is(err, gocql.ErrSessionClosed):
		return ErrNoConnection
	case errors.As(err, &re):
		switch re.Code() {
		case gocql.ErrCodeOverloaded:
			return ErrOverloaded
		case gocql.ErrCodeUnavailable, gocql.ErrCodeBootstrapping:
			return ErrUnavailable
		case gocql.ErrCodeWriteTimeout, gocql.ErrCodeReadTimeout:
			return ErrTimeout
		}
	}
	return ErrOther
}
