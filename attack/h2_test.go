package attack

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// h2Server serves over TLS with HTTP/2 and records each request's protocol,
// Host and key header; maxStreams bounds its concurrent streams.
type h2Server struct {
	mu     sync.Mutex
	protos []string
	hosts  []string
	keys   []string
	conns  atomic.Int64
	url    string
}

func startH2(t *testing.T, maxStreams int, handler func(w http.ResponseWriter, r *http.Request)) *h2Server {
	t.Helper()
	s := &h2Server{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.protos, s.hosts, s.keys = append(s.protos, r.Proto), append(s.hosts, r.Host), append(s.keys, r.Header.Get("X-Key"))
		s.mu.Unlock()
		if handler != nil {
			handler(w, r)
		}
	}))
	srv.EnableHTTP2 = true
	srv.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: maxStreams}
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// With HTTP2, paced requests and a burst go out as HTTP/2 streams: the
// server sees HTTP/2.0, the Host and key headers, and answers all; a 429's
// headers and body are recorded.
func TestHTTP2PacedAndBurst(t *testing.T) {
	s := startH2(t, 250, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("deny") != "" {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(429)
			_, _ = w.Write([]byte("slow down"))
		}
	})
	opt := Options{HTTP2: true, TLS: TLSOptions{Insecure: true}, Keys: 3}
	req, err := NewRequest("GET", s.url+"/x", []string{"Host: api.example"}, "")
	if err != nil {
		t.Fatal(err)
	}
	req.KeyHeader = "X-Key"
	for _, p := range []Profile{Steady{Rate: 200, Duration: 100 * time.Millisecond}, Burst{K: 100}} {
		rep := runRequest(t, req, p, opt)
		if rep.Summary.Admitted != rep.Summary.Requests || rep.Summary.Requests < 20 {
			t.Fatalf("%s: %+v", p.Name(), rep.Summary)
		}
	}
	s.mu.Lock()
	for i := range s.protos {
		if s.protos[i] != "HTTP/2.0" || s.hosts[i] != "api.example" || !strings.HasPrefix(s.keys[i], "key-") {
			t.Fatalf("request %d: %s, Host %q, key %q", i, s.protos[i], s.hosts[i], s.keys[i])
		}
	}
	s.mu.Unlock()

	deny, err := NewRequest("GET", s.url+"/?deny=1", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	col := NewCollector(true)
	e := New(deny, opt, col.Add)
	ctx := e.Begin(t.Context())
	r, _ := e.Do(ctx, Shot{})
	e.Finish()
	if r.Status != 429 || r.Headers["retry-after"] != "3" || r.Body != "slow down" || r.Error != "" {
		t.Fatalf("429: %+v", r)
	}
}

// A burst larger than the server's SETTINGS_MAX_CONCURRENT_STREAMS is spread
// over enough connections, opened before the instant: every request is
// answered, none refused.
func TestHTTP2BurstRespectsMaxConcurrentStreams(t *testing.T) {
	s := startH2(t, 10, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond) // hold the streams open past the burst
	})
	rep, _, _ := runAgainst(t, s.url, Burst{K: 35}, Options{HTTP2: true, TLS: TLSOptions{Insecure: true}})
	if rep.Summary.Admitted != 35 {
		t.Fatalf("summary %+v", rep.Summary)
	}
	if n := s.conns.Load(); n != 4 {
		t.Fatalf("%d connections for 35 streams at 10 per connection", n)
	}
}

// HTTP/2 to a server that does not offer it, or over plain http: a clear
// error on every request.
func TestHTTP2Refusals(t *testing.T) {
	pki := newTestPKI(t)
	url := startTLS(t, pki.serverConfig(false)) // HTTP/1.1 only
	rep, _, _ := runAgainst(t, url, Steady{Rate: 50, Duration: 40 * time.Millisecond}, Options{HTTP2: true, TLS: TLSOptions{CACertFile: pki.caFile}})
	if msg := onlyError(t, rep, 2); !strings.Contains(msg, "HTTP/2") {
		t.Fatalf("no h2: %q", msg)
	}
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer plain.Close()
	rep, _, _ = runAgainst(t, plain.URL, Steady{Rate: 50, Duration: 40 * time.Millisecond}, Options{HTTP2: true})
	if msg := onlyError(t, rep, 2); !strings.Contains(msg, "https") {
		t.Fatalf("plain http: %q", msg)
	}
}

// Ctrl-C while HTTP/2 requests wait for a server that does not answer:
// they end at once as canceled, not at the timeout.
func TestHTTP2CanceledMidFlight(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	s := startH2(t, 100, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
	req, err := NewRequest("GET", s.url, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	col := NewCollector(true)
	e := New(req, Options{HTTP2: true, TLS: TLSOptions{Insecure: true}, Timeout: 30 * time.Second}, col.Add)
	parent, cancel := context.WithCancel(context.Background())
	ctx := e.Begin(parent)
	time.AfterFunc(100*time.Millisecond, cancel)
	began := time.Now()
	e.Schedule(ctx, 10, func(i int) Shot { return Shot{At: time.Duration(i) * 5 * time.Millisecond} })
	e.Wait()
	e.Finish()
	if took := time.Since(began); took > 5*time.Second {
		t.Fatalf("canceled run took %s", took)
	}
	rs := col.Phase("")
	if len(rs) == 0 {
		t.Fatal("no results")
	}
	for _, r := range rs {
		if r.Error != "canceled" {
			t.Fatalf("result %+v, want canceled", r)
		}
	}
}

// An HTTP/2 burst reaches the server's handlers together: the 100 streams
// start within a bound that holds on a loaded 2-core machine (they arrive in
// one write; over net/http they would follow the connection's handshake).
func TestHTTP2BurstArrivesTogether(t *testing.T) {
	var mu sync.Mutex
	var at []time.Time
	s := startH2(t, 250, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
	})
	rep, _, _ := runAgainst(t, s.url, Burst{K: 100, Idle: 200 * time.Millisecond}, Options{HTTP2: true, TLS: TLSOptions{Insecure: true}})
	if rep.Summary.Admitted != 100 {
		t.Fatalf("summary %+v", rep.Summary)
	}
	mu.Lock()
	defer mu.Unlock()
	first, last := at[0], at[0]
	for _, t := range at {
		if t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
	}
	t.Logf("100 HTTP/2 streams started within %s at the server", last.Sub(first))
	if raceDetector {
		return // the bound measures the detector (race_test.go); checked without it
	}
	if last.Sub(first) > 20*time.Millisecond {
		t.Fatalf("streams started over %s", last.Sub(first))
	}
}
