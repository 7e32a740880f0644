package corpus

import (
	"io"
	"log"
	"net"
	"net/http"
	"time"
)

// okHandler is the application behind every library's middleware.
var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, "ok\n")
})

// reject answers a library that decides but has no HTTP layer of its own.
func reject(w http.ResponseWriter) {
	http.Error(w, "rate limited", http.StatusTooManyRequests)
}

// serve runs h on 127.0.0.1:<free port> until the returned stop is called.
func serve(h http.Handler) (url string, stop func() error, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/", srv.Close, nil
}
