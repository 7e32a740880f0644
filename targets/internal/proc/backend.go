package proc

import (
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"
)

// Backend answers 200 "ok\n" to every request on 127.0.0.1. A runner makes
// the server forward to it so that the response comes from a real backend,
// after the server's limiting has run, and no request leaves the machine.
type Backend struct {
	Addr string // 127.0.0.1:PORT
	srv  *http.Server
	once sync.Once
}

// StartBackend starts a Backend on a free loopback port.
func StartBackend() (*Backend, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &Backend{Addr: ln.Addr().String()}
	b.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Content-Length", "3")
			io.WriteString(w, "ok\n")
		}),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go b.srv.Serve(ln)
	return b, nil
}

// Close stops the backend; it is safe to call more than once.
func (b *Backend) Close() { b.once.Do(func() { b.srv.Close() }) }
