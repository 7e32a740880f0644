package attack

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// h1conn is one keep-alive HTTP/1.1 connection driven by one worker. It
// writes prepared request bytes and parses just enough of the response to
// record what a limiter said: status, the rate-limit headers, framing, and
// the start of an error body. This lean path is why bursts leave within
// microseconds of each other and throughput beats net/http-based tools.
type h1conn struct {
	addr    string
	tlsConf *tls.Config // nil for plain http
	timeout time.Duration
	local   netip.Addr     // source address to bind (source.go); zero: the kernel's choice
	serial  int64          // the open connection's number (nextConnSerial); 0 when closed
	broken  error          // why no connection can be made (a TLS configuration that failed to load)
	raw     net.Conn       // the TCP connection
	c       net.Conn       // what requests are written to: raw, or TLS over raw
	rec     *recordingConn // under TLS: raw, able to hold back the records of a burst's tail
	br      *bufio.Reader
	used    bool   // has served a request: a failure before any byte may be a stale keep-alive
	bodyBuf []byte // the start of a non-2xx body, read before it is kept (readResponse)
	// lastDone is when its last response was complete (an offset from the
	// start of the run that sent it; see sendsOnRead).
	lastDone time.Duration
	// dl is the deadline arm set on the connection, while it still is;
	// zero when something else may have set another since.
	dl   time.Time
	head bool // the request under way is a HEAD: its response has no content
	// certAsked: the server asked for a client certificate and none was
	// configured (see noteCertRequest); a later failure is then explained.
	certAsked bool

	watched     context.Context // see watch
	watchedConn net.Conn
	stopWatch   func() bool
}

func newH1conn(addr string, tlsConf *tls.Config, timeout time.Duration) *h1conn {
	return &h1conn{addr: addr, tlsConf: tlsConf, timeout: timeout}
}

// dial connects and, for https, completes the TLS handshake, so that a
// request written later pays for neither.
func (h *h1conn) dial(ctx context.Context) error {
	if h.broken != nil {
		return h.broken
	}
	d := net.Dialer{Timeout: h.timeout, KeepAlive: 30 * time.Second, LocalAddr: tcpLocal(h.local)}
	raw, err := d.DialContext(ctx, "tcp", h.addr)
	if err != nil {
		return err
	}
	if tc, ok := raw.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
		raw = newRawTCP(tc) // rawtcp_linux.go
	}
	c, rec := raw, (*recordingConn)(nil)
	if h.tlsConf != nil {
		rec = &recordingConn{Conn: raw}
		tc := tls.Client(rec, h.tlsConf)
		_ = tc.SetDeadline(time.Now().Add(h.timeout))
		h.certAsked = false
		if err := tc.HandshakeContext(context.WithValue(ctx, certAsked{}, &h.certAsked)); err != nil {
			raw.Close()
			return err
		}
		if p := tc.ConnectionState().NegotiatedProtocol; p != "" && p != "http/1.1" {
			raw.Close()
			return errNoHTTP1
		}
		c = tc
	}
	h.raw, h.c, h.rec = raw, c, rec
	h.dl = time.Time{} // the handshake's, if any: not one arm set
	h.serial = nextConnSerial()
	h.br = bufio.NewReaderSize(c, 4096)
	h.used = false
	return nil
}

func (h *h1conn) close() {
	if h.c != nil {
		h.c.Close()
		h.c, h.raw, h.rec = nil, nil, nil
		h.serial = 0
		h.dl = time.Time{}
	}
	h.unwatch()
}

// watch makes the end of ctx expire the connection (a request in flight
// then fails at once). It registers once per connection and context rather
// than per request: a per-request hook (allocated, and locked into the run
// context's children) showed as 5–7 % of a closed-loop run's CPU profile.
func (h *h1conn) watch(ctx context.Context) {
	if h.watched == ctx && h.watchedConn == h.c {
		return
	}
	h.unwatch()
	h.dl = time.Time{} // the previous context may have expired the connection
	conn := h.c
	h.watched, h.watchedConn = ctx, conn
	h.stopWatch = context.AfterFunc(ctx, func() { expire(conn) })
}

func (h *h1conn) unwatch() {
	if h.stopWatch != nil {
		h.stopWatch()
		h.stopWatch, h.watched, h.watchedConn = nil, nil, nil
	}
}

// ready dials if there is no connection, so bursts can warm up beforehand.
func (h *h1conn) ready(ctx context.Context) error {
	if h.c != nil {
		return nil
	}
	return h.dial(ctx)
}

// roundTrip sends wire and reads the response into r. start is the run's
// zero.
func (h *h1conn) roundTrip(ctx context.Context, wire []byte, start time.Time, r *results.Result) {
	stamp(r, h.local, 0)
	for attempt := 0; ; attempt++ {
		if err := h.ready(ctx); err != nil {
			r.Sent = time.Since(start)
			r.Done = r.Sent
			r.Error = describeNetErr(h.addr, h.explain(err))
			return
		}
		r.Conn = h.serial
		reused := h.used
		h.watch(ctx) // Ctrl-C must not wait out a slow server
		r.Sent = h.arm(start)
		gotByte, err := h.exchange(wire, start, r)
		if err == nil {
			return
		}
		h.close()
		// A reused connection the server had already closed fails before
		// any byte: retry once on a fresh one, as net/http does.
		if reused && !gotByte && attempt == 0 && ctx.Err() == nil {
			continue
		}
		r.Done = time.Since(start)
		r.Error = describeNetErr(h.addr, h.explain(err))
		if ctx.Err() != nil { // expired by Ctrl-C or the run's end, not the server's fault
			r.Error = canceledError(ctx, h.addr)
		}
		return
	}
}

// arm makes sure the connection's deadline is a timeout from now, and
// returns now (the offset from start a request sent next is sent at).
//
// Setting a deadline costs the runtime a timer update under a lock and
// three clock readings; per request, at --rate max, a few percent of the
// CPU. So a deadline is set a little further out than the timeout (by
// deadlineSlack) and kept while it still lies a timeout or more ahead of
// the request: a request is never cut before its timeout, and at most a
// thousandth of it after. Whatever else sets the connection's deadline
// (the pacer's lanes, a burst, a dial) forgets the one kept (h.dl), and a
// context that ended (watch) leaves it expired for good: the connection is
// then closed by the request that fails on it.
func (h *h1conn) arm(start time.Time) time.Duration {
	now := time.Since(start)
	if !h.dl.IsZero() && !start.Add(now+h.timeout).After(h.dl) {
		return now
	}
	h.dl = start.Add(now + h.timeout + deadlineSlack(h.timeout))
	_ = h.c.SetDeadline(h.dl)
	return time.Since(start)
}

// deadlineSlack is how much later than its timeout a request may be cut
// (see arm): a thousandth of it.
func deadlineSlack(timeout time.Duration) time.Duration { return timeout / 1000 }

// explain adds what the connection knows about a failure: that its server
// asked for a client certificate nobody gave, so the reset or closed
// connection that followed is the server's refusal.
func (h *h1conn) explain(err error) error {
	if err == nil || !h.certAsked {
		return err
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "remote error" || isTimeout(err) || errors.Is(err, context.Canceled) {
		return err // the alert says it already; a timeout or Ctrl-C is not the refusal
	}
	return errClientCertWanted{err}
}

// prewrite sends all of wire except its final byte and returns what is
// left to write at the burst instant and the socket to write it to: that
// byte on plain http; under TLS, the record that carries it, already
// encrypted, to be written onto the TCP connection below TLS. The owner
// then reads the response with await.
func (h *h1conn) prewrite(ctx context.Context, wire []byte) (sock net.Conn, tail []byte, err error) {
	h.head = bytes.HasPrefix(wire, headLine)
	if err := h.ready(ctx); err != nil {
		return nil, nil, err
	}
	// For the prewrite itself; the caller sets the deadline of the answer,
	// which is due a timeout after the release, however long the idle.
	_ = h.c.SetDeadline(time.Now().Add(h.timeout))
	h.dl = time.Time{}
	if _, err := h.c.Write(wire[:len(wire)-1]); err != nil {
		h.close()
		return nil, nil, err
	}
	last := wire[len(wire)-1:]
	if h.rec == nil {
		return h.raw, last, nil
	}
	tail, err = h.rec.hold(h.c.(*tls.Conn), last)
	if err != nil {
		h.close()
		return nil, nil, err
	}
	return h.raw, tail, nil
}

// exchange writes and reads one request/response. gotByte reports whether
// any response byte arrived (after which a retry would be wrong).
func (h *h1conn) exchange(wire []byte, start time.Time, r *results.Result) (gotByte bool, err error) {
	h.head = bytes.HasPrefix(wire, headLine)
	s, onRead := h.sendsOnRead(r.Sent)
	if onRead {
		if h.rec != nil { // sealed into TLS records now, written by the read
			if wire, err = h.rec.seal(h.c.(*tls.Conn), wire); err != nil {
				return false, err
			}
		}
		s.sendOnRead(wire)
	} else if _, err := h.c.Write(wire); err != nil {
		return false, err
	}
	_, err = h.br.Peek(1)
	if onRead {
		// Written by the read (a reader with data left over would not
		// have read: then it goes out now, as it would have before).
		if err != nil {
			s.dropPending()
		} else if err := s.flushPending(); err != nil {
			return false, err
		}
	}
	if err != nil {
		return false, err
	}
	return true, h.readAfterFirstByte(start, r)
}

// sendOnReader is a connection that can write a request inside the read
// that waits for its response (rawTCP: see sendOnRead).
type sendOnReader interface {
	sendOnRead(b []byte)
	flushPending() error
	dropPending()
}

// maxOnReadIdle is how long a connection may have been idle for its next
// request still to be written by the read. Such a write skips the read
// that would find a server's close at once (an EOF already received): a
// server that closed the connection fully answers the request with a
// reset, which wakes the read, but one that only stopped writing would be
// waited for until the timeout. A connection closed by its server while
// idle has mostly been idle for seconds (keep-alive timeouts); one busy in
// a closed loop is idle for microseconds.
const maxOnReadIdle = 50 * time.Millisecond

// sendsOnRead says whether the request sent at offset sent is written by
// the read of its response, and on what: on a raw TCP connection (or TLS
// over one) whose reader holds nothing unread, fresh or idle for less
// than maxOnReadIdle.
func (h *h1conn) sendsOnRead(sent time.Duration) (sendOnReader, bool) {
	s, ok := h.raw.(sendOnReader)
	if !ok || h.br.Buffered() > 0 || (h.used && sent-h.lastDone > maxOnReadIdle) {
		return nil, false
	}
	return s, true
}

// await reads the response to a request whose last bytes another goroutine
// writes (a burst's release). It does not close the connection on error.
func (h *h1conn) await(start time.Time, r *results.Result) error {
	if _, err := h.br.Peek(1); err != nil {
		return err
	}
	return h.readAfterFirstByte(start, r)
}

// readAfterFirstByte stamps the first byte, which has arrived, and reads the
// rest of the response.
func (h *h1conn) readAfterFirstByte(start time.Time, r *results.Result) error {
	r.FirstByte = time.Since(start)
	h.used = true
	keepAlive, err := h.readResponse(r)
	if err != nil {
		return err
	}
	r.Done = time.Since(start)
	h.lastDone = r.Done
	if !keepAlive {
		h.close()
	}
	return nil
}

// expire makes a blocked read or write on c fail now (Ctrl-C, or a burst
// request whose release was abandoned). It takes the net.Conn rather than
// the h1conn because it runs on other goroutines, which must not read
// h1conn's fields while the owner may be replacing them.
func expire(c net.Conn) { _ = c.SetDeadline(time.Unix(1, 0)) }

var errMidResponse = errors.New("connection closed mid-response")

// headLine starts a HEAD request: its response has no content, whatever
// its Content-Length says (a bypass trial sends HEAD for GET).
var headLine = []byte("HEAD ")

// readResponse parses status line, headers and body framing. It reads
// through h.br and allocates nothing for a response whose headers it does
// not keep (a 2xx with a Content-Length): header names are compared
// without regard to case rather than lower-cased, and a body is skipped in
// the reader's buffer.
func (h *h1conn) readResponse(r *results.Result) (keepAlive bool, err error) {
	for {
		line, err := h.br.ReadSlice('\n')
		if err != nil {
			return false, errMidResponse
		}
		// "HTTP/1.1 429 Too Many Requests"
		if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
			return false, fmt.Errorf("malformed status line %q", bytes.TrimSpace(line))
		}
		code, err := strconv.Atoi(string(line[9:12]))
		if err != nil {
			return false, fmt.Errorf("malformed status line %q", bytes.TrimSpace(line))
		}
		keepAlive = line[7] == '1' // HTTP/1.0 closes by default
		contentLength, chunked := int64(-1), false
		for {
			hl, err := h.br.ReadSlice('\n')
			if err != nil {
				return false, errMidResponse
			}
			hl = trimCRLF(hl)
			if len(hl) == 0 {
				break
			}
			colon := bytes.IndexByte(hl, ':')
			if colon <= 0 {
				continue
			}
			name := hl[:colon]
			value := bytes.TrimSpace(hl[colon+1:])
			switch { // the framing; a result keeps none of these
			case equalFoldASCII(name, "content-length"):
				contentLength, err = parseLength(value)
				if err != nil || contentLength < 0 {
					return false, fmt.Errorf("malformed Content-Length %q", value)
				}
			case equalFoldASCII(name, "transfer-encoding"):
				chunked = containsFold(value, "chunked")
			case equalFoldASCII(name, "connection"):
				if containsFold(value, "close") {
					keepAlive = false
				} else if containsFold(value, "keep-alive") {
					keepAlive = true
				}
			default:
				if code < 100 || code >= 200 { // not an interim response's
					keepHeader(r, name, value)
				}
			}
		}
		if code >= 100 && code < 200 {
			continue // interim response; the real one follows
		}
		r.Status = code
		keep := code < 200 || code >= 300 // the start of the body is recorded
		switch {
		case code == 204 || code == 304 || h.head: // RFC 9112 §6.3: no content
			return keepAlive, nil
		case chunked:
			return keepAlive, h.readBody(r, httputil.NewChunkedReader(h.br), keep, true)
		case contentLength >= 0:
			return keepAlive, h.skipBody(r, contentLength, keep)
		default: // read to EOF: the connection cannot be reused
			return false, h.readBody(r, h.br, keep, false)
		}
	}
}

// skipBody reads a body of n bytes from h.br, keeping its start in r when
// keep is set: the buffer's own bytes, copied once into r.Body.
func (h *h1conn) skipBody(r *results.Result, n int64, keep bool) error {
	if keep && n > 0 {
		k := int(min(n, results.BodyKeep))
		if h.bodyBuf == nil {
			h.bodyBuf = make([]byte, results.BodyKeep)
		}
		got, _ := io.ReadFull(h.br, h.bodyBuf[:k])
		r.Body = string(h.bodyBuf[:got])
		if got < k {
			return errMidResponse
		}
		n -= int64(k)
	}
	for n > 0 {
		d, err := h.br.Discard(int(min(n, 1<<30)))
		n -= int64(d)
		if err != nil {
			return errMidResponse
		}
	}
	return nil
}

// readBody reads a body from body to its end (a chunked one's, with the
// trailer section after it, or the connection's), keeping its start in r
// when keep is set.
func (h *h1conn) readBody(r *results.Result, body io.Reader, keep, chunked bool) error {
	if keep {
		if h.bodyBuf == nil {
			h.bodyBuf = make([]byte, results.BodyKeep)
		}
		n, _ := io.ReadFull(body, h.bodyBuf)
		r.Body = string(h.bodyBuf[:n])
	}
	if _, err := io.Copy(io.Discard, body); err != nil {
		return errMidResponse
	}
	if chunked {
		// The chunked reader stops after the last-chunk line; the
		// trailer section up to its empty line is still on the wire.
		for {
			tl, err := h.br.ReadSlice('\n')
			if err != nil {
				return errMidResponse
			}
			if len(trimCRLF(tl)) == 0 {
				break
			}
		}
	}
	return nil
}

// keepHeader records the field name: value in r if the result keeps it
// (results.KeepHeader), under its lower-case name; several field lines of
// one name combine with ", ".
func keepHeader(r *results.Result, name, value []byte) {
	var lower [64]byte
	if len(name) > len(lower) {
		if n := string(lowerASCII(name)); results.KeepHeader(n) {
			addHeader(r, n, string(value))
		}
		return
	}
	l := lower[:len(name)]
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		l[i] = c
	}
	if !results.KeepHeader(string(l)) {
		return
	}
	addHeader(r, string(l), string(value))
}

func addHeader(r *results.Result, name, value string) {
	if r.Headers == nil {
		r.Headers = make(map[string]string, 4)
	}
	if prev, ok := r.Headers[name]; ok { // several field lines combine with ", "
		r.Headers[name] = prev + ", " + value
	} else {
		r.Headers[name] = value
	}
}

// trimCRLF is b without its trailing CR and LF bytes
// (bytes.TrimRight(b, "\r\n"), without building the cutset every line).
func trimCRLF(b []byte) []byte {
	n := len(b)
	for n > 0 && (b[n-1] == '\n' || b[n-1] == '\r') {
		n--
	}
	return b[:n]
}

// parseLength is strconv.ParseInt(string(b), 10, 64), with a short way
// for what a Content-Length nearly always is: up to 18 decimal digits.
func parseLength(b []byte) (int64, error) {
	if len(b) == 0 || len(b) > 18 {
		return strconv.ParseInt(string(b), 10, 64)
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return strconv.ParseInt(string(b), 10, 64)
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}

// equalFoldASCII reports whether b is the lower-case ASCII word w in any
// case of its ASCII letters (string(lowerASCII(b)) == w, without the copy).
func equalFoldASCII(b []byte, w string) bool {
	if len(b) != len(w) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

// containsFold reports whether b contains the lower-case ASCII word w in
// any case (bytes.Contains(lowerASCII(b), w), without the copy).
func containsFold(b []byte, w string) bool {
	for i := 0; i+len(w) <= len(b); i++ {
		if equalFoldASCII(b[i:i+len(w)], w) {
			return true
		}
	}
	return false
}

func lowerASCII(b []byte) []byte {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			out := make([]byte, len(b))
			copy(out, b)
			for j := i; j < len(out); j++ {
				if c := out[j]; 'A' <= c && c <= 'Z' {
					out[j] = c + 32
				}
			}
			return out
		}
	}
	return b
}

// canceledError says why a request was abandoned before its answer: the
// run's time budget ended (the server had not answered by then), or the
// run was interrupted.
func canceledError(ctx context.Context, addr string) string {
	if context.Cause(ctx) == errTimeBudget {
		return results.NoAnswerInBudget(addr)
	}
	return "canceled"
}

// describeNetErr turns a network error into a sentence a user can act on.
func describeNetErr(addr string, err error) string {
	var opErr *net.OpError
	switch {
	case errors.Is(err, errMidResponse):
		return "server closed the connection mid-response"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &opErr) && opErr.Op == "dial" && isRefused(err):
		return fmt.Sprintf("connection refused to %s — is the server running?", addr)
	case isTimeout(err):
		return fmt.Sprintf("timeout waiting for %s", addr)
	}
	if msg, ok := describeTLSErr(addr, err); ok {
		return msg
	}
	if errors.Is(err, io.EOF) {
		return "server closed the connection without answering"
	}
	return err.Error()
}
