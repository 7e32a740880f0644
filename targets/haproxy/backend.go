package haproxy

import (
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"
)

// backendServer answers 200 "ok\n" to everything: the generated backend
// and every server line of the user's backends forward to it, so the
// response comes from a real backend after the frontend's rules have run,
// and no request leaves the machine.
type backendServer struct {
	srv  *http.Server
	addr string
	once sync.Once
}

func startBackend() (*backendServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &backendServer{addr: ln.Addr().String()}
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

func (b *backendServer) close() { b.once.Do(func() { b.srv.Close() }) }
