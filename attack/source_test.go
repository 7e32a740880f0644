package attack

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseSources(t *testing.T) {
	got, err := ParseSources("127.0.0.0/30, 127.0.0.9,127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	want := "[127.0.0.0 127.0.0.1 127.0.0.2 127.0.0.3 127.0.0.9]"
	if fmtAddrs(got) != want {
		t.Fatalf("got %v, want %s", got, want)
	}
	for _, bad := range []string{"", "127.0.0.300", "127.0.0.0/33", "10.0.0.0/8", "localhost", ","} {
		if _, err := ParseSources(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func fmtAddrs[T interface{ String() string }](as []T) string {
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = a.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// peerServer answers 200 and records the peer address of every request.
func peerServer(t *testing.T) (url string, peers func() map[string]int) {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		mu.Lock()
		seen[host]++
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int{}
		for k, v := range seen {
			out[k] = v
		}
		return out
	}
}

// The acceptance: storm and backoff clients with 127.0.0.0/28 each
// use their own address, as the server sees it and as the results stream
// records it.
func TestClientsBindTheirOwnSource(t *testing.T) {
	srcs, err := ParseSources("127.0.0.0/28")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Clients{{N: 16, Goal: 3}, {N: 16, Goal: 3, Backoff: true, Base: time.Millisecond}} {
		url, peers := peerServer(t)
		_, col, path := runAgainst(t, url, p, Options{Sources: srcs})
		byClient := map[int]string{}
		for _, r := range col.Results() {
			want := srcs[r.Client-1].String()
			if r.Source != want {
				t.Fatalf("%s client %d: source %q, want %s", p.Name(), r.Client, r.Source, want)
			}
			byClient[r.Client] = r.Source
		}
		if len(byClient) != 16 {
			t.Fatalf("%s: %d clients answered", p.Name(), len(byClient))
		}
		seen := peers()
		for _, a := range srcs {
			if seen[a.String()] != 3 {
				t.Fatalf("%s: the server saw %v, want 3 requests from each of %v", p.Name(), seen, srcs)
			}
		}
		// The stream records the address per request.
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var rec struct {
				Client int    `json:"client"`
				Source string `json:"source"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Client > 0 {
				if rec.Source != srcs[rec.Client-1].String() {
					t.Fatalf("stream: client %d source %q", rec.Client, rec.Source)
				}
				n++
			}
		}
		f.Close()
		if n != 48 {
			t.Fatalf("%s: %d client results in the stream, want 48", p.Name(), n)
		}
	}
}

// Connections of a paced run and of a burst take the sources in turn; a
// shot naming its source binds that one.
func TestConnectionsRotateSources(t *testing.T) {
	srcs, _ := ParseSources("127.0.0.2,127.0.0.3")
	url, peers := peerServer(t)
	_, col, _ := runAgainst(t, url, Burst{K: 10}, Options{Sources: srcs})
	bySource := map[string]int{}
	for _, r := range col.Results() {
		bySource[r.Source]++
	}
	if bySource["127.0.0.2"] != 5 || bySource["127.0.0.3"] != 5 {
		t.Fatalf("burst results by source %v, want 5 each", bySource)
	}
	if seen := peers(); seen["127.0.0.2"] != 5 || seen["127.0.0.3"] != 5 {
		t.Fatalf("server saw %v", seen)
	}

	url, peers = peerServer(t)
	req, _ := NewRequest("GET", url, nil, "")
	e := New(req, Options{Sources: srcs})
	ctx := e.Begin(t.Context())
	own, _ := ParseSources("127.0.0.7")
	r, ok := e.Do(ctx, Shot{Source: own[0], Extra: []string{"X-Forwarded-For: 203.0.113.9"}})
	e.Finish()
	if !ok || r.Source != "127.0.0.7" || r.Status != 200 {
		t.Fatalf("own source: %+v", r)
	}
	if seen := peers(); seen["127.0.0.7"] != 1 {
		t.Fatalf("server saw %v", seen)
	}
}

// A source this machine cannot bind is refused before anything is sent,
// naming the address.
func TestLocalSources(t *testing.T) {
	if got, err := LocalSources("127.0.0.1"); err != nil || len(got) != 1 {
		t.Errorf("loopback: %v, %v", got, err)
	}
	_, err := LocalSources("192.0.2.77")
	if err == nil || !strings.Contains(err.Error(), "192.0.2.77 is not an address of this machine") {
		t.Errorf("a documentation address: %v", err)
	}
	if _, err := LocalSources("nope"); err == nil || !strings.Contains(err.Error(), "is not an IP address") {
		t.Errorf("not an address: %v", err)
	}
}
