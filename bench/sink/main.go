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
// clock as nanoseconds since the sink started.
//
// Arrivals are read over a separate control port (-ctl), so control traffic
// never pollutes the counts:
//
//	GET  /arrivals  JSON array of arrival offsets in ns, in recording order
//	GET  /info      {"start":"<RFC3339Nano wall time of offset 0>","count":N,"dropped":N,"conns":N}
//	POST /reset     forget all arrivals (call it while no load is running)
//
// Recording is lock-free: one atomic add claims a slot in a slice
// preallocated to -max entries; arrivals past -max are counted as dropped.
package main

import (
	"bufio"
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
	n        atomic.Int64 // slots claimed since the last reset (may exceed len)
	conns    atomic.Int64 // connections accepted since the last reset
}

func (r *recorder) record(ns int64) {
	i := r.n.Add(1) - 1
	if i < int64(len(r.arrivals)) {
		atomic.StoreInt64(&r.arrivals[i], ns)
	}
}

func (r *recorder) count() (kept, dropped int64) {
	n := r.n.Load()
	if m := int64(len(r.arrivals)); n > m {
		return m, n - m
	}
	return n, 0
}

// serve answers one connection until the peer closes it.
func (r *recorder) serve(c net.Conn) {
	defer c.Close()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	buf := make([]byte, 32<<10)
	w := bufio.NewWriterSize(c, 16<<10)
	// m counts how much of "\r\n\r\n" the bytes read so far end with;
	// it carries across reads so a terminator split between two reads is
	// still found.
	m := 0
	for {
		nr, err := c.Read(buf)
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
						r.record(now)
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

func (r *recorder) control() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /arrivals", func(w http.ResponseWriter, _ *http.Request) {
		kept, _ := r.count()
		out := make([]byte, 0, kept*12+2)
		out = append(out, '[')
		for i := int64(0); i < kept; i++ {
			if i > 0 {
				out = append(out, ',')
			}
			out = strconv.AppendInt(out, atomic.LoadInt64(&r.arrivals[i]), 10)
		}
		out = append(out, ']', '\n')
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
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
	flag.Parse()
	if *maxArr < 0 {
		fmt.Fprintln(os.Stderr, "sink: -max must be >= 0")
		os.Exit(2)
	}

	r := &recorder{arrivals: make([]int64, *maxArr)}
	// Touch the slice so page faults don't land in the measured runs.
	for i := range r.arrivals {
		r.arrivals[i] = 0
	}

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
	r.start = time.Now()
	fmt.Printf("listening on http://%s/\ncontrol on http://%s/\n", ln.Addr(), cl.Addr())

	go func() {
		srv := &http.Server{Handler: r.control(), ReadHeaderTimeout: 10 * time.Second}
		if err := srv.Serve(cl); err != nil {
			fmt.Fprintln(os.Stderr, "sink: control:", err)
		}
	}()
	go func() {
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
			go r.serve(c)
		}
	}()

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	ln.Close()
	kept, dropped := r.count()
	fmt.Fprintf(os.Stderr, "sink: exiting; %d arrivals recorded, %d dropped\n", kept, dropped)
}
