package fleet

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ratecheck/ratecheck/internal/testenv"
)

func TestParse(t *testing.T) {
	s, err := Parse("builtin:fleet?replicas=4&algo=fixed_window&limit=5&window=1s&headers=x-ratelimit")
	if err != nil || s.Replicas != 4 || s.Store != StoreLocal || s.Server.Limiter.Limit != 5 || s.Server.Headers != "x-ratelimit" {
		t.Fatalf("%+v %v", s, err)
	}
	for spec, want := range map[string]string{
		"builtin:fleet?replicas=0&algo=token_bucket":                           "replicas \"0\"",
		"builtin:fleet?algo=token_bucket&store=memcached":                      "store \"memcached\": use local, redis, redis-naive",
		"builtin:fleet?replicas=3":                                             "algo=",
		"builtin:fleet?algo=fixed_window&store=redis":                          "store=redis keeps a token bucket",
		"builtin:fleet?algo=token_bucket&rate=fast":                            "rate",
		"builtin:fleet?algo=token_bucket&redis=nohost":                         "HOST:PORT",
		"builtin:fleet?algo=token_bucket&fault=store-down-after=2s":            "needs a shared store",
		"builtin:fleet?algo=token_bucket&store=redis&fault=store-down-after=x": "positive duration",
		"builtin:fleetx": "not a fleet target",
	} {
		if _, err := Parse(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
}

// burst sends n requests at once and returns the statuses and the
// X-RateLimit-Remaining of the admitted ones.
func burst(t *testing.T, url string, n int) (admitted int, remaining map[string]int) {
	t.Helper()
	var mu sync.Mutex
	remaining = map[string]int{}
	var wg sync.WaitGroup
	tr := &http.Transport{MaxIdleConnsPerHost: n}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			resp, err := c.Get(url)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			if resp.StatusCode == 200 {
				admitted++
				remaining[resp.Header.Get("X-RateLimit-Remaining")]++
			}
		}()
	}
	close(start)
	wg.Wait()
	return admitted, remaining
}

// Local replicas each count alone: three buckets of 20 admit 60, and each
// Remaining value is seen three times. (1/m refills nothing within the test.)
func TestLocalReplicasCountAlone(t *testing.T) {
	f, err := Start(context.Background(), "builtin:fleet?replicas=3&algo=token_bucket&rate=1/m&burst=20&store=local")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	admitted, rem := burst(t, f.URL, 100)
	if admitted != 60 {
		t.Fatalf("admitted %d, want 60", admitted)
	}
	for v, n := range rem {
		if n != 3 {
			t.Fatalf("Remaining %s seen %d times, want 3 (%v)", v, n, rem)
		}
	}
}

// A shared Redis counter updated by the Lua script admits exactly the
// limit of a burst; read-then-write admits more; Close leaves no
// redis-server running.
func TestRedisStores(t *testing.T) {
	testenv.Need(t, "redis-server")
	f, err := Start(context.Background(), "builtin:fleet?replicas=3&algo=token_bucket&rate=1/m&burst=20&store=redis")
	if err != nil {
		t.Fatal(err)
	}
	pid := f.RedisPid()
	admitted, rem := burst(t, f.URL, 100)
	f.Close()
	if admitted != 20 || len(rem) != 20 {
		t.Errorf("atomic store: admitted %d with %d distinct Remaining values, want 20 and 20", admitted, len(rem))
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("redis-server %d still running after Close (%v)", pid, err)
	}

	f, err = Start(context.Background(), "builtin:fleet?replicas=3&algo=token_bucket&rate=1/m&burst=20&store=redis-naive")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if admitted, _ := burst(t, f.URL, 200); admitted <= 20 {
		t.Errorf("naive store: %d admitted of a burst of 200, want more than the limit of 20", admitted)
	}
}
