// Command sink is a minimal HTTP/1.1 keep-alive server used by bench/run.sh
// to compare load generators. It answers every request with a fixed
// "200 ok" and records when each request arrived, so the benchmark can judge
// the generators by what the server saw rather than by their own reports.
//
// The data port (-addr) speaks nothing but the fixed response: it parses a
// request only far enough to find the end of its headers ("\r\n\r\n"),
// handles pipelined bytes, and assumes requests carry no body (the benchmark
// only sends GETs). The arrival instant of a request is the moment the read
// that delivered its final header byte returned, measured with the monotonic
// clock as nanoseconds since the sink started. On Linux every request also
// gets the kernel's receive timestamp of that byte (SO_TIMESTAMPNS): when it
// reached this host's TCP stack, before the sink was scheduled to read it.
// The two differ by the sink's own wake-up and response work, which for a
// burst of 100 on 2 shared cores is most of a millisecond.
//
// Arrivals are read over a separate control port (-ctl), so control traffic
// never pollutes the counts:
//
//	GET  /arrivals  JSON array of arrival offsets in ns, in recording order
//	GET  /kernel-arrivals  the same requests' kernel receive stamps, ns
//	                since the wall reading of the sink's start (requests
//	                without one are left out)
//	GET  /info      {"start":"<RFC3339Nano wall time of offset 0>","count":N,"dropped":N,"conns":N}
//	POST /reset     forget all arrivals (call it while no load is running)
//
// With -tls-addr the sink also serves https (HTTP/1.1 over TLS, a P-256
// certificate for 127.0.0.1 generated at start, written to -tls-cert-out for
// clients to trust); kernel stamps are taken on the TCP socket below TLS.
//
// Recording is lock-free: one atomic add claims a slot in a slice
// preallocated to -max entries; arrivals past -max are counted as dropped.
package main

import (
	"bufio"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

var response = []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

type recorder struct {
	start    time.Time // monotonic zero; its wall reading is reported in /info
	arrivals []int64
	// kernel[i] is arrival i's kernel receive timestamp (SO_TIMESTAMPNS),
	// as ns since start's wall reading; 0 when the kernel gave none.
	kernel []int64
	n      atomic.Int64 // slots claimed since the last reset (may exceed len)
	conns  atomic.Int64 // connections accepted since the last reset
}

func (r *recorder) record(ns, kernelNs int64) {
	i := r.n.Add(1) - 1
	if i < int64(len(r.arrivals)) {
		atomic.StoreInt64(&r.arrivals[i], ns)
		atomic.StoreInt64(&r.kernel[i], kernelNs)
	}
}

func (r *recorder) count() (kept, dropped int64) {
	n := r.n.Load()
	if m := int64(len(r.arrivals)); n > m {
		return m, n - m
	}
	return n, 0
}

// readFunc reads a connection's next bytes and the kernel receive stamp of
// the last of them (Unix ns; 0 when there is none).
type readFunc func(buf []byte) (n int, kernelUnixNs int64, err error)

// serve answers one plain connection until the peer closes it.
func (r *recorder) serve(c net.Conn) {
	defer c.Close()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	read := func(buf []byte) (int, int64, error) { n, err := c.Read(buf); return n, 0, err }
	if sr := newStampedReader(c); sr != nil {
		read = sr.read
	}
	r.answer(c, read)
}

// serveTLS answers one TLS connection until the peer closes it. The kernel
// stamps still come from the TCP socket below TLS: a request's stamp is
// that of the last segment read before TLS handed over its final byte (for
// a request whose final byte travels in a record of its own, as ratecheck's
// bursts send it, exactly that record's arrival).
func (r *recorder) serveTLS(c net.Conn, conf *tls.Config) {
	defer c.Close()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	sc := &stampedConn{Conn: c, sr: newStampedReader(c)}
	tc := tls.Server(sc, conf)
	r.answer(tc, func(buf []byte) (int, int64, error) {
		n, err := tc.Read(buf)
		return n, sc.last, err
	})
}

// stampedConn is a TCP connection read with kernel receive stamps, for TLS
// to read through; last is the latest read's stamp.
type stampedConn struct {
	net.Conn
	sr   *stampedReader // nil where stamps are unavailable
	last int64
}

func (s *stampedConn) Read(b []byte) (int, error) {
	if s.sr == nil {
		return s.Conn.Read(b)
	}
	n, ns, err := s.sr.read(b)
	if ns != 0 {
		s.last = ns
	}
	return n, err
}

// answer reads requests from c with read and answers each.
func (r *recorder) answer(c net.Conn, read readFunc) {
	buf := make([]byte, 32<<10)
	w := bufio.NewWriterSize(c, 16<<10)
	// m counts how much of "\r\n\r\n" the bytes read so far end with;
	// it carries across reads so a terminator split between two reads is
	// still found.
	m := 0
	wallStart := r.start.UnixNano()
	for {
		nr, kernelNs, err := read(buf)
		if kernelNs != 0 {
			kernelNs -= wallStart
		}
		if nr > 0 {
			now := int64(time.Since(r.start))
			done := 0
			for _, b := range buf[:nr] {
				switch {
				case b == '\r':
					if m == 0 || m == 2 {
						m++
					} else {
						m = 1
					}
				case b == '\n' && (m == 1 || m == 3):
					m++
					if m == 4 {
						m = 0
						done++
						r.record(now, kernelNs)
					}
				default:
					m = 0
				}
			}
			for ; done > 0; done-- {
				if _, err := w.Write(response); err != nil {
					return
				}
			}
			if w.Buffered() > 0 {
				if err := w.Flush(); err != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// writeList answers with a JSON array of src's recorded entries, without
// the zeros when skipZero.
func (r *recorder) writeList(w http.ResponseWriter, src []int64, skipZero bool) {
	kept, _ := r.count()
	out := make([]byte, 0, kept*12+2)
	out = append(out, '[')
	for i := int64(0); i < kept; i++ {
		v := atomic.LoadInt64(&src[i])
		if v == 0 && skipZero {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = strconv.AppendInt(out, v, 10)
	}
	out = append(out, ']', '\n')
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

func (r *recorder) control() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /arrivals", func(w http.ResponseWriter, _ *http.Request) { r.writeList(w, r.arrivals, false) })
	// Requests the kernel did not stamp are left out; the count shows it.
	mux.HandleFunc("GET /kernel-arrivals", func(w http.ResponseWriter, _ *http.Request) { r.writeList(w, r.kernel, true) })
	mux.HandleFunc("GET /info", func(w http.ResponseWriter, _ *http.Request) {
		kept, dropped := r.count()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"start\":%q,\"count\":%d,\"dropped\":%d,\"conns\":%d}\n",
			r.start.Format(time.RFC3339Nano), kept, dropped, r.conns.Load())
	})
	mux.HandleFunc("POST /reset", func(w http.ResponseWriter, _ *http.Request) {
		r.n.Store(0)
		r.conns.Store(0)
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "data listen address")
	ctl := flag.String("ctl", "127.0.0.1:0", "control listen address (GET /arrivals, GET /info, POST /reset)")
	maxArr := flag.Int("max", 2_000_000, "arrivals kept; later ones are only counted as dropped")
	tlsAddr := flag.String("tls-addr", "", "also serve https on this address (a certificate for 127.0.0.1 made at start); empty: no TLS")
	certOut := flag.String("tls-cert-out", "", "with -tls-addr: write the certificate (PEM, its own CA) here for clients to trust")
	flag.Parse()
	if *maxArr < 0 {
		fmt.Fprintln(os.Stderr, "sink: -max must be >= 0")
		os.Exit(2)
	}

	r := &recorder{arrivals: make([]int64, *maxArr), kernel: make([]int64, *maxArr)}
	// Touch the slices so page faults don't land in the measured runs.
	for i := range r.arrivals {
		r.arrivals[i], r.kernel[i] = 0, 0
	}

	keepTimestampsOn()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sink:", err)
		os.Exit(1)
	}
	cl, err := net.Listen("tcp", *ctl)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sink:", err)
		os.Exit(1)
	}
	var tln net.Listener
	var tlsConf *tls.Config
	if *tlsAddr != "" {
		if tlsConf, err = selfSigned(*certOut); err != nil {
			fmt.Fprintln(os.Stderr, "sink: TLS:", err)
			os.Exit(1)
		}
		if tln, err = net.Listen("tcp", *tlsAddr); err != nil {
			fmt.Fprintln(os.Stderr, "sink:", err)
			os.Exit(1)
		}
	}
	r.start = time.Now()
	fmt.Printf("listening on http://%s/\ncontrol on http://%s/\n", ln.Addr(), cl.Addr())
	if tln != nil {
		fmt.Printf("listening on https://%s/\n", tln.Addr())
		go r.accept(tln, func(c net.Conn) { r.serveTLS(c, tlsConf) })
	}

	go func() {
		srv := &http.Server{Handler: r.control(), ReadHeaderTimeout: 10 * time.Second}
		if err := srv.Serve(cl); err != nil {
			fmt.Fprintln(os.Stderr, "sink: control:", err)
		}
	}()
	go r.accept(ln, r.serve)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	ln.Close()
	if tln != nil {
		tln.Close()
	}
	kept, dropped := r.count()
	fmt.Fprintf(os.Stderr, "sink: exiting; %d arrivals recorded, %d dropped\n", kept, dropped)
}

// accept hands every connection of ln to serve, on a goroutine of its own.
func (r *recorder) accept(ln net.Listener, serve func(net.Conn)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			// EMFILE and friends: back off briefly rather than spin.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		r.conns.Add(1)
		go serve(c)
	}
}
