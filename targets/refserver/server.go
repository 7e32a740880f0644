package refserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"
)

// Handler answers every path with the reference limiter's decision.
type Handler struct {
	opt Options
	mu  sync.Mutex // the models are not safe for concurrent use
	lim limiter.Limiter
	now func() time.Time
	// stale is what the race fault's "replica" last saw per key (guarded
	// by mu); nil unless that fault is on.
	stale map[string]int
	// shared: the limiter is safe for concurrent use (NewSharedHandler).
	shared bool
}

// NewHandler validates opt and builds the handler.
func NewHandler(opt Options) (*Handler, error) {
	if c := &opt.Limiter; (c.StartAligned() || c.RefillEvery > 0) && c.Origin.IsZero() {
		// The grid (or an interval refill's fill instants) is anchored
		// where this server started: a phase the client cannot know, and
		// that does not follow its requests.
		c.Origin = time.Now()
	}
	lim, err := limiter.New(opt.Limiter)
	if err != nil {
		return nil, err
	}
	h := &Handler{opt: opt, lim: lim, now: time.Now}
	if opt.Fault.Has(FaultRace) {
		h.stale = map[string]int{}
	}
	return h, nil
}

func (h *Handler) key(r *http.Request) string {
	switch {
	case h.opt.Scope == "ip":
		return clientAddr(r, h.opt.Key)
	case h.opt.Scope == "connection":
		return r.RemoteAddr // address and port: one key per TCP connection
	case strings.HasPrefix(h.opt.Scope, "header:"):
		return r.Header.Get(strings.TrimPrefix(h.opt.Scope, "header:"))
	}
	return ""
}

// Answer is the handler's whole response to one request at one instant:
// what it writes, and how long it holds the answer first.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
	// Hold is how long the answer waits before its first byte: an admitted
	// request's shaping delay and backend latency, as behind nginx.
	Hold time.Duration
	// release: an admitted request of a concurrency cap holds a slot
	// until its answer is written (Release).
	release bool
	key     string
}

// Decide answers r at now — the decision and the whole response contract
// (status, Retry-After, quota headers, problem+json, faults) — with no
// socket and no sleep. ServeHTTP is Decide on the wall clock, a wait of
// Hold, and a write; the simulator (targets/sim) calls it on virtual time,
// so what is served and what is simulated cannot drift apart. (The race
// fault needs real concurrency: Decide decides without it.)
func (h *Handler) Decide(r *http.Request, now time.Time) Answer {
	if !h.opt.counts(r) {
		return h.uncounted()
	}
	key := h.requestKey(r)
	var d limiter.Decision
	if h.shared {
		d = h.lim.Allow(key, now)
	} else {
		h.mu.Lock()
		d = h.lim.Allow(key, now)
		h.mu.Unlock()
	}
	return h.compose(key, d, now)
}

// Release ends the answer a at now: a concurrency cap's slot is free
// again. Every answer must be released once it is written.
func (h *Handler) Release(a Answer, now time.Time) {
	if !a.release {
		return
	}
	h.mu.Lock()
	h.lim.Release(a.key, now)
	h.mu.Unlock()
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var a Answer
	if h.opt.counts(r) {
		key := h.requestKey(r)
		now, d := h.decide(key)
		a = h.compose(key, d, now)
	} else {
		a = h.uncounted()
	}
	defer func() { h.Release(a, h.now()) }()
	if !sleepCtx(r.Context(), a.Hold) {
		return
	}
	for name, v := range a.Header {
		w.Header()[name] = v
	}
	w.WriteHeader(a.Status)
	_, _ = w.Write(a.Body)
}

// uncounted is the answer to a request the limit does not count (a method
// methods= leaves out): admitted, with no quota headers, as a route the
// limiter middleware never wraps.
func (h *Handler) uncounted() Answer {
	return Answer{Status: http.StatusOK, Hold: h.opt.Latency, Body: []byte("ok\n"),
		Header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}}
}

// compose builds the response to decision d of key at now.
func (h *Handler) compose(key string, d limiter.Decision, now time.Time) Answer {
	hd := http.Header{}
	h.writeQuotaHeaders(hd, d, now)
	rp := reply{header: hd, d: d, now: now, windowS: h.policyWindowSeconds()}
	a := Answer{key: key}
	if d.Allowed {
		// Shaping delay and backend latency both happen before the first
		// byte, as they would behind nginx.
		a.Hold = d.Delay + h.opt.Latency
		a.release = h.opt.Limiter.Algo == limiter.Concurrency
		hd.Set("Content-Type", "text/plain; charset=utf-8")
		rp.status, rp.body = http.StatusOK, []byte("ok\n")
	} else {
		rp.retry = retryAfterSeconds(d.RetryAfter)
		if h.opt.RetryAfter {
			hd.Set("Retry-After", strconv.Itoa(rp.retry))
		}
		rp.status, rp.body = h.opt.Status, problemBody(hd, h.opt.Status, rp.retry)
	}
	h.opt.Fault.apply(&rp) // the contract faults, when asked for (faults.go)
	a.Status, a.Header, a.Body = rp.status, rp.header, rp.body
	return a
}

// decide asks the limiter about one request of key, now.
func (h *Handler) decide(key string) (time.Time, limiter.Decision) {
	if h.stale != nil {
		return h.racyDecide(key)
	}
	if h.shared {
		now := h.now()
		return now, h.lim.Allow(key, now)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	return now, h.lim.Allow(key, now)
}

// retryAfterSeconds rounds up, so a client that obeys is never early, and
// never says 0, which RFC 9110 allows but tells a client nothing.
func retryAfterSeconds(d time.Duration) int {
	s := int(math.Ceil(d.Seconds()))
	return max(s, 1)
}

func (h *Handler) writeQuotaHeaders(hd http.Header, d limiter.Decision, now time.Time) {
	if h.opt.Limiter.Algo == limiter.None || h.opt.Limiter.QueueUnbounded || h.opt.Headers == HeadersNone {
		return // a pacer that never rejects has no quota to advertise
	}
	resetS := int(math.Ceil(d.Reset.Seconds()))
	if h.opt.Headers == HeadersXRateLimit || h.opt.Headers == HeadersBoth {
		hd.Set("X-RateLimit-Limit", strconv.Itoa(d.Limit))
		hd.Set("X-RateLimit-Remaining", strconv.Itoa(d.Remaining))
		// GitHub's convention: epoch seconds of the instant the quota is whole.
		hd.Set("X-RateLimit-Reset", strconv.FormatInt(now.Add(d.Reset).Add(time.Second-1).Unix(), 10))
	}
	if h.opt.Headers == HeadersIETF || h.opt.Headers == HeadersBoth {
		// draft-ietf-httpapi-ratelimit-headers-10: named structured lists.
		policy := fmt.Sprintf(`"default";q=%d;w=%d`, d.Limit, h.policyWindowSeconds())
		if h.opt.Limiter.Algo == limiter.Concurrency {
			policy += `;qu="concurrent-requests"`
		}
		hd.Set("RateLimit-Policy", policy)
		hd.Set("RateLimit", fmt.Sprintf(`"default";r=%d;t=%d`, d.Remaining, resetS))
	}
}

// policyWindowSeconds is the w= of RateLimit-Policy: the window for window
// algorithms, the time a bucket takes to refill from empty otherwise.
func (h *Handler) policyWindowSeconds() int {
	return policyWindow(h.opt.Limiter)
}

func policyWindow(c limiter.Config) int {
	var s float64
	switch c.Algo {
	case limiter.Tiers:
		// Two limits, one quota advertised (limiter.Decision.Limit): when
		// all must admit it is the tighter tier's capacity, so its window;
		// when either does it is both tiers', whole once the slower is.
		a, b := c.Tiers[0].Config(c.Origin), c.Tiers[1].Config(c.Origin)
		if c.TierMode == limiter.TiersAll {
			if b.Capacity() < a.Capacity() {
				a = b
			}
			return policyWindow(a)
		}
		return max(policyWindow(a), policyWindow(b))
	case limiter.FixedWindow, limiter.SlidingLog, limiter.SlidingCounter:
		s = c.Window.Seconds()
	case limiter.TokenBucket:
		s = float64(c.Burst) / c.Rate
		if c.RefillEvery > 0 {
			// Whole fills from empty: a clump lands only at a fill instant.
			perFill := c.Rate * c.RefillEvery.Seconds()
			s = math.Ceil(float64(c.Burst)/perFill-1e-9) * c.RefillEvery.Seconds()
		}
	case limiter.LeakyShaping:
		s = float64(c.Burst+1) / c.Rate
	default:
		s = 1
	}
	return max(int(math.Ceil(s)), 1)
}

// problem is an RFC 9457 problem details object with the RateLimit draft's
// registered problem type.
type problem struct {
	Type             string   `json:"type"`
	Title            string   `json:"title"`
	Status           int      `json:"status"`
	Detail           string   `json:"detail"`
	ViolatedPolicies []string `json:"violated-policies"`
}

// problemBody returns the problem+json body of a rejection and sets the
// headers that go with it.
func problemBody(hd http.Header, status, retry int) []byte {
	p := problem{
		Type:             "https://iana.org/assignments/http-problem-types#quota-exceeded",
		Title:            "Too Many Requests",
		Status:           status,
		Detail:           fmt.Sprintf("rate limit exceeded; retry in %d s", retry),
		ViolatedPolicies: []string{"default"},
	}
	if status == http.StatusServiceUnavailable {
		p.Title = "Service Unavailable"
	}
	body, _ := json.Marshal(p)
	hd.Set("Content-Type", "application/problem+json")
	hd.Set("Cache-Control", "no-store") // RFC 6585 §4: a 429 must not be stored
	return body
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Server is a running reference server.
type Server struct {
	URL  string // http://127.0.0.1:PORT/
	Addr string // 127.0.0.1:PORT
	srv  *http.Server
	done chan error

	closeOnce sync.Once
	closeErr  error
}

// Start listens on addr (use 127.0.0.1:0 for an ephemeral port) and serves
// the handler until Close.
func Start(addr string, opt Options) (*Server, error) {
	h, err := NewHandler(opt)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	s := &Server{
		Addr: ln.Addr().String(),
		URL:  "http://" + ln.Addr().String() + "/",
		srv:  &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		done: make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Close stops accepting, lets requests in flight finish for up to 2 s, then
// drops them. Closing again returns the first Close's result at once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err := s.srv.Shutdown(ctx)
		if errors.Is(err, context.DeadlineExceeded) {
			err = s.srv.Close()
		}
		if serveErr := <-s.done; !errors.Is(serveErr, http.ErrServerClosed) {
			err = serveErr
		}
		s.closeErr = err
	})
	return s.closeErr
}

// StartBuiltin starts the reference server that a builtin: target string
// names on an ephemeral loopback port.
func StartBuiltin(spec string) (*Server, error) {
	opt, err := ParseBuiltin(spec)
	if err != nil {
		return nil, err
	}
	return Start("127.0.0.1:0", opt)
}
