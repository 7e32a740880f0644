package attack

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A shot with OtherProtocol goes out in the HTTP version the run does not
// speak, with the shot's variation, and the run's own shots stay in its
// own: an HTTP/1.1 run's goes as HTTP/2 and back, twice on one connection
// (the client is kept for the run), and an HTTP/2 run's as HTTP/1.1.
func TestShotInTheOtherProtocol(t *testing.T) {
	s := startH2(t, 100, nil)
	for _, c := range []struct {
		http2 bool
		want  string // the protocols the server saw: own, other, other, own
	}{
		{false, "[HTTP/1.1 HTTP/2.0 HTTP/2.0 HTTP/1.1]"},
		{true, "[HTTP/2.0 HTTP/1.1 HTTP/1.1 HTTP/2.0]"},
	} {
		s.mu.Lock()
		s.protos, s.keys = nil, nil
		s.mu.Unlock()
		req, err := NewRequest("GET", s.url+"/x", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		e := New(req, Options{HTTP2: c.http2, TLS: TLSOptions{Insecure: true}})
		ctx := e.Begin(t.Context())
		var conns []int64
		for _, shot := range []Shot{{}, {OtherProtocol: true, Extra: []string{"X-Key: other"}}, {OtherProtocol: true}, {}} {
			r, ok := e.Do(ctx, shot)
			if !ok || r.Error != "" || r.Status != 200 {
				t.Fatalf("http2=%v: %+v", c.http2, r)
			}
			conns = append(conns, r.Conn)
		}
		e.Finish()
		s.mu.Lock()
		got, key := fmt.Sprint(s.protos), s.keys[1]
		s.mu.Unlock()
		if got != c.want || key != "other" {
			t.Errorf("http2=%v: server saw %s (key %q), want %s (key \"other\")", c.http2, got, key, c.want)
		}
		if conns[1] != conns[2] || conns[1] == conns[0] || conns[0] != conns[3] {
			t.Errorf("http2=%v: connections %v, want the other protocol's two on one of their own", c.http2, conns)
		}
	}
}

// On a plain-http target there is no other protocol to speak: the shot's
// result says so rather than sending HTTP/1.1 again.
func TestShotInTheOtherProtocolNeedsTLS(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(srv.Close)
	req, err := NewRequest("GET", srv.URL, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	e := New(req, Options{})
	ctx := e.Begin(t.Context())
	r, ok := e.Do(ctx, Shot{OtherProtocol: true})
	e.Finish()
	if !ok || r.Status != 0 || !strings.Contains(r.Error, "HTTP/2 is supported over TLS only") {
		t.Fatalf("result %+v, want an error and no answer", r)
	}
}

// A fresh shot of an HTTP/2 run goes on an HTTP/2 connection of its own,
// as an HTTP/1.1 run's does on its own connection.
func TestFreshShotOfHTTP2Run(t *testing.T) {
	s := startH2(t, 100, nil)
	req, err := NewRequest("GET", s.url+"/x", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	e := New(req, Options{HTTP2: true, TLS: TLSOptions{Insecure: true}})
	ctx := e.Begin(t.Context())
	var conns []int64
	for _, shot := range []Shot{{}, {Fresh: true}, {Fresh: true}, {}} {
		r, ok := e.Do(ctx, shot)
		if !ok || r.Error != "" || r.Status != 200 {
			t.Fatalf("%+v", r)
		}
		conns = append(conns, r.Conn)
	}
	e.Finish()
	if conns[0] != conns[3] || conns[1] == conns[0] || conns[2] == conns[1] || conns[2] == conns[0] {
		t.Errorf("connections %v, want each fresh shot on one of its own", conns)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if fmt.Sprint(s.protos) != "[HTTP/2.0 HTTP/2.0 HTTP/2.0 HTTP/2.0]" {
		t.Errorf("protocols %v", s.protos)
	}
}
