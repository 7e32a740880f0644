package attack

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every result names the connection that carried it, and the server agrees:
// two results share a number exactly when the server saw them on the same
// TCP connection (its client address), whichever path sent them —
// sequential requests on a kept-alive connection, a burst's armed
// connections, fresh connections, the pacer's lanes.
func TestResultsNameTheirConnection(t *testing.T) {
	var mu sync.Mutex
	remote := map[string]string{} // key → the server's view of the client
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		remote[r.Header.Get("X-Key")] = r.RemoteAddr
		mu.Unlock()
	}))
	defer srv.Close()
	req, err := NewRequest("GET", srv.URL, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	req.KeyHeader = "X-Key"
	col := NewCollector(true)
	e := New(req, Options{Timeout: 5 * time.Second}, col.Add)
	ctx := e.Begin(context.Background())
	n := 0
	key := func() string { n++; return fmt.Sprint("k", n) }
	for range 3 {
		e.Do(ctx, Shot{Phase: "sequential", Key: key()})
	}
	burst := make([]Shot, 5)
	for i := range burst {
		burst[i] = Shot{Phase: "burst", Key: key()}
	}
	e.Burst(ctx, e.Now()+50*time.Millisecond, burst)
	e.Wait()
	for range 2 {
		e.Do(ctx, Shot{Phase: "fresh", Key: key(), Fresh: true})
	}
	keys := make([]string, 5)
	for i := range keys {
		keys[i] = key()
	}
	start := e.Now() + 10*time.Millisecond
	e.Schedule(ctx, len(keys), func(i int) Shot {
		return Shot{At: start + time.Duration(i)*5*time.Millisecond, Phase: "paced", Key: keys[i]}
	})
	e.Wait()
	e.Finish()
	rs := col.Results()
	if len(rs) != n {
		t.Fatalf("%d results for %d requests", len(rs), n)
	}
	byConn, byRemote := map[int64]string{}, map[string]int64{}
	for _, r := range rs {
		if r.Error != "" || r.Conn == 0 {
			t.Fatalf("result %+v: no connection named", r)
		}
		mu.Lock()
		addr := remote[r.Key]
		mu.Unlock()
		if a, seen := byConn[r.Conn]; seen && a != addr {
			t.Errorf("connection %d: the server saw %s and %s", r.Conn, a, addr)
		}
		if c, seen := byRemote[addr]; seen && c != r.Conn {
			t.Errorf("the server's %s: results say connections %d and %d", addr, c, r.Conn)
		}
		byConn[r.Conn], byRemote[addr] = addr, r.Conn
	}
	// The burst's five went over five connections, the fresh ones each
	// over its own.
	distinct := func(phase string) int {
		seen := map[int64]bool{}
		for _, r := range col.Phase(phase) {
			seen[r.Conn] = true
		}
		return len(seen)
	}
	if distinct("burst") != 5 || distinct("fresh") != 2 || distinct("sequential") != 1 {
		t.Errorf("connections: burst %d, fresh %d, sequential %d", distinct("burst"), distinct("fresh"), distinct("sequential"))
	}
}

// A server that closes each keep-alive connection after one answer, without
// saying so: the next request on it, written by the read of its response
// (rawTCP.sendOnRead: no read first that would find the close), fails on
// the server's reset before any byte and is retried on a fresh connection,
// as when it was written first and read after. Neither request waits for
// its timeout.
func TestClosedKeepAliveRetriedWhenWrittenByTheRead(t *testing.T) {
	addr := rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if line == "\r\n" {
				break
			}
		}
		_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
		c.Close()
	})
	req, err := NewRequest("GET", "http://"+addr+"/", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	e := New(req, Options{Timeout: 5 * time.Second})
	ctx := e.Begin(context.Background())
	defer e.Finish()
	conns := map[int64]bool{}
	for i := range 4 {
		began := time.Now()
		r, ok := e.Do(ctx, Shot{})
		if !ok || r.Status != 200 || r.Error != "" || time.Since(began) > time.Second {
			t.Fatalf("request %d: %+v", i, r)
		}
		conns[r.Conn] = true
		time.Sleep(5 * time.Millisecond) // the server's close arrives first
	}
	if len(conns) != 4 {
		t.Fatalf("%d connections for 4 requests, each closed after its answer", len(conns))
	}
}

// answerServer answers every request with 200 but the n-th, which it
// leaves unanswered.
func answerServer(t *testing.T, unanswered int64) string {
	var served atomic.Int64
	return rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if line == "\r\n" && served.Add(1) != unanswered {
				_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
			}
		}
	})
}

// The deadline a connection keeps between requests (arm) cuts a request
// that gets no answer no earlier than its timeout.
func TestKeptDeadlineCutsNoEarlierThanTheTimeout(t *testing.T) {
	addr := answerServer(t, 2)
	req, err := NewRequest("GET", "http://"+addr+"/", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 2 * time.Second
	e := New(req, Options{Timeout: timeout})
	run := e.Begin(context.Background())
	defer e.Finish()
	first, ok := e.Do(run, Shot{})
	if !ok || first.Status != 200 {
		t.Fatalf("first: %+v", first)
	}
	// Right after, on the deadline the first set: unanswered, it is cut
	// at its timeout and retried once on a fresh connection (a reused one
	// that failed before any byte), where it is answered.
	began := time.Now()
	second, ok := e.Do(run, Shot{})
	waited := time.Since(began)
	if !ok || second.Status != 200 || second.Conn == first.Conn {
		t.Fatalf("second: %+v", second)
	}
	if waited < timeout || waited > timeout+timeout/2 {
		t.Fatalf("the unanswered request was cut after %s, timeout %s", waited, timeout)
	}
}

// A context that ended expired its idle connection: the next request,
// under another context, on the same connection within the deadline kept
// on it, is sent on a deadline of its own (watch forgets the kept one).
func TestKeptDeadlineForgottenWithItsContext(t *testing.T) {
	addr := answerServer(t, 0)
	req, err := NewRequest("GET", "http://"+addr+"/", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	e := New(req, Options{Timeout: time.Minute}) // a deadline kept 60 ms past the timeout
	run := e.Begin(context.Background())
	defer e.Finish()
	ctx, cancel := context.WithCancel(run)
	first, ok := e.Do(ctx, Shot{})
	if !ok || first.Status != 200 {
		t.Fatalf("first: %+v", first)
	}
	cancel() // expires the idle connection
	time.Sleep(10 * time.Millisecond)
	second, ok := e.Do(run, Shot{})
	if !ok || second.Status != 200 || second.Conn != first.Conn {
		t.Fatalf("second, after another context ended: %+v (first on connection %d)", second, first.Conn)
	}
}

// --rate max: each closed loop keeps one connection of its own (loop), and
// every request still carries what Do would send: its key's wire, its own
// sequence number, the connection's number.
func TestSteadyMaxLoopsKeepTheirConnections(t *testing.T) {
	var mu sync.Mutex
	keyOf := map[string]int{} // X-Key → requests the server saw with it
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keyOf[r.Header.Get("X-Key")]++
		mu.Unlock()
	}))
	defer srv.Close()
	req, err := NewRequest("GET", srv.URL, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	req.KeyHeader = "X-Key"
	col := NewCollector(true)
	e := New(req, Options{Keys: 3}, col.Add)
	p := Steady{Conns: 4, Duration: 100 * time.Millisecond}
	e.WarmFor(context.Background(), p)
	if _, err := p.Run(e.Begin(context.Background()), e, col); err != nil {
		t.Fatal(err)
	}
	e.Finish()
	rs := col.Results()
	seqs, conns, keys := map[int]bool{}, map[int64]bool{}, map[string]int{}
	for _, r := range rs {
		if r.Status != 200 || r.Error != "" {
			t.Fatalf("%+v", r)
		}
		seqs[r.Seq], conns[r.Conn] = true, true
		keys[r.Key]++
	}
	if len(rs) < 20 || len(seqs) != len(rs) || !seqs[1] || !seqs[len(rs)] {
		t.Fatalf("%d results, %d distinct sequence numbers", len(rs), len(seqs))
	}
	if len(conns) != 4 {
		t.Fatalf("%d connections for 4 closed loops", len(conns))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 3 || !maps.Equal(keys, keyOf) {
		t.Fatalf("keys sent %v, the server saw %v", keys, keyOf)
	}
}
