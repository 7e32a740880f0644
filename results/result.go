package results

import (
	"net/http"
	"strings"
	"time"
)

// Result is everything recorded about one request. Times are offsets from
// the run's start on the monotonic clock, so they compare exactly.
type Result struct {
	Seq    int    `json:"seq"`
	Phase  string `json:"phase,omitempty"`  // the profile's step: "burst", "tail", "volley1", ...
	Client int    `json:"client,omitempty"` // simulated client, for storm/backoff (1-based)
	Key    string `json:"key,omitempty"`    // value sent in --key-header
	Source string `json:"source,omitempty"` // local address the connection was bound to (--source-addrs)
	// Conn numbers the connection that carried the request (the same
	// number: the same connection, within one process's run; 0: none was
	// made).
	Conn int64 `json:"conn,omitempty"`

	Scheduled time.Duration `json:"scheduled_ns"`  // when the plan said to send
	Sent      time.Duration `json:"sent_ns"`       // when the bytes went to the socket
	FirstByte time.Duration `json:"first_byte_ns"` // first response byte (0 if none)
	Done      time.Duration `json:"done_ns"`       // response complete or error

	Status  int               `json:"status,omitempty"`
	Error   string            `json:"error,omitempty"`
	Headers map[string]string `json:"headers,omitempty"` // rate-limit headers, lower-case names
	Body    string            `json:"body,omitempty"`    // first 1 KiB of a non-2xx body
}

// Latency is from the actual send to completion.
func (r *Result) Latency() time.Duration { return r.Done - r.Sent }

// Lateness is how far after its scheduled instant the request went out.
func (r *Result) Lateness() time.Duration { return r.Sent - r.Scheduled }

// Admitted reports a 2xx answer.
func (r *Result) Admitted() bool { return r.Status >= 200 && r.Status < 300 }

// Rejected reports an answer a limiter gives when it says no: 429, or 503
// (nginx's default), or 403 (HAProxy, GitHub).
func (r *Result) Rejected() bool {
	return r.Status == 429 || r.Status == 503 || r.Status == 403
}

// Record sets r's answer from a response read whole: its status, the
// headers a result keeps (several values of one joined with ", ", as
// several field lines are), and the start of a non-2xx body. The wire
// clients parse as they read; a simulated network hands its responses
// here, so both record the same fields.
func (r *Result) Record(status int, h http.Header, body []byte) {
	r.Status = status
	for name, vs := range h {
		lower := strings.ToLower(name)
		if !KeepHeader(lower) || len(vs) == 0 {
			continue
		}
		if r.Headers == nil {
			r.Headers = make(map[string]string, 4)
		}
		r.Headers[lower] = strings.Join(vs, ", ")
	}
	if !r.Admitted() {
		r.Body = string(body[:min(len(body), BodyKeep)])
	}
}

// budgetEnded ends the error of a request the run's own time budget
// abandoned before its answer came.
const budgetEnded = " before the time budget ended"

// NoAnswerInBudget is the error of a request to addr that the run's time
// budget abandoned: the run's cut, not the target's failure.
func NoAnswerInBudget(addr string) string { return "no answer from " + addr + budgetEnded }

// AbandonedAtBudget reports whether r failed only because the run's time
// budget ended before its answer came (NoAnswerInBudget).
func (r *Result) AbandonedAtBudget() bool { return strings.HasSuffix(r.Error, budgetEnded) }

// BodyKeep is how much of a non-2xx body a result keeps (the wire clients
// read no more of it).
const BodyKeep = 1024

// KeepHeader reports whether a response header (its lower-case name) is
// recorded: the ones rate limiters speak with, and Date to read an
// HTTP-date Retry-After against. The wire clients and Record ask it alike.
func KeepHeader(lower string) bool {
	switch lower {
	case "retry-after", "date", "content-type", "cache-control":
		return true
	}
	return strings.HasPrefix(lower, "x-ratelimit") || strings.HasPrefix(lower, "ratelimit") ||
		strings.HasPrefix(lower, "x-rate-limit")
}
