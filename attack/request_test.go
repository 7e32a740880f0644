package attack

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// seenServer records the Host, query and User-Agent of every request it
// answers.
type seenServer struct {
	mu                sync.Mutex
	hosts, qs, agents []string
}

func (s *seenServer) start(t *testing.T, https bool) string {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hosts, s.qs, s.agents = append(s.hosts, r.Host), append(s.qs, r.URL.Query().Get("q")), append(s.agents, strings.Join(r.Header.Values("User-Agent"), "|"))
		s.mu.Unlock()
	})
	var srv *httptest.Server
	if https {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	return srv.URL
}

// A Host header the user gives is the one sent, over http as over https
// (a gateway that routes on it would otherwise see the wrong virtual host);
// so is a User-Agent, once.
func TestUserHostAndUserAgentHeaders(t *testing.T) {
	for _, https := range []bool{false, true} {
		var s seenServer
		url := s.start(t, https)
		req, err := NewRequest("GET", url+"/x", []string{"Host: api.staging.example", "User-Agent: my-gate/1"}, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []Profile{Steady{Rate: 50, Duration: 40 * time.Millisecond}, Burst{K: 2}} {
			s.mu.Lock()
			s.hosts, s.agents = nil, nil
			s.mu.Unlock()
			runRequest(t, req, p, Options{TLS: TLSOptions{Insecure: true}})
			s.mu.Lock()
			if len(s.hosts) != 2 {
				t.Fatalf("https=%v %s: server saw %d requests", https, p.Name(), len(s.hosts))
			}
			for i := range s.hosts {
				if s.hosts[i] != "api.staging.example" || s.agents[i] != "my-gate/1" {
					t.Fatalf("https=%v %s: server saw Host %q, User-Agent %q", https, p.Name(), s.hosts[i], s.agents[i])
				}
			}
			s.mu.Unlock()
		}
	}
}

// A query typed with spaces (and other bytes a request line may not hold)
// goes out percent-encoded: a well-formed request line, and the server
// decodes the value the user typed. What was already encoded stays so.
func TestQueryEscapedOnTheRequestLine(t *testing.T) {
	req, err := NewRequest("GET", `http://127.0.0.1:1/p a?q=a b"<>|&r=%41~`, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(req.wire("", Variation{})), "\r\n")
	if want := "GET /p%20a?q=a%20b%22%3C%3E%7C&r=%41~ HTTP/1.1"; line != want {
		t.Fatalf("request line %q, want %q", line, want)
	}

	var s seenServer
	url := s.start(t, false)
	req, err = NewRequest("GET", url+"/?q=two words", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	rep := runRequest(t, req, Steady{Rate: 50, Duration: 20 * time.Millisecond}, Options{})
	if rep.Summary.Admitted != 1 || len(s.qs) != 1 || s.qs[0] != "two words" {
		t.Fatalf("summary %+v, server saw q=%q", rep.Summary, s.qs)
	}
}

// runRequest runs p with req (runAgainst builds a plain GET).
func runRequest(t *testing.T, req *Request, p Profile, opt Options) results.Report {
	t.Helper()
	col := NewCollector(true)
	e := New(req, opt, col.Add)
	ctx := e.Begin(t.Context())
	rep, err := p.Run(ctx, e, col)
	e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A shot's variation reaches the server as sent, over HTTP/1.1 through Do:
// its method and raw request-target, its header lines replacing the
// request's own of that name (one User-Agent, not two), the headers it
// drops left out. A HEAD's response has no content, whatever its
// Content-Length says: the connection serves the next request at once.
func TestShotVariationReachesTheServer(t *testing.T) {
	type seen struct{ method, uri, agent, cookie, client string }
	got := make(chan seen, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Method, r.RequestURI, strings.Join(r.Header.Values("User-Agent"), "|"), r.Header.Get("Cookie"), r.Header.Get("True-Client-IP")}
		w.Header().Set("Content-Length", "5")
		_, _ = w.Write([]byte("hello"))
	}))
	defer srv.Close()
	req, err := NewRequest("GET", srv.URL+"/api?page=1", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Cookie", "session=1")
	e := New(req, Options{Timeout: 2 * time.Second})
	ctx := e.Begin(context.Background())
	defer e.Finish()
	for _, c := range []struct {
		shot Shot
		want seen
	}{
		{Shot{Method: "HEAD"}, seen{"HEAD", "/api?page=1", "ratecheck", "session=1", ""}},
		{Shot{Target: "//api?page=1&ratecheck=2", Extra: []string{"User-Agent: other", "True-Client-IP: 203.0.113.2"}, Drop: []string{"Cookie"}},
			seen{"GET", "//api?page=1&ratecheck=2", "other", "", "203.0.113.2"}},
		{Shot{}, seen{"GET", "/api?page=1", "ratecheck", "session=1", ""}},
	} {
		r, ok := e.Do(ctx, c.shot)
		if !ok || r.Error != "" || r.Status != 200 {
			t.Fatalf("%+v: %+v", c.shot, r)
		}
		if s := <-got; s != c.want {
			t.Errorf("%+v: the server saw %+v, want %+v", c.shot, s, c.want)
		}
	}
}

func TestValidMethods(t *testing.T) {
	if !ValidMethods([]string{"POST", "PUT"}) || !ValidMethods(nil) {
		t.Error("capital tokens refused")
	}
	for _, bad := range [][]string{{""}, {"post"}, {"PO ST"}, {"GET", "X-1"}} {
		if ValidMethods(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}
