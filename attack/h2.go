package attack

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ratecheck/ratecheck/results"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// HTTP/2 (Options.HTTP2, https targets only).
//
// A lean client like h1conn: connections are opened (TLS, ALPN h2, the
// SETTINGS exchange) before they are needed; a request is one HEADERS frame
// (and DATA for a body), built in advance and written whole — HTTP/2 has no
// "all but the last byte", a frame is processed only once complete. A burst
// pre-opens as many connections as the server's SETTINGS_MAX_CONCURRENT_STREAMS
// requires and at the instant writes each connection's HEADERS frames back to
// back in one write, shared among the release threads like http/1.1 tails.
// Header blocks are encoded as literals without indexing, so every frame can
// be built ahead of time, in any order (no HPACK dynamic table to keep in
// step); responses are decoded with x/net's HPACK decoder.

// h2Window is the flow-control window granted to the server: large enough
// that response bodies never wait for a WINDOW_UPDATE.
const h2Window = 1 << 30

// h2DefaultStreams is the concurrency assumed until the server's SETTINGS
// say otherwise (RFC 9113 recommends servers allow at least 100).
const h2DefaultStreams = 100

// errNoH2 is a server that did not agree to HTTP/2 in ALPN.
var errNoH2 = errors.New("server did not agree to HTTP/2 in the TLS handshake (ALPN): drop --http2 to use HTTP/1.1")

// h2client holds a target's HTTP/2 connections.
type h2client struct {
	addr    string
	conf    *tls.Config
	broken  error // a TLS configuration that failed to load
	timeout time.Duration
	req     *Request
	local   func() netip.Addr // the source address of the next connection (source.go); nil: none

	mu    sync.Mutex
	conns []*h2conn

	watch sync.Once // the run's end cancels every stream (watchRun)
}

// watchRun makes the end of the run (Ctrl-C, a budget) end every stream in
// flight at once, rather than at its timeout. The hook fires once, when
// ctx ends — at the latest when Finish cancels the run.
func (c *h2client) watchRun(ctx context.Context) {
	c.watch.Do(func() {
		context.AfterFunc(ctx, func() {
			c.mu.Lock()
			conns := append([]*h2conn(nil), c.conns...)
			c.mu.Unlock()
			for _, h := range conns {
				h.cancelStreams(context.Canceled)
			}
		})
	})
}

func newH2client(addr string, req *Request, opt Options) *h2client {
	c := &h2client{addr: addr, timeout: opt.Timeout, req: req}
	if req.URL.Scheme != "https" {
		c.broken = errors.New("HTTP/2 is supported over TLS only: use an https:// target")
		return c
	}
	conf, err := opt.TLS.Config(req.URL.Hostname())
	if err != nil {
		c.broken = err
		return c
	}
	conf.NextProtos = []string{"h2"}
	c.conf = conf
	c.broken = c.checkRequest()
	return c
}

// h2conn is one HTTP/2 connection.
type h2conn struct {
	addr    string
	local   netip.Addr // the source address it is bound to
	serial  int64      // the connection's number (nextConnSerial)
	tc      *tls.Conn
	fr      *http2.Framer
	timeout time.Duration

	wmu sync.Mutex // frames are written whole and in order

	mu         sync.Mutex
	streams    map[uint32]*h2stream
	nextID     uint32
	reserved   int // streams open or promised to a caller
	maxStreams int
	dead       error
	settled    chan struct{} // closed at the server's first SETTINGS
}

// h2stream is one request in flight.
type h2stream struct {
	r     *results.Result
	start time.Time
	done  func() // called once, when r is final
	body  []byte
	timer *time.Timer
}

// dial opens a connection and completes the SETTINGS exchange.
func (c *h2client) dial(ctx context.Context) (*h2conn, error) {
	if c.broken != nil {
		return nil, c.broken
	}
	var local netip.Addr
	if c.local != nil {
		local = c.local()
	}
	d := net.Dialer{Timeout: c.timeout, KeepAlive: 30 * time.Second, LocalAddr: tcpLocal(local)}
	raw, err := d.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return nil, err
	}
	if tcp, ok := raw.(*net.TCPConn); ok {
		_ = tcp.SetNoDelay(true)
	}
	tc := tls.Client(raw, c.conf)
	_ = tc.SetDeadline(time.Now().Add(c.timeout))
	if err := tc.HandshakeContext(ctx); err != nil {
		raw.Close()
		var opErr *net.OpError
		if errors.As(err, &opErr) && opErr.Op == "remote error" && strings.Contains(opErr.Err.Error(), "no application protocol") {
			return nil, errNoH2
		}
		return nil, err
	}
	if tc.ConnectionState().NegotiatedProtocol != "h2" {
		raw.Close()
		return nil, errNoH2
	}
	h := &h2conn{addr: c.addr, local: local, serial: nextConnSerial(), tc: tc, timeout: c.timeout, streams: map[uint32]*h2stream{}, nextID: 1,
		maxStreams: h2DefaultStreams, settled: make(chan struct{})}
	h.fr = http2.NewFramer(tc, bufio.NewReaderSize(tc, 16<<10))
	h.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	h.fr.MaxHeaderListSize = 1 << 20
	if _, err := tc.Write([]byte(http2.ClientPreface)); err != nil {
		raw.Close()
		return nil, err
	}
	if err := h.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2Window},
		http2.Setting{ID: http2.SettingEnablePush, Val: 0}); err != nil {
		raw.Close()
		return nil, err
	}
	if err := h.fr.WriteWindowUpdate(0, h2Window); err != nil {
		raw.Close()
		return nil, err
	}
	go h.readLoop()
	select {
	case <-h.settled:
	case <-time.After(c.timeout):
		h.fail(errors.New("no SETTINGS from the server"))
	case <-ctx.Done():
		h.fail(ctx.Err())
	}
	_ = tc.SetDeadline(time.Time{})
	h.mu.Lock()
	err = h.dead
	h.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return h, nil
}

// reserve promises a stream on h; false when it has none free or is dead.
func (h *h2conn) reserve() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dead != nil || h.reserved >= h.maxStreams || h.nextID > 1<<30 {
		return false
	}
	h.reserved++
	return true
}

// conn returns a connection with a stream reserved, dialling one when none
// has a stream free.
func (c *h2client) conn(ctx context.Context) (*h2conn, error) {
	c.mu.Lock()
	live := c.conns[:0]
	for _, h := range c.conns {
		h.mu.Lock()
		dead := h.dead != nil
		h.mu.Unlock()
		if !dead {
			live = append(live, h)
		}
	}
	c.conns = live
	for _, h := range c.conns {
		if h.reserve() {
			c.mu.Unlock()
			return h, nil
		}
	}
	c.mu.Unlock()
	h, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	h.reserve()
	c.mu.Lock()
	c.conns = append(c.conns, h)
	c.mu.Unlock()
	return h, nil
}

// frames builds the request, varied by v, as HTTP/2 frames on stream id.
func (c *h2client) frames(id uint32, key string, v Variation) []byte {
	r := c.req
	var block []byte
	field := func(name, value string) { block = appendLiteral(block, name, value) }
	method := r.method(v)
	field(":method", method)
	field(":scheme", "https")
	field(":authority", r.host())
	field(":path", r.target(v))
	r.fields(key, v, func(name, value string) {
		switch name = strings.ToLower(name); name {
		case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
			// not allowed in HTTP/2
		default:
			field(name, value)
		}
	})
	withBody := len(r.Body) > 0
	if r.bodyLength(method) {
		field("content-length", strconv.Itoa(len(r.Body)))
	}
	flags := byte(0x4) // END_HEADERS
	if !withBody {
		flags |= 0x1 // END_STREAM
	}
	out := appendFrameHeader(nil, len(block), 0x1, flags, id)
	out = append(out, block...)
	for body := r.Body; len(body) > 0; {
		n := min(len(body), 16384)
		f := byte(0)
		if n == len(body) {
			f = 0x1
		}
		out = appendFrameHeader(out, n, 0x0, f, id)
		out = append(out, body[:n]...)
		body = body[n:]
	}
	return out
}

// checkRequest reports a request this client cannot send: a header block
// above the default maximum frame size, or a body above the server's
// initial flow-control window.
func (c *h2client) checkRequest() error {
	if n := len(c.frames(1, strings.Repeat("k", 64), Variation{})); n > 16384+9+len(c.req.Body)+9*(len(c.req.Body)/16384+1) {
		return errors.New("request headers too large for one HTTP/2 frame (16 KiB)")
	}
	if len(c.req.Body) > 65535 {
		return fmt.Errorf("request body of %d bytes is larger than HTTP/2's initial window (65,535); send it over HTTP/1.1", len(c.req.Body))
	}
	return nil
}

func appendFrameHeader(b []byte, length int, typ, flags byte, id uint32) []byte {
	return append(b, byte(length>>16), byte(length>>8), byte(length), typ, flags,
		byte(id>>24)&0x7f, byte(id>>16), byte(id>>8), byte(id))
}

// appendLiteral is an HPACK "literal header field without indexing — new
// name" with plain (not Huffman) strings.
func appendLiteral(b []byte, name, value string) []byte {
	b = append(b, 0)
	b = appendHpackInt(b, 7, uint64(len(name)))
	b = append(b, name...)
	b = appendHpackInt(b, 7, uint64(len(value)))
	return append(b, value...)
}

func appendHpackInt(b []byte, prefix uint, v uint64) []byte {
	max := uint64(1)<<prefix - 1
	if v < max {
		return append(b, byte(v))
	}
	b = append(b, byte(max))
	v -= max
	for v >= 128 {
		b = append(b, byte(v%128+128))
		v /= 128
	}
	return append(b, byte(v))
}

// open registers a stream for r on h (which has one reserved) and returns
// its id; the request's frames are built for that id by the caller. start
// is the run's zero.
func (h *h2conn) open(r *results.Result, start time.Time, done func()) uint32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	id := h.nextID
	h.nextID += 2
	st := &h2stream{r: r, start: start, done: done}
	h.streams[id] = st
	st.timer = time.AfterFunc(h.timeout, func() { h.failStream(id, fmt.Errorf("timeout waiting for %s", h.addr)) })
	return id
}

// write sends frames whole. The results of their streams were stamped
// (Sent) just before: taking mu publishes those stamps to the reading
// goroutine, which finds its streams under mu.
func (h *h2conn) write(b []byte) error {
	h.mu.Lock()
	//lint:ignore SA2001 an empty critical section orders the stamps before the reads
	h.mu.Unlock()
	h.wmu.Lock()
	_, err := h.tc.Write(b)
	h.wmu.Unlock()
	if err != nil {
		h.fail(err)
	}
	return err
}

// h2writer is what a burst's release threads write an h2 connection's
// frames to.
type h2writer struct {
	net.Conn
	h *h2conn
}

func (w h2writer) Write(b []byte) (int, error) { return len(b), w.h.write(b) }

// readLoop reads frames until the connection fails.
func (h *h2conn) readLoop() {
	settled := false
	for {
		f, err := h.fr.ReadFrame()
		if err != nil {
			var se http2.StreamError
			if errors.As(err, &se) {
				h.failStream(se.StreamID, fmt.Errorf("HTTP/2 stream error: %v", se.Code))
				continue
			}
			h.fail(err)
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if f.IsAck() {
				continue
			}
			if v, ok := f.Value(http2.SettingMaxConcurrentStreams); ok {
				h.mu.Lock()
				h.maxStreams = int(v)
				h.mu.Unlock()
			}
			h.control(func() error { return h.fr.WriteSettingsAck() })
			if !settled {
				settled = true
				close(h.settled)
			}
		case *http2.MetaHeadersFrame:
			h.headers(f)
		case *http2.DataFrame:
			h.data(f)
		case *http2.RSTStreamFrame:
			h.failStream(f.StreamID, fmt.Errorf("server reset the stream (%v)", f.ErrCode))
		case *http2.GoAwayFrame:
			h.goAway(f.LastStreamID, f.ErrCode)
		case *http2.PingFrame:
			if !f.IsAck() {
				data := f.Data
				h.control(func() error { return h.fr.WritePing(true, data) })
			}
		}
	}
}

// control writes a control frame (the Framer's writes share its buffer).
func (h *h2conn) control(write func() error) {
	h.wmu.Lock()
	err := write()
	h.wmu.Unlock()
	if err != nil {
		h.fail(err)
	}
}

func (h *h2conn) stream(id uint32) *h2stream {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.streams[id]
}

func (h *h2conn) headers(f *http2.MetaHeadersFrame) {
	st := h.stream(f.StreamID)
	if st == nil {
		return
	}
	status, err := strconv.Atoi(f.PseudoValue("status"))
	if err != nil {
		h.failStream(f.StreamID, errors.New("malformed :status"))
		return
	}
	if status >= 100 && status < 200 {
		return // interim; the real one follows
	}
	r := st.r
	if r.FirstByte == 0 {
		r.FirstByte = time.Since(st.start)
	}
	r.Status = status
	for _, hf := range f.RegularFields() {
		if results.KeepHeader(hf.Name) {
			if r.Headers == nil {
				r.Headers = make(map[string]string, 4)
			}
			if prev, ok := r.Headers[hf.Name]; ok {
				r.Headers[hf.Name] = prev + ", " + hf.Value
			} else {
				r.Headers[hf.Name] = hf.Value
			}
		}
	}
	if f.StreamEnded() {
		h.finish(f.StreamID, nil)
	}
}

func (h *h2conn) data(f *http2.DataFrame) {
	if n := len(f.Data()); n > 0 {
		// Give the window back, for the connection and the stream.
		h.control(func() error {
			if err := h.fr.WriteWindowUpdate(0, uint32(n)); err != nil {
				return err
			}
			if !f.StreamEnded() {
				return h.fr.WriteWindowUpdate(f.StreamID, uint32(n))
			}
			return nil
		})
	}
	st := h.stream(f.StreamID)
	if st == nil {
		return
	}
	if !st.r.Admitted() && len(st.body) < results.BodyKeep {
		st.body = append(st.body, f.Data()[:min(len(f.Data()), results.BodyKeep-len(st.body))]...)
	}
	if f.StreamEnded() {
		h.finish(f.StreamID, nil)
	}
}

// finish ends a stream: with err, as failed.
func (h *h2conn) finish(id uint32, err error) {
	h.mu.Lock()
	st := h.streams[id]
	if st == nil {
		h.mu.Unlock()
		return
	}
	delete(h.streams, id)
	h.reserved--
	h.mu.Unlock()
	st.timer.Stop()
	r := st.r
	r.Done = time.Since(st.start)
	if len(st.body) > 0 {
		r.Body = string(st.body)
	}
	if err != nil {
		r.Error = describeNetErr(h.addr, err)
	} else if r.Status == 0 {
		r.Error = "stream ended without a response"
	}
	st.done()
}

func (h *h2conn) failStream(id uint32, err error) { h.finish(id, err) }

// goAway fails the streams the server will not process and retires h.
func (h *h2conn) goAway(last uint32, code http2.ErrCode) {
	h.mu.Lock()
	if h.dead == nil {
		h.dead = fmt.Errorf("server sent GOAWAY (%v)", code)
	}
	var ids []uint32
	for id := range h.streams {
		if id > last {
			ids = append(ids, id)
		}
	}
	h.mu.Unlock()
	for _, id := range ids {
		h.failStream(id, errors.New("server refused the stream (GOAWAY)"))
	}
}

// cancelStreams fails every stream in flight with err, keeping h.
func (h *h2conn) cancelStreams(err error) {
	h.mu.Lock()
	ids := make([]uint32, 0, len(h.streams))
	for id := range h.streams {
		ids = append(ids, id)
	}
	h.mu.Unlock()
	for _, id := range ids {
		h.failStream(id, err)
	}
}

// fail marks h dead and fails every stream in flight.
func (h *h2conn) fail(err error) {
	h.mu.Lock()
	if h.dead == nil {
		h.dead = err
	}
	ids := make([]uint32, 0, len(h.streams))
	for id := range h.streams {
		ids = append(ids, id)
	}
	h.mu.Unlock()
	for _, id := range ids {
		h.failStream(id, err)
	}
	h.tc.Close()
}

// close closes every connection (Finish).
func (c *h2client) close() {
	c.mu.Lock()
	conns := c.conns
	c.conns = nil
	c.mu.Unlock()
	for _, h := range conns {
		h.fail(errors.New("client closed"))
	}
}

// send starts r (with the shot's extra header lines) on a connection now
// and calls done when it is final.
func (c *h2client) send(ctx context.Context, e *Engine, r *results.Result, v Variation, done func()) {
	c.watchRun(ctx)
	h, err := c.conn(ctx)
	if err != nil {
		r.Sent = e.Now()
		r.Done, r.Error = r.Sent, describeNetErr(c.addr, err)
		done()
		return
	}
	stamp(r, h.local, h.serial)
	id := h.open(r, e.start, done)
	b := c.frames(id, r.Key, v)
	r.Sent = e.Now()
	_ = h.write(b)
}

// warm opens a first connection if there is none, so a paced run's first
// shots do not wait for a handshake.
func (c *h2client) warm(ctx context.Context) {
	c.mu.Lock()
	n := len(c.conns)
	c.mu.Unlock()
	if n > 0 {
		return
	}
	if h, err := c.conn(ctx); err == nil {
		h.mu.Lock()
		h.reserved--
		h.mu.Unlock()
	}
}

// roundTrip sends r (with extra header lines) and waits for it.
func (c *h2client) roundTrip(ctx context.Context, e *Engine, r *results.Result, v Variation) {
	done := make(chan struct{})
	c.send(ctx, e, r, v, func() { close(done) })
	<-done // ctx's end settles it too (watchRun)
}
