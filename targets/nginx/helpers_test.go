//go:build unix

package nginx

import (
	"context"
	"errors"
	"github.com/ratecheck/ratecheck/internal/testenv"
	"io"
	"net/http"
	"net/http/httptrace"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// needNginx skips the test when nginx is not installed. CI installs it with
// scripts/install-nginx.sh.
func needNginx(t *testing.T) { testenv.NeedNginx(t) }

// startNginx starts a config and registers a cleanup that stops it and
// checks that nothing is left.
func startNginx(t *testing.T, conf string, opt Options) *Instance {
	t.Helper()
	needNginx(t)
	inst, err := Start(context.Background(), conf, opt)
	return testenv.Started(t, conf, inst, err, assertGone)
}

func readyURL(inst *Instance) string { return strings.TrimSuffix(inst.URL, "/") + ReadyPath }

// assertGone checks that no process of the instance's group is left and, unless
// Keep, that its directory is gone.
func assertGone(t testing.TB, inst *Instance) {
	t.Helper()
	testenv.AssertStopped(t, inst.Pid, inst.Dir, inst.opt.Keep)
}

// shot is one request of a volley. Times are measured from the instant the
// volley was released.
type shot struct {
	status int
	body   string
	ctype  string
	wrote  time.Duration // request fully written
	done   time.Duration // response fully read: the latency seen by a client released at t0
	reused bool
	err    error
}

// volley opens n keep-alive connections to the instance, warming each with a
// request to ReadyPath (never limited, so the zone stays fresh), then releases
// n GETs of path at one instant, one per connection, and waits for all.
func volley(t *testing.T, inst *Instance, path string, n int) []shot {
	t.Helper()
	tr := &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        2 * n,
		MaxIdleConnsPerHost: 2 * n,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	warm(t, client, readyURL(inst), n)

	url := strings.TrimSuffix(inst.URL, "/") + path
	start := make(chan struct{})
	var armed, wg sync.WaitGroup
	shots := make([]shot, n)
	var t0 time.Time
	for k := range shots {
		armed.Add(1)
		wg.Add(1)
		go func(s *shot) {
			defer wg.Done()
			var wrote time.Time
			trace := &httptrace.ClientTrace{
				GotConn:      func(i httptrace.GotConnInfo) { s.reused = i.Reused },
				WroteRequest: func(httptrace.WroteRequestInfo) { wrote = time.Now() },
			}
			req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, url, nil)
			armed.Done()
			if err != nil {
				s.err = err
				return
			}
			<-start
			resp, err := client.Do(req)
			if err != nil {
				s.err = err
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			s.done = time.Since(t0)
			s.wrote = wrote.Sub(t0)
			s.status, s.body, s.ctype, s.err = resp.StatusCode, string(b), resp.Header.Get("Content-Type"), err
		}(&shots[k])
	}
	armed.Wait()
	t0 = time.Now()
	close(start)
	wg.Wait()
	for k, s := range shots {
		if s.err != nil {
			t.Fatalf("request %d: %v", k, s.err)
		}
		if !s.reused {
			t.Logf("request %d did not reuse a warmed connection", k)
		}
	}
	return shots
}

// warm makes the transport hold n idle connections: every request blocks in
// GotConn until all n hold a connection, so n distinct connections are dialed.
func warm(t *testing.T, client *http.Client, url string, n int) {
	t.Helper()
	var arrived sync.WaitGroup
	arrived.Add(n)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	errs := make(chan error, n)
	for range n {
		go func() {
			timeout := time.NewTimer(10 * time.Second)
			defer timeout.Stop()
			var stuck bool
			trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) {
				arrived.Done()
				select {
				case <-all:
				case <-timeout.C:
					stuck = true
				}
			}}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, url, nil)
			resp, err := client.Do(req)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusNoContent {
					err = errors.New("warm-up: " + resp.Status + " from " + url)
				}
			}
			if err == nil && stuck {
				err = errors.New("warm-up: connections were not all dialed within 10s")
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// tally counts statuses and returns the admitted (200) shots sorted by done.
func tally(shots []shot) (counts map[int]int, admitted []shot) {
	counts = map[int]int{}
	for _, s := range shots {
		counts[s.status]++
		if s.status == http.StatusOK {
			admitted = append(admitted, s)
		}
	}
	sort.Slice(admitted, func(a, b int) bool { return admitted[a].done < admitted[b].done })
	return counts, admitted
}

// spread is the time between the first and last request being written.
func spread(shots []shot) time.Duration {
	lo, hi := shots[0].wrote, shots[0].wrote
	for _, s := range shots {
		lo, hi = min(lo, s.wrote), max(hi, s.wrote)
	}
	return hi - lo
}

func dones(shots []shot) []time.Duration {
	out := make([]time.Duration, len(shots))
	for k, s := range shots {
		out[k] = s.done.Round(100 * time.Microsecond)
	}
	return out
}
