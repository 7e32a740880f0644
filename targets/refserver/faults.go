package refserver

// Faults make the reference server break one rule of its response contract
// each, on purpose, so that every grading check of package grade can be seen
// failing end to end against a server whose behaviour is otherwise known
// exactly. The honest reply is composed first; the faults asked for then
// rewrite it, one small function each, just before it is written.

import (
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"
)

// Fault names, as given to `serve --fault` and the builtin: key fault=.
const (
	FaultLieRemaining        = "lie-remaining"
	FaultShortRetryAfter     = "short-retry-after"
	FaultLongRetryAfter      = "long-retry-after"
	FaultNoRetryAfter        = "no-retry-after"
	FaultHTTPDateRetryAfter  = "http-date-retry-after"
	FaultBadDateRetryAfter   = "bad-date-retry-after"
	FaultDecimalRetryAfter   = "decimal-retry-after"
	FaultEarlyDateRetryAfter = "early-date-retry-after"
	FaultRetryAfterSuccess   = "retry-after-on-success"
	FaultFrozenReset         = "frozen-reset"
	FaultEarlyReset          = "early-reset"
	FaultStatus503           = "status-503"
	FaultResetEpochMillis    = "reset-epoch-ms"
	FaultResetPast           = "reset-past"
	FaultNoQuotaOnSuccess    = "no-quota-on-success"
	FaultLimitLie            = "limit-lie"
	FaultNoProblemJSON       = "no-problem-json"
	FaultCacheable429        = "cacheable-429"
	FaultRace                = "race"
)

// faultSpec is one fault. Faults that share a non-empty group exclude each
// other (a Retry-After has one form).
type faultSpec struct {
	name  string
	group string
	doc   string
	apply func(*reply) // nil for race, which acts on the decision instead
}

// faultSpecs in the order they are applied: the status and body first (a
// 503's problem body is rebuilt), then the Retry-After value, then its form,
// then the quota fields.
var faultSpecs = []faultSpec{
	{FaultStatus503, "", "reject with 503 instead of 429 (nginx's default)", status503},
	{FaultNoProblemJSON, "", "text/plain rejection body instead of problem+json", noProblemJSON},
	{FaultCacheable429, "", "Cache-Control: max-age=60 on rejections", cacheable429},
	{FaultShortRetryAfter, "ra-value", "Retry-After: 1 whatever the real wait", shortRetryAfter},
	{FaultLongRetryAfter, "ra-value", "Retry-After more than twice the real wait (2×s+1)", longRetryAfter},
	{FaultNoRetryAfter, "ra-form", "no Retry-After on rejections", noRetryAfter},
	{FaultHTTPDateRetryAfter, "ra-form", "Retry-After as an IMF-fixdate (valid: not a fault per RFC 9110)", httpDateRetryAfter},
	{FaultBadDateRetryAfter, "ra-form", "Retry-After as a date ending in UTC instead of GMT (invalid)", badDateRetryAfter},
	{FaultDecimalRetryAfter, "ra-form", `Retry-After as a decimal, "2.0" (invalid)`, decimalRetryAfter},
	{FaultEarlyDateRetryAfter, "ra-form", "Retry-After as a UTC date truncated to the second half a second early: 0.5–1.5 s before the wait ends (invalid and early)", earlyDateRetryAfter},
	{FaultRetryAfterSuccess, "", "Retry-After on successful responses too (the seconds until the quota is whole)", retryAfterOnSuccess},
	{FaultLimitLie, "", "advertise half the real limit (X-RateLimit-Limit and q=)", limitLie},
	{FaultLieRemaining, "", "Remaining never drops below half the limit on successes", lieRemaining},
	{FaultResetPast, "reset-value", "X-RateLimit-Reset a minute in the past", resetPast},
	{FaultFrozenReset, "reset-value", "X-RateLimit-Reset never moves (the first value sent) and RateLimit t is always the policy window, whatever the state", frozenReset},
	{FaultEarlyReset, "reset-value", "X-RateLimit-Reset and RateLimit t name half the time the quota really needs to be whole, rounded down", earlyReset},
	{FaultResetEpochMillis, "", "X-RateLimit-Reset in epoch milliseconds", resetEpochMillis},
	{FaultNoQuotaOnSuccess, "", "quota headers on rejections only", noQuotaOnSuccess},
	{FaultRace, "", "check-then-act race: a concurrent burst reads a stale count and is over-admitted", nil},
}

// FaultNames lists every fault in the order they are applied.
func FaultNames() []string {
	out := make([]string, len(faultSpecs))
	for i, s := range faultSpecs {
		out[i] = s.name
	}
	return out
}

// FaultDoc says what a fault does ("" for an unknown name).
func FaultDoc(name string) string {
	for _, s := range faultSpecs {
		if s.name == name {
			return s.doc
		}
	}
	return ""
}

func faultSpecOf(name string) (faultSpec, bool) {
	for _, s := range faultSpecs {
		if s.name == name {
			return s, true
		}
	}
	return faultSpec{}, false
}

// Faults is a set of fault names; the zero value is an honest server.
type Faults []string

// ParseFaults reads a comma-separated list of fault names.
func ParseFaults(s string) (Faults, error) {
	var out Faults
	for name := range strings.SplitSeq(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if _, ok := faultSpecOf(name); !ok {
			return nil, fmt.Errorf("fault %q: use one or more of %s, comma-separated", name, strings.Join(FaultNames(), ", "))
		}
		out = append(out, name)
	}
	return Faults(nil).Add(out...)
}

// Add returns f with names added, refusing two faults of one group.
func (f Faults) Add(names ...string) (Faults, error) {
	out := slices.Clone(f)
	for _, name := range names {
		spec, ok := faultSpecOf(name)
		if !ok {
			return f, fmt.Errorf("fault %q: use one or more of %s", name, strings.Join(FaultNames(), ", "))
		}
		if slices.Contains(out, name) {
			continue
		}
		for _, have := range out {
			if other, _ := faultSpecOf(have); spec.group != "" && other.group == spec.group {
				return f, fmt.Errorf("faults %s and %s cannot be combined", have, name)
			}
		}
		out = append(out, name)
	}
	return out, nil
}

// Has reports whether the fault is on.
func (f Faults) Has(name string) bool { return slices.Contains(f, name) }

func (f Faults) String() string { return strings.Join(f, ",") }

// reply is a response about to be written.
type reply struct {
	header  http.Header
	status  int
	body    []byte
	d       limiter.Decision
	now     time.Time
	retry   int // Retry-After seconds to advertise (rejections)
	windowS int // the policy's w=
}

func (f Faults) apply(r *reply) {
	for _, s := range faultSpecs {
		if s.apply != nil && f.Has(s.name) {
			s.apply(r)
		}
	}
}

func (r *reply) rejected() bool { return !r.d.Allowed }

func status503(r *reply) {
	if !r.rejected() {
		return
	}
	r.status = http.StatusServiceUnavailable
	r.body = problemBody(r.header, r.status, r.retry)
}

func noProblemJSON(r *reply) {
	if !r.rejected() {
		return
	}
	r.header.Set("Content-Type", "text/plain; charset=utf-8")
	r.body = []byte(http.StatusText(r.status) + "\n")
}

func cacheable429(r *reply) {
	if r.rejected() {
		r.header.Set("Cache-Control", "max-age=60")
	}
}

// setRetry rewrites the Retry-After value when the server sends one.
func (r *reply) setRetry(v string) {
	if r.rejected() && r.header.Get("Retry-After") != "" {
		r.header.Set("Retry-After", v)
	}
}

func shortRetryAfter(r *reply) {
	r.retry = 1
	r.setRetry("1")
}

func longRetryAfter(r *reply) {
	r.retry = 2*r.retry + 1
	r.setRetry(strconv.Itoa(r.retry))
}

func noRetryAfter(r *reply) { r.header.Del("Retry-After") }

// retryAt is the instant Retry-After names, rounded up to the second so a
// date is never earlier than the delay.
func (r *reply) retryAt() time.Time {
	at := r.now.Add(time.Duration(r.retry) * time.Second)
	if t := at.Truncate(time.Second); !t.Equal(at) {
		at = t.Add(time.Second)
	}
	return at.UTC()
}

func httpDateRetryAfter(r *reply) { r.setRetry(r.retryAt().Format(http.TimeFormat)) }

// badDateRetryAfter is Go's time.RFC1123 in UTC, as sethvargo/go-limiter
// sends it: "UTC" is not an HTTP-date's "GMT".
func badDateRetryAfter(r *reply) { r.setRetry(r.retryAt().Format(time.RFC1123)) }

func decimalRetryAfter(r *reply) { r.setRetry(strconv.Itoa(r.retry) + ".0") }

// earlyDateRetryAfter names, as sethvargo/go-limiter does, a date in UTC
// truncated to the second; it is also half a second early so that it is
// early at every phase (truncation alone is exact on whole seconds).
func earlyDateRetryAfter(r *reply) {
	at := r.now.Add(r.d.RetryAfter - 500*time.Millisecond).Truncate(time.Second)
	r.setRetry(at.UTC().Format(time.RFC1123))
}

// retryAfterOnSuccess is one library's README recipe: Retry-After on every
// response, the 200s included.
func retryAfterOnSuccess(r *reply) {
	if !r.rejected() {
		r.header.Set("Retry-After", strconv.Itoa(int(math.Ceil(r.d.Reset.Seconds()))))
	}
}

var (
	reRemaining = regexp.MustCompile(`;r=\d+`)
	reQuota     = regexp.MustCompile(`;q=\d+`)
)

func limitLie(r *reply) {
	lie := max(1, r.d.Limit/2)
	if r.header.Get("X-RateLimit-Limit") != "" {
		r.header.Set("X-RateLimit-Limit", strconv.Itoa(lie))
	}
	if p := r.header.Get("RateLimit-Policy"); p != "" {
		r.header.Set("RateLimit-Policy", reQuota.ReplaceAllString(p, ";q="+strconv.Itoa(lie)))
	}
}

func lieRemaining(r *reply) {
	if r.rejected() {
		return
	}
	floor := max(1, int(math.Ceil(float64(r.d.Limit)/2)))
	if r.d.Remaining >= floor {
		return
	}
	if r.header.Get("X-RateLimit-Remaining") != "" {
		r.header.Set("X-RateLimit-Remaining", strconv.Itoa(floor))
	}
	if v := r.header.Get("RateLimit"); v != "" {
		r.header.Set("RateLimit", reRemaining.ReplaceAllString(v, ";r="+strconv.Itoa(floor)))
	}
}

func resetPast(r *reply) {
	if r.header.Get("X-RateLimit-Reset") != "" {
		r.header.Set("X-RateLimit-Reset", strconv.FormatInt(r.now.Add(-time.Minute).Unix(), 10))
	}
}

// resetEpochMillis rewrites whatever epoch seconds Reset holds in
// milliseconds: the honest one to the millisecond, another fault's as it is.
func resetEpochMillis(r *reply) {
	s, err := strconv.ParseInt(r.header.Get("X-RateLimit-Reset"), 10, 64)
	if err != nil {
		return
	}
	ms := r.now.Add(r.d.Reset).Add(time.Millisecond - 1).UnixMilli()
	if s != r.now.Add(r.d.Reset).Add(time.Second-1).Unix() { // rewritten by reset-past, frozen-reset, early-reset
		ms = s * 1000
	}
	r.header.Set("X-RateLimit-Reset", strconv.FormatInt(ms, 10))
}

// frozenAt is the X-RateLimit-Reset the frozen-reset fault keeps sending:
// the first one it wrote in this process. Servers with the fault share it,
// which is the point: it never moves.
var frozenAt struct {
	sync.Mutex
	value string
}

func frozenReset(r *reply) {
	if v := r.header.Get("X-RateLimit-Reset"); v != "" {
		frozenAt.Lock()
		if frozenAt.value == "" {
			frozenAt.value = v
		}
		r.header.Set("X-RateLimit-Reset", frozenAt.value)
		frozenAt.Unlock()
	}
	r.setT(r.windowS)
}

// earlyReset says the quota is whole after half the real time, rounded
// down: clients that trust it come back while they are still limited.
func earlyReset(r *reply) {
	half := r.d.Reset / 2
	if r.header.Get("X-RateLimit-Reset") != "" {
		r.header.Set("X-RateLimit-Reset", strconv.FormatInt(r.now.Add(half).Unix(), 10))
	}
	r.setT(int(half / time.Second))
}

var reT = regexp.MustCompile(`;t=\d+`)

// setT rewrites RateLimit's t= when the server sends it.
func (r *reply) setT(seconds int) {
	if v := r.header.Get("RateLimit"); v != "" {
		r.header.Set("RateLimit", reT.ReplaceAllString(v, ";t="+strconv.Itoa(seconds)))
	}
}

func noQuotaOnSuccess(r *reply) {
	if r.rejected() {
		return
	}
	for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit", "RateLimit-Policy"} {
		r.header.Del(name)
	}
}

// raceLag is the race fault's gap between reading the count and acting on
// it: a round trip to a shared store.
const raceLag = 5 * time.Millisecond

// racyDecide is the race fault's check-then-act: it reads the quota left as
// of the last decision, waits raceLag, and then admits a request the
// limiter refuses if that stale read said there was room. Sequential
// requests never notice; a concurrent burst is over-admitted. (A
// concurrency cap is left alone: its slots must balance on release.)
func (h *Handler) racyDecide(key string) (time.Time, limiter.Decision) {
	read := h.readStale(key)
	time.Sleep(raceLag)
	return h.actOnStale(key, read)
}

// staleRead is what the race fault's check saw: the quota left as of the
// last decision on the key, if there was one.
type staleRead struct {
	room int
	seen bool
}

// readStale is the check half of the race fault's check-then-act.
func (h *Handler) readStale(key string) staleRead {
	h.mu.Lock()
	defer h.mu.Unlock()
	room, seen := h.stale[key]
	return staleRead{room, seen}
}

// actOnStale is the act half: the limiter decides, and a refusal becomes
// an admission when the earlier read said there was room.
func (h *Handler) actOnStale(key string, read staleRead) (time.Time, limiter.Decision) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	d := h.lim.Allow(key, now)
	h.stale[key] = d.Remaining
	if !d.Allowed && (!read.seen || read.room > 0) && h.opt.Limiter.Algo != limiter.Concurrency {
		d.Allowed, d.RetryAfter = true, 0
	}
	return now, d
}
