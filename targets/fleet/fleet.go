// Package fleet runs a fleet of reference servers behind one port:
// `builtin:fleet?replicas=3&algo=token_bucket&rate=10/s&burst=20&store=local`.
// A round-robin front hands each request to the next replica; the store
// says where the replicas count: each alone (local), in one Redis counter
// updated atomically by a Lua script (redis), or in one Redis counter read
// and then written (redis-naive, racy under a burst). The replicas are
// refserver handlers in this process — the same contract as builtin: —
// and the Redis is a real redis-server, started on a free loopback port
// without persistence when no redis=ADDR is given, and stopped by Close.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratecheck/ratecheck/targets/limiter"
	"github.com/ratecheck/ratecheck/targets/refserver"
)

// Prefix starts a fleet target.
const Prefix = refserver.BuiltinPrefix + "fleet"

// MaxReplicas bounds replicas=.
const MaxReplicas = 64

// Spec is a fleet target read from its builtin: string.
type Spec struct {
	Replicas int
	Store    string
	Redis    string // HOST:PORT of a running Redis; "" starts one
	// StoreFails says what a replica does when the store cannot be
	// reached: "open" (admit) or "closed" (reject).
	StoreFails string
	// StoreDownAfter, when set, makes the store go away that long after
	// the fleet started (fault store-down-after=D): the Redis is stopped.
	StoreDownAfter time.Duration
	Server         refserver.Options
}

// The fleet's own keys; every other key is a builtin: key of the replicas.
var fleetKeys = []string{"replicas", "store", "redis", "store-fails"}

// Parse reads builtin:fleet?replicas=N&algo=ALGO&store=S&... .
func Parse(spec string) (Spec, error) {
	s := Spec{Replicas: 3, Store: StoreLocal, StoreFails: "open"}
	rest, ok := strings.CutPrefix(spec, Prefix)
	if !ok || (rest != "" && rest[0] != '?') {
		return s, fmt.Errorf("%q is not a fleet target: write builtin:fleet?replicas=3&algo=token_bucket&rate=10/s&burst=20&store=local", spec)
	}
	query := strings.TrimPrefix(rest, "?")
	algo := ""
	var inner []string
	for pair := range strings.SplitSeq(query, "&") {
		if pair == "" {
			continue
		}
		k, v, found := strings.Cut(pair, "=")
		if !found {
			return s, fmt.Errorf("%s: %q has no value: write key=value", spec, pair)
		}
		switch k {
		case "replicas":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > MaxReplicas {
				return s, fmt.Errorf("%s: replicas %q: use a whole number from 1 to %d", spec, v, MaxReplicas)
			}
			s.Replicas = n
		case "store":
			if !slices.Contains(stores[:], v) {
				return s, fmt.Errorf("%s: store %q: use %s", spec, v, strings.Join(stores[:], ", "))
			}
			s.Store = v
		case "redis":
			if _, _, err := net.SplitHostPort(v); err != nil {
				return s, fmt.Errorf("%s: redis %q: write HOST:PORT, e.g. redis=127.0.0.1:6379", spec, v)
			}
			s.Redis = v
		case "store-fails":
			if v != "open" && v != "closed" {
				return s, fmt.Errorf("%s: store-fails %q: use open (admit when the store is unreachable) or closed (reject)", spec, v)
			}
			s.StoreFails = v
		case "algo":
			algo = v
		case "fault":
			if d, ok := strings.CutPrefix(v, "store-down-after="); ok {
				dd, err := time.ParseDuration(d)
				if err != nil || dd <= 0 {
					return s, fmt.Errorf("%s: fault store-down-after=%q: write a positive duration like 2s", spec, d)
				}
				s.StoreDownAfter = dd
				continue
			}
			inner = append(inner, pair)
		default:
			inner = append(inner, pair)
		}
	}
	if algo == "" {
		return s, fmt.Errorf("%s: name the replicas' algorithm with algo=, e.g. algo=token_bucket", spec)
	}
	opt, err := refserver.ParseBuiltin(refserver.BuiltinPrefix + algo + "?" + strings.Join(inner, "&"))
	if err != nil {
		return s, fmt.Errorf("%s: %w", spec, unprefixed(err))
	}
	s.Server = opt
	if s.Store != StoreLocal && opt.Limiter.Algo != limiter.TokenBucket {
		return s, fmt.Errorf("%s: store=%s keeps a token bucket: use algo=token_bucket (store=local runs any algorithm)", spec, s.Store)
	}
	if s.StoreDownAfter > 0 && s.Store == StoreLocal {
		return s, fmt.Errorf("%s: fault store-down-after needs a shared store: use store=redis or store=redis-naive", spec)
	}
	if s.Redis != "" && s.Store == StoreLocal {
		return s, fmt.Errorf("%s: redis= is for store=redis or store=redis-naive", spec)
	}
	return s, nil
}

// unprefixed drops the inner builtin: spec a refserver error starts with,
// so a message names the user's fleet spec only.
func unprefixed(err error) error {
	msg := err.Error()
	if i := strings.Index(msg, ": "); i > 0 && strings.HasPrefix(msg, refserver.BuiltinPrefix) {
		return errors.New(msg[i+2:])
	}
	return err
}

// Fleet is a started fleet.
type Fleet struct {
	URL      string
	Spec     Spec
	srv      *http.Server
	done     chan error
	redis    *redisServer  // the one ratecheck started, if any
	rdb      *redis.Client // nil for store=local
	down     *atomic.Bool
	downStop func() bool
	once     sync.Once
}

// Start parses spec and starts the fleet on a free loopback port.
func Start(ctx context.Context, spec string) (*Fleet, error) {
	s, err := Parse(spec)
	if err != nil {
		return nil, &SpecError{err}
	}
	f := &Fleet{Spec: s, done: make(chan error, 1), down: &atomic.Bool{}}
	handlers := make([]http.Handler, s.Replicas)
	if s.Store == StoreLocal {
		for i := range handlers {
			h, err := refserver.NewHandler(s.Server)
			if err != nil {
				return nil, &SpecError{err}
			}
			handlers[i] = h
		}
	} else {
		addr := s.Redis
		if addr == "" {
			if f.redis, err = startRedis(ctx); err != nil {
				return nil, err
			}
			addr = f.redis.Addr
		}
		f.rdb = redis.NewClient(&redis.Options{Addr: addr, PoolSize: 256, MaxRetries: -1,
			DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := f.rdb.Ping(pctx).Err()
		cancel()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("redis at %s does not answer PING: %w", addr, err)
		}
		// Keys of this fleet alone, so a shared Redis given with redis=
		// starts every run with whole buckets.
		prefix := fmt.Sprintf("ratecheck:fleet:%d:", time.Now().UnixNano())
		for i := range handlers {
			lim := &redisBucket{cfg: s.Server.Limiter, rdb: f.rdb, prefix: prefix, naive: s.Store == StoreRedisNaive,
				failOpen: s.StoreFails == "open", down: f.down, timeout: time.Second}
			handlers[i] = refserver.NewSharedHandler(s.Server, lim)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Close()
		return nil, err
	}
	var next atomic.Uint64
	front := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers[(next.Add(1)-1)%uint64(len(handlers))].ServeHTTP(w, r)
	})
	f.srv = &http.Server{Handler: front, ReadHeaderTimeout: 10 * time.Second}
	f.URL = "http://" + ln.Addr().String() + "/"
	go func() { f.done <- f.srv.Serve(ln) }()
	if s.StoreDownAfter > 0 {
		t := time.AfterFunc(s.StoreDownAfter, f.storeDown)
		f.downStop = t.Stop
	}
	return f, nil
}

// storeDown makes the store go away: the Redis ratecheck started is
// stopped (a given one is left running, and the replicas stop using it).
func (f *Fleet) storeDown() {
	f.down.Store(true)
	if f.redis != nil {
		_ = f.redis.Close()
	}
}

// Close stops the front, the replicas' store client and the Redis
// ratecheck started. Safe to call more than once.
func (f *Fleet) Close() error {
	f.once.Do(func() {
		if f.downStop != nil {
			f.downStop()
		}
		if f.srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = f.srv.Shutdown(ctx)
			cancel()
			_ = f.srv.Close()
			<-f.done
		}
		if f.rdb != nil {
			_ = f.rdb.Close()
		}
		if f.redis != nil {
			_ = f.redis.Close()
		}
	})
	return nil
}

// RedisPid is the pid of the redis-server the fleet started (0: none).
func (f *Fleet) RedisPid() int {
	if f.redis == nil {
		return 0
	}
	return f.redis.Pid()
}

// SpecError is a fleet spec that cannot run as written (a usage error).
type SpecError struct{ Err error }

func (e *SpecError) Error() string { return e.Err.Error() }
func (e *SpecError) Unwrap() error { return e.Err }
