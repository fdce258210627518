package awssim

import (
	"errors"
	"net/http"
	"net/url"
)

// Test hooks: what a provisioner's tests need of a region beyond what
// `elasticity aws-sim` users see. None of them is on unless a test asks
// (Options.RecordRequests, Options.NoScyllaServer, FailCall, ImpairInstance),
// so the command's region behaves exactly as before.

// Request is one API request as the region received it.
type Request struct {
	Action string
	Params url.Values  // the form-encoded body
	Header http.Header // the HTTP headers (Authorization carries the SigV4 credential scope)
}

// fault is an error the n-th call of an action answers with.
type fault struct {
	at        int
	code, msg string
}

// capacityMessage is the message EC2 sends with InsufficientInstanceCapacity
// ("Insufficient capacity errors" in the EC2 user guide's troubleshooting of
// instance launches); the zone and type are left out, as the SDK's callers
// read only the code.
const capacityMessage = "We currently do not have sufficient capacity in the Availability Zone you requested. Our system will be working on provisioning additional capacity."

// FailCall makes the n-th call of action from now on (1: the next one) fail
// with the EC2 error code; InsufficientInstanceCapacity gets EC2's message.
// The answer has the shape of every EC2 error (HTTP 400,
// Response>Errors>Error>Code/Message and RequestID, which aws-sdk-go-v2's
// aws/protocol/ec2query/error_utils.go decodes).
func (r *Region) FailCall(action string, n int, code string) {
	msg := "injected failure"
	if code == "InsufficientInstanceCapacity" {
		msg = capacityMessage
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.faults == nil {
		r.faults = map[string][]fault{}
	}
	r.faults[action] = append(r.faults[action], fault{at: r.actionCalls[action] + n, code: code, msg: msg})
}

// ImpairInstance makes the n-th instance launched from now on (1: the next
// one) fail its boot with reason: it runs, its status checks are impaired,
// and DescribeInstances gives the reason as its state reason, as for an
// instance whose scylla-server could not start (instance.go boot).
func (r *Region) ImpairInstance(n int, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.impair == nil {
		r.impair = map[int]string{}
	}
	r.impair[len(r.order)+n] = reason
}

// Requests are the requests served so far with Options.RecordRequests, in order.
func (r *Region) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.requests...)
}

// noteCall counts a call of action, records it when asked, and returns the
// injected fault it is to answer with, if any. r.mu is held.
func (r *Region) noteCall(action string, q url.Values, h http.Header) *apiError {
	if r.actionCalls == nil {
		r.actionCalls = map[string]int{}
	}
	r.actionCalls[action]++
	if r.o.RecordRequests {
		r.requests = append(r.requests, Request{Action: action, Params: q, Header: h.Clone()})
	}
	for i, f := range r.faults[action] {
		if f.at == r.actionCalls[action] {
			r.faults[action] = append(r.faults[action][:i], r.faults[action][i+1:]...)
			return errf(f.code, "%s", f.msg)
		}
	}
	return nil
}

// injectedImpairment is the reason the instance launched as number n
// (1-based) is to fail its boot with, or nil. r.mu is held.
func (r *Region) injectedImpairment(n int) error {
	if reason, ok := r.impair[n]; ok {
		delete(r.impair, n)
		return errors.New(reason)
	}
	return nil
}
