package attack

import (
	"bufio"
	"errors"
	"maps"
	"strconv"
	"strings"
	"testing"

	"github.com/ratecheck/ratecheck/results"
)

// readResponse records what a result keeps of a response whatever the case
// of its header names, and frames its body as HTTP/1.1 says, leaving the
// reader at the next response.
func TestReadResponseFields(t *testing.T) {
	long := "X-RateLimit-" + strings.Repeat("Abc", 20) // longer than keepHeader's buffer
	body := strings.Repeat("b", 1500)
	for _, c := range []struct {
		name, wire string
		head       bool
		status     int
		keepAlive  bool
		headers    map[string]string
		body       string
		err        error
	}{
		{name: "2xx", wire: "HTTP/1.1 200 OK\r\nCONTENT-LENGTH: 2\r\nDate: Sun, 06 Dec 2026 02:00:00 GMT\r\n\r\nok",
			status: 200, keepAlive: true, headers: map[string]string{"date": "Sun, 06 Dec 2026 02:00:00 GMT"}},
		{name: "429 kept", wire: "HTTP/1.1 429 Too Many Requests\r\nx-RateLimit-Remaining: 0\r\nRetry-After:  3 \r\nX-Ratelimit-Remaining: 1\r\nContent-Length: 4\r\nServer: x\r\n\r\nslow",
			status: 429, keepAlive: true, headers: map[string]string{"x-ratelimit-remaining": "0, 1", "retry-after": "3"}, body: "slow"},
		{name: "long body", wire: "HTTP/1.1 503 Busy\r\ncontent-length: 1500\r\n\r\n" + body,
			status: 503, keepAlive: true, body: body[:results.BodyKeep]},
		{name: "long name", wire: "HTTP/1.1 200 OK\r\n" + long + ": 5\r\nContent-Length: 0\r\n\r\n",
			status: 200, keepAlive: true, headers: map[string]string{strings.ToLower(long): "5"}},
		{name: "interim", wire: "HTTP/1.1 100 Continue\r\nRetry-After: 9\r\n\r\nHTTP/1.1 204 No Content\r\nRetry-After: 1\r\n\r\n",
			status: 204, keepAlive: true, headers: map[string]string{"retry-after": "1"}},
		{name: "chunked", wire: "HTTP/1.1 429 No\r\nTransfer-Encoding: Chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: t\r\n\r\n",
			status: 429, keepAlive: true, body: "abcde"},
		{name: "close", wire: "HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n", status: 200},
		{name: "1.0", wire: "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200},
		{name: "1.0 keep-alive", wire: "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n", status: 200, keepAlive: true},
		{name: "to EOF", wire: "HTTP/1.1 500 Oops\r\n\r\nall of it", status: 500, body: "all of it"},
		{name: "HEAD", wire: "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", head: true, status: 200, keepAlive: true},
		{name: "cut", wire: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", status: 200, err: errMidResponse},
		{name: "cut kept", wire: "HTTP/1.1 429 No\r\nContent-Length: 10\r\n\r\nshort", status: 429, body: "short", err: errMidResponse},
		{name: "bad length", wire: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", err: errors.New(`malformed Content-Length "-1"`)},
		{name: "bad status", wire: "HTTP/1.1 2x0 OK\r\n\r\n", err: errors.New(`malformed status line "HTTP/1.1 2x0 OK"`)},
	} {
		const next = "HTTP/1.1 201 Created\r\n"
		whole := c.err == nil && c.name != "to EOF" // the next response follows
		wire := c.wire
		if whole {
			wire += next
		}
		h := &h1conn{br: bufio.NewReader(strings.NewReader(wire)), head: c.head}
		var r results.Result
		keepAlive, err := h.readResponse(&r)
		switch {
		case c.err != nil:
			if err == nil || err.Error() != c.err.Error() {
				t.Errorf("%s: error %v, want %v", c.name, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		}
		if r.Status != c.status || keepAlive != c.keepAlive && err == nil || r.Body != c.body || !maps.Equal(r.Headers, c.headers) {
			t.Errorf("%s: status %d, keep-alive %v, body %q, headers %v; want %d, %v, %q, %v",
				c.name, r.Status, keepAlive, r.Body, r.Headers, c.status, c.keepAlive, c.body, c.headers)
		}
		if whole {
			if line, _ := h.br.ReadString('\n'); line != next {
				t.Errorf("%s: the next response starts %q", c.name, line)
			}
		}
	}
}

// A 2xx answer whose headers the result does not keep costs no allocation.
func TestReadResponseAllocatesNothing(t *testing.T) {
	wire := strings.Repeat("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nServer: sink\r\nConnection: keep-alive\r\n\r\nok", 1000)
	rd := strings.NewReader(wire)
	h := &h1conn{br: bufio.NewReader(rd)}
	var r results.Result
	allocs := testing.AllocsPerRun(500, func() {
		if _, err := h.readResponse(&r); err != nil || r.Status != 200 {
			t.Fatal(err, r.Status)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per response", allocs)
	}
}

// parseLength reads what strconv.ParseInt reads, errors too.
func TestParseLength(t *testing.T) {
	for _, s := range []string{"0", "2", "007", "123456789012345678", "1234567890123456789", "9223372036854775807",
		"9223372036854775808", "+5", "-1", "", "1 2", "0x10", "١٢"} {
		want, werr := strconv.ParseInt(s, 10, 64)
		got, err := parseLength([]byte(s))
		if got != want || (err == nil) != (werr == nil) {
			t.Errorf("%q: %d, %v; strconv: %d, %v", s, got, err, want, werr)
		}
	}
}
