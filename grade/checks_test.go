package grade

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// Synthetic observations for exact edge cases.

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

type builder struct {
	obs probe.Observation
}

func newBuilder() *builder { return &builder{obs: probe.Observation{Start: t0}} }

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// add records a request sent at sentMs and complete 1 ms later, with a
// Date header; kv are header name/value pairs.
func (b *builder) add(phase string, sentMs float64, status int, kv ...string) *results.Result {
	r := results.Result{Seq: len(b.obs.Results) + 1, Phase: phase, Sent: ms(sentMs), FirstByte: ms(sentMs + 0.5), Done: ms(sentMs + 1), Status: status,
		Headers: map[string]string{"date": t0.Add(ms(sentMs)).Format(http.TimeFormat)}}
	for i := 0; i+1 < len(kv); i += 2 {
		r.Headers[kv[i]] = kv[i+1]
	}
	if status >= 400 {
		if _, ok := r.Headers["content-type"]; !ok {
			r.Headers["content-type"] = "application/problem+json"
			r.Body = fmt.Sprintf(`{"type":"about:blank","title":"Too Many Requests","status":%d}`, status)
		}
	}
	b.obs.Results = append(b.obs.Results, r)
	return &b.obs.Results[len(b.obs.Results)-1]
}

func (b *builder) grade(inf probe.Inference) Report { return Grade(&b.obs, inf) }

func check(t *testing.T, rep Report, id, want string) Check {
	t.Helper()
	c, ok := rep.Check(id)
	if !ok {
		t.Fatalf("no check %s", id)
	}
	if c.Outcome != want {
		t.Fatalf("%s: %s (%s), want %s", id, c.Outcome, c.Actual, want)
	}
	return c
}

var fw = probe.Inference{Family: limiter.FixedWindow, Limit: 5, WindowS: 10, Confidence: 0.9}

func TestRubricIsStable(t *testing.T) {
	want := []string{"status.429", "retry-after.present", "retry-after.valid", "retry-after.accurate", "retry-after.only-on-rejections",
		"quota.present-on-success", "quota.consistent", "remaining.truthful", "limit.agrees", "reset.sane", "reset.accurate",
		"burst.over-admission", "problem.json", "cache.429", "scope.spoofable",
		"bypass.address", "bypass.path", "bypass.method", "bypass.protocol", "bypass.identity"}
	if got := CheckIDs(); !slices.Equal(got, want) {
		t.Fatalf("check IDs %v", got)
	}
	sum := 0
	for _, r := range rubric {
		sum += r.weight
		if r.source == "" || r.expected == "" || r.title == "" {
			t.Errorf("%s lacks source, expected or title", r.id)
		}
		if r.capLetter != "" && !slices.Contains(Letters(), r.capLetter) {
			t.Errorf("%s caps at %q", r.id, r.capLetter)
		}
		if r.severity == SeverityWarn && r.capLetter != "" {
			t.Errorf("%s is a recommendation but caps", r.id)
		}
	}
	if sum != 100 {
		t.Fatalf("weights sum to %d", sum)
	}
}

func TestLetterBands(t *testing.T) {
	for _, tc := range []struct {
		score int
		clean bool
		want  string
	}{{100, true, "A+"}, {95, true, "A+"}, {100, false, "A"}, {94, true, "A"}, {90, false, "A"}, {89, true, "B"}, {80, true, "B"},
		{79, true, "C"}, {70, true, "C"}, {69, true, "D"}, {60, true, "D"}, {59, true, "F"}, {0, true, "F"}} {
		if got := scoreLetter(tc.score, tc.clean); got != tc.want {
			t.Errorf("scoreLetter(%d, %v) = %s, want %s", tc.score, tc.clean, got, tc.want)
		}
	}
}

// Nothing observed: every check skips, with a reason, and nothing passes.
func TestEmptyRunSkipsEverything(t *testing.T) {
	for _, obs := range []*probe.Observation{nil, {Start: t0}} {
		rep := Grade(obs, probe.Inference{Family: probe.Inconclusive})
		if rep.Letter != NotGraded || rep.Score != 0 || len(rep.Caps) != 0 || rep.RubricVersion != RubricVersion {
			t.Fatalf("%+v", rep)
		}
		for _, c := range rep.Checks {
			if c.Outcome != Skip || c.Actual == "" {
				t.Errorf("%s: %s %q, want skip with a reason", c.ID, c.Outcome, c.Actual)
			}
		}
	}
}

// A run whose one rejection is a bare 403: status fails with the HAProxy
// hint, Retry-After is missing; the letter is capped at C whatever the
// score.
func TestStatus403AndCaps(t *testing.T) {
	b := newBuilder()
	for i := range 5 {
		b.add("burst", 100+0.01*float64(i), 200)
	}
	b.add("burst", 100.05, 403, "content-type", "text/html")
	rep := b.grade(fw)
	c := check(t, rep, "status.429", Fail)
	if !strings.Contains(c.Hint, "deny_status 429") || !slices.Equal(c.Seqs, []int{6}) {
		t.Errorf("hint %q seqs %v", c.Hint, c.Seqs)
	}
	check(t, rep, "retry-after.present", Fail)
	check(t, rep, "problem.json", Warn)
	if letterIndex(rep.Letter) < letterIndex("C") || len(rep.Caps) != 3 || !strings.Contains(rep.Caps[2], "no quota headers") {
		t.Errorf("letter %s caps %v", rep.Letter, rep.Caps)
	}
	if rep.Caps[0] != "C: rejects with 403 instead of 429 (status.429)" {
		t.Errorf("cap %q", rep.Caps[0])
	}
}

func TestRetryAfterPresentAndValid(t *testing.T) {
	for _, tc := range []struct {
		values  []string // one rejection each; "" = none
		present string
		valid   string
	}{
		{[]string{"1", "2"}, Pass, Pass},
		{[]string{"1", ""}, Warn, Pass},
		{[]string{"", ""}, Fail, Skip},
		{[]string{"0"}, Pass, Warn},                                // valid but useless
		{[]string{"Thu, 01 Jan 2026 12:00:02 GMT"}, Pass, Pass},    // IMF-fixdate
		{[]string{"Thursday, 01-Jan-26 12:00:02 GMT"}, Pass, Warn}, // obsolete rfc850-date
		{[]string{"Thu, 01 Jan 2026 12:00:02 UTC"}, Pass, Fail},    // not an HTTP-date
		{[]string{"2.0"}, Pass, Fail},                              // decimal
		{[]string{"5s"}, Pass, Fail},                               // unit
		{[]string{"1", "1767268802"}, Pass, Warn},                  // an epoch as delay-seconds
	} {
		b := newBuilder()
		for i, v := range tc.values {
			if v == "" {
				b.add("burst", 100+float64(i), 429)
			} else {
				b.add("burst", 100+float64(i), 429, "retry-after", v)
			}
		}
		rep := b.grade(fw)
		if c, _ := rep.Check("retry-after.present"); c.Outcome != tc.present {
			t.Errorf("%q: present %s (%s)", tc.values, c.Outcome, c.Actual)
		}
		if c, _ := rep.Check("retry-after.valid"); c.Outcome != tc.valid {
			t.Errorf("%q: valid %s (%s)", tc.values, c.Outcome, c.Actual)
		}
	}
}

func TestRetryAfterAccurate(t *testing.T) {
	// Rejection sent at 100 ms, complete at 101 ms, says ra; then follow-ups
	// (sent ms offset from 0, status).
	type shot struct {
		at     float64
		status int
		key    string
	}
	for _, tc := range []struct {
		name     string
		ra       string
		after    []shot
		want     string
		contains string
	}{
		{"admitted after a silent wait of exactly Retry-After", "1", []shot{{1101, 200, ""}}, Pass, "1 silent waits"},
		{"rejected after a silent wait", "1", []shot{{1101, 429, ""}}, Fail, "too short for 1 of 1 silent waits"},
		// The probe's own knocking kept the lockout going: no test of the
		// header, but the limiter's trait is said.
		{"knocking extends the lockout; the silent wait is admitted", "1", []shot{{500, 429, ""}, {1500, 429, ""}, {3000, 200, ""}}, Pass,
			"retries before Retry-After extend the lockout"},
		{"knocking only", "1", []shot{{500, 429, ""}, {1500, 429, ""}}, Skip, "retries before Retry-After extend the lockout"},
		{"the client itself took the returning capacity", "1", []shot{{900, 200, ""}, {1101, 429, ""}}, Skip, "no silent wait"},
		{"whole-second rounding is not pessimism", "1", []shot{{111, 200, ""}, {300, 429, ""}, {1400, 200, ""}}, Pass, ""},
		{"3 s for a 0.5 s wait", "3", []shot{{601, 200, ""}}, Fail, "more than twice"},
		{"2 s for a 0.9 s wait", "2", []shot{{1001, 200, ""}}, Fail, "more than twice"},
		{"2 s for a 1.2 s wait", "2", []shot{{1301, 200, ""}, {1400, 429, ""}, {2500, 200, ""}}, Pass, ""},
		{"a fraction is read and judged", "1.5", []shot{{1700, 429, ""}}, Fail, "read leniently"},
		{"another key's admission says nothing", "3", []shot{{601, 200, "other"}}, Skip, ""},
		{"nothing followed", "1", nil, Skip, ""},
	} {
		b := newBuilder()
		b.add("burst", 100, 429, "retry-after", tc.ra)
		for _, s := range tc.after {
			kv := []string{}
			if s.status == 429 {
				kv = []string{"retry-after", "1"}
			}
			r := b.add("trace", s.at, s.status, kv...)
			r.Key = s.key
		}
		rep := b.grade(fw)
		c, _ := rep.Check("retry-after.accurate")
		if c.Outcome != tc.want || !strings.Contains(c.Actual, tc.contains) {
			t.Errorf("%s: %s (%s), want %s containing %q", tc.name, c.Outcome, c.Actual, tc.want, tc.contains)
		}
		if c.Outcome == Fail && (len(c.Seqs) < 2 || c.Seqs[0] != 1) {
			t.Errorf("%s: seqs %v should name the rejection and the request that shows it", tc.name, c.Seqs)
		}
		// Too short sends clients back early: as bad as no Retry-After.
		if strings.Contains(c.Actual, "too short") && !slices.Contains(rep.Caps, "C: Retry-After too short (retry-after.accurate)") {
			t.Errorf("%s: caps %q", tc.name, rep.Caps)
		}
		if strings.Contains(c.Actual, "more than twice") && !slices.Contains(rep.Caps, "B: Retry-After far too long (retry-after.accurate)") {
			t.Errorf("%s: caps %q", tc.name, rep.Caps)
		}
	}
}

// A date Retry-After is read against Date, which has one-second
// resolution: a date one second late is rounding, not pessimism.
func TestRetryAfterAccurateDate(t *testing.T) {
	b := newBuilder()
	// Sent at 12:00:00.900 (Date 12:00:00); the date says 12:00:02, the
	// real wait is 0.6 s: within the date's tolerance, so not too long.
	b.add("burst", 900, 429, "retry-after", "Thu, 01 Jan 2026 12:00:02 GMT")
	b.add("trace", 1501, 200)
	c := check(t, b.grade(fw), "retry-after.accurate", Skip)
	if !strings.Contains(c.Actual, "not too long") {
		t.Errorf("%s", c.Actual)
	}
	b = newBuilder()
	b.add("burst", 900, 429, "retry-after", "Thu, 01 Jan 2026 12:00:09 GMT")
	b.add("trace", 1501, 200)
	check(t, b.grade(fw), "retry-after.accurate", Fail)
	// The date is the instant itself: a silent request at 12:00:02.001.
	b = newBuilder()
	b.add("burst", 900, 429, "retry-after", "Thu, 01 Jan 2026 12:00:02 GMT")
	b.add("trace", 2001, 200)
	check(t, b.grade(fw), "retry-after.accurate", Pass)
	// A date in UTC is invalid, and still judged: this one was early.
	b = newBuilder()
	b.add("burst", 900, 429, "retry-after", "Thu, 01 Jan 2026 12:00:01 UTC")
	b.add("trace", 1011, 429, "retry-after", "1")
	rep := b.grade(fw)
	check(t, rep, "retry-after.valid", Fail)
	c = check(t, rep, "retry-after.accurate", Fail)
	if !strings.Contains(c.Actual, `"Thu, 01 Jan 2026 12:00:01 UTC"`) || !strings.Contains(c.Actual, "read leniently") {
		t.Errorf("%s", c.Actual)
	}
}

// Retry-After on a success: a warning, never a fail.
func TestRetryAfterOnlyOnRejections(t *testing.T) {
	b := newBuilder()
	b.add("trace", 100, 200, "retry-after", "1")
	b.add("trace", 200, 200)
	b.add("trace", 300, 429, "retry-after", "1")
	c := check(t, b.grade(fw), "retry-after.only-on-rejections", Warn)
	if !slices.Equal(c.Seqs, []int{1}) || !strings.Contains(c.Actual, "1 of 2 successful responses") {
		t.Errorf("%s %v", c.Actual, c.Seqs)
	}
	b = newBuilder()
	b.add("trace", 100, 200)
	b.add("trace", 300, 429, "retry-after", "1")
	check(t, b.grade(fw), "retry-after.only-on-rejections", Pass)
}

// xq is X-RateLimit fields as header pairs; reset is epoch seconds.
func xq(limit, remaining int, reset int64, more ...string) []string {
	return append([]string{"x-ratelimit-limit", fmt.Sprint(limit), "x-ratelimit-remaining", fmt.Sprint(remaining),
		"x-ratelimit-reset", fmt.Sprint(reset)}, more...)
}

var resetAt = t0.Add(10 * time.Second).Unix()

// burst adds a burst at 100 ms: admitted responses saying remaining[i],
// then rejections.
func (b *builder) burst(remaining []int, rejected int) {
	for i, r := range remaining {
		b.add("burst", 100+0.01*float64(i), 200, xq(5, r, resetAt)...)
	}
	for i := range rejected {
		b.add("burst", 100.1+0.01*float64(i), 429, xq(5, 0, resetAt, "retry-after", "10")...)
	}
}

func TestRemainingTruthfulBursts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		remaining []int
		rejected  int
		want      string
	}{
		{"counts down to 0", []int{4, 3, 2, 1, 0}, 3, Pass},
		{"decision order is not send order", []int{2, 4, 0, 3, 1}, 3, Pass},
		{"stuck at 3", []int{4, 3, 3, 3, 3}, 3, Fail},
		{"1 left, then rejected in the same instant", []int{5, 4, 3, 2, 1}, 3, Fail},
		{"0 while more were admitted", []int{4, 0, 0, 0, 0}, 3, Fail},
	} {
		b := newBuilder()
		b.burst(tc.remaining, tc.rejected)
		rep := b.grade(fw)
		c, _ := rep.Check("remaining.truthful")
		if c.Outcome != tc.want {
			t.Errorf("%s: %s (%s)", tc.name, c.Outcome, c.Actual)
		}
	}
}

func TestRemainingTruthfulSequential(t *testing.T) {
	b := newBuilder()
	b.add("trace", 100, 200, xq(5, 2, resetAt)...)
	b.add("trace", 200, 429, xq(5, 0, resetAt, "retry-after", "10")...)
	c := check(t, b.grade(fw), "remaining.truthful", Fail)
	if !slices.Equal(c.Seqs, []int{1, 2}) {
		t.Errorf("seqs %v", c.Seqs)
	}
	// Overlapping in flight: the order of decisions is unknown.
	b = newBuilder()
	b.add("trace", 100, 200, xq(5, 2, resetAt)...).Done = ms(300)
	b.add("trace", 200, 429, xq(5, 0, resetAt, "retry-after", "10")...)
	check(t, b.grade(fw), "remaining.truthful", Skip)
	// The next one admitted: fine.
	b = newBuilder()
	b.add("trace", 100, 200, xq(5, 2, resetAt)...)
	b.add("trace", 200, 200, xq(5, 1, resetAt)...)
	b.add("trace", 300, 429, xq(5, 0, resetAt, "retry-after", "10")...)
	check(t, b.grade(fw), "remaining.truthful", Fail) // seq 2 said 1 left
	// The next one still in flight when the key's following request was
	// sent: that one may have reached the server first and taken the
	// last of the capacity, so the pair says nothing.
	b = newBuilder()
	b.add("split", 100, 200, xq(5, 1, resetAt)...)
	b.add("split", 103, 429, xq(5, 0, resetAt, "retry-after", "10")...).Done = ms(110)
	b.add("split", 106, 200, xq(5, 0, resetAt)...)
	check(t, b.grade(fw), "remaining.truthful", Skip)
}

func TestQuotaPresentAndConsistent(t *testing.T) {
	b := newBuilder()
	b.add("trace", 100, 200, xq(5, 4, resetAt, "ratelimit-policy", `"default";q=5;w=10`, "ratelimit", `"default";r=4;t=10`)...)
	b.add("trace", 200, 200, xq(5, 3, resetAt, "ratelimit-policy", `"default";q=5;w=10`, "ratelimit", `"default";r=2;t=10`)...)
	b.add("trace", 300, 429, "retry-after", "10")
	rep := b.grade(fw)
	check(t, rep, "quota.present-on-success", Pass)
	c := check(t, rep, "quota.consistent", Fail)
	if !strings.Contains(c.Actual, "X-RateLimit-Remaining 3 but RateLimit r 2") || !slices.Equal(c.Seqs, []int{2}) {
		t.Errorf("%s %v", c.Actual, c.Seqs)
	}

	b = newBuilder()
	b.add("trace", 100, 200, xq(5, 4, resetAt)...)
	b.add("trace", 200, 200, xq(6, 3, resetAt)...)
	b.add("trace", 300, 429, "retry-after", "10")
	check(t, b.grade(fw), "quota.consistent", Warn) // the limit moved

	b = newBuilder()
	b.add("trace", 100, 200)
	b.add("trace", 200, 200, xq(5, 3, resetAt)...)
	b.add("trace", 300, 429, "retry-after", "10")
	check(t, b.grade(fw), "quota.present-on-success", Warn)
}

func TestResetSane(t *testing.T) {
	for _, tc := range []struct {
		reset string
		want  string
	}{
		{fmt.Sprint(resetAt), Pass},                             // 10 s ahead, window 10 s
		{"7", Pass},                                             // delta seconds
		{fmt.Sprint(t0.Unix() - 5), Fail},                       // in the past
		{fmt.Sprint(t0.Add(time.Minute).Unix()), Fail},          // 60 s for a 10 s window
		{fmt.Sprint(t0.Add(5 * time.Second).UnixMilli()), Warn}, // epoch ms
	} {
		b := newBuilder()
		b.add("trace", 100, 200, "x-ratelimit-limit", "5", "x-ratelimit-remaining", "4", "x-ratelimit-reset", tc.reset)
		b.add("trace", 200, 429, "retry-after", "10")
		c, _ := b.grade(fw).Check("reset.sane")
		if c.Outcome != tc.want {
			t.Errorf("reset %s: %s (%s), want %s", tc.reset, c.Outcome, c.Actual, tc.want)
		}
	}
	// IETF t beyond twice w.
	b := newBuilder()
	b.add("trace", 100, 200, "ratelimit-policy", `"p";q=5;w=10`, "ratelimit", `"p";r=4;t=30`)
	b.add("trace", 200, 429, "retry-after", "10")
	check(t, b.grade(fw), "reset.sane", Fail)
}

func TestLimitAgreesAndOverAdmission(t *testing.T) {
	// Seven admitted in one instant against an advertised 5.
	b := newBuilder()
	b.burst([]int{4, 3, 2, 1, 0, 0, 0}, 2)
	rep := b.grade(fw)
	c := check(t, rep, "burst.over-admission", Fail)
	if len(c.Seqs) != 7 {
		t.Errorf("seqs %v", c.Seqs)
	}
	check(t, rep, "limit.agrees", Fail)

	// Advertised 10 where the inference says 5 and the run agrees: a
	// window of 10 would have admitted the two rejected.
	b = newBuilder()
	for i, r := range []int{9, 8, 7, 6, 5} {
		b.add("burst", 100+0.01*float64(i), 200, xq(10, r, resetAt)...)
	}
	for i := range 2 {
		b.add("burst", 100.1+0.01*float64(i), 429, xq(10, 0, resetAt, "retry-after", "10")...)
	}
	c = check(t, b.grade(fw), "limit.agrees", Fail)
	if !strings.Contains(c.Actual, "gets 2 of 7 decisions wrong") {
		t.Errorf("%s", c.Actual)
	}
	check(t, b.grade(fw), "burst.over-admission", Pass)
	// ... but not when the inference is unsure: then it is not compared,
	// and a burst within the limit proves nothing either.
	inf := fw
	inf.Confidence = 0.3
	c = check(t, b.grade(inf), "limit.agrees", Skip)
	if !strings.Contains(c.Actual, "confidence 0.30") {
		t.Errorf("%s", c.Actual)
	}
	inf.Family = probe.Inconclusive
	check(t, b.grade(inf), "limit.agrees", Skip)
	// A burst over the advertised limit disagrees whatever the inference.
	b = newBuilder()
	b.burst([]int{4, 3, 2, 1, 0, 0, 0}, 2)
	check(t, b.grade(inf), "limit.agrees", Fail)

	// Advertised 5 where the inference says 10 but 5 explains the run as
	// well: the inference's number is not held against the header.
	b = newBuilder()
	b.burst([]int{4, 3, 2, 1, 0}, 2)
	inf = fw
	inf.Limit = 10
	c = check(t, b.grade(inf), "limit.agrees", Pass)
	if !strings.Contains(c.Actual, "explains the decisions as well") {
		t.Errorf("%s", c.Actual)
	}
}

// A limit per connection: a burst over seven fresh connections is seven
// clients' first requests, each with 4 of 5 left, not an over-admission;
// the same answers from results that do not name their connection are.
func TestPerConnectionBurstIsManyClients(t *testing.T) {
	build := func(conns bool) *builder {
		b := newBuilder()
		for i := range 7 {
			r := b.add("burst", 100+0.01*float64(i), 200, xq(5, 4, resetAt)...)
			if conns {
				r.Conn = int64(i + 1)
			}
		}
		// The scope trials: the probe's own connection exhausted, a
		// fresh one admitted three times, its own still rejected.
		for i, st := range []struct {
			phase  string
			status int
		}{{"scope-ref", 429}, {"scope-conn", 200}, {"scope-conn", 200}, {"scope-conn", 200}, {"scope-ref", 429}} {
			kv := xq(5, 0, resetAt, "retry-after", "10")
			if st.status == 200 {
				kv = xq(5, 4, resetAt)
			}
			r := b.add(st.phase, 5000+float64(i), st.status, kv...)
			if conns {
				r.Conn = 100
				if st.phase == "scope-conn" {
					r.Conn = int64(200 + i)
				}
			}
		}
		return b
	}
	inf := fw
	inf.Scope = probe.ScopePerConnection
	rep := build(true).grade(inf)
	check(t, rep, "burst.over-admission", Skip)
	for _, id := range []string{"remaining.truthful", "limit.agrees"} {
		if c, _ := rep.Check(id); c.Outcome == Fail {
			t.Errorf("%s: %s", id, c.Actual)
		}
	}
	rep = build(false).grade(inf)
	check(t, rep, "burst.over-admission", Fail)
	check(t, rep, "remaining.truthful", Fail)
}

// A burst over two keys is two clients' bursts: the second key's seven
// admissions against an advertised 5 are an over-admission even when the
// key sent first stayed within its quota.
func TestOverAdmissionJudgesEveryKeyOfABurst(t *testing.T) {
	b := newBuilder()
	for i, r := range []int{4, 3, 2} {
		b.add("burst", 100+0.01*float64(i), 200, xq(5, r, resetAt)...).Key = "a"
	}
	for i, r := range []int{4, 3, 2, 1, 0, 0, 0} {
		b.add("burst", 100.05+0.01*float64(i), 200, xq(5, r, resetAt)...).Key = "b"
	}
	c := check(t, b.grade(fw), "burst.over-admission", Fail)
	if !strings.Contains(c.Actual, "7 admitted") {
		t.Errorf("%s", c.Actual)
	}
}

// A wall-aligned window may admit two quotas across a boundary in one
// burst: that burst proves nothing.
func TestBurstAcrossWindowBoundary(t *testing.T) {
	b := newBuilder()
	b.obs.Start = t0.Add(-100050 * time.Microsecond) // the burst at 100 ms straddles t0, a multiple of 10 s
	b.burst([]int{4, 3, 2, 1, 0, 4, 3, 2, 1, 0}, 2)
	check(t, b.grade(fw), "burst.over-admission", Skip)
}

func TestStorable(t *testing.T) {
	for cc, want := range map[string]bool{
		"":                              false,
		"no-store":                      false,
		"no-store, max-age=60":          false,
		"max-age=60":                    true,
		"public":                        true,
		"private":                       true,
		"s-maxage=5":                    true,
		"max-age=0":                     false,
		"no-cache":                      false,
		`max-age="60", must-revalidate`: true,
	} {
		if got, _ := storable(cc); got != want {
			t.Errorf("storable(%q) = %v", cc, got)
		}
	}
	b := newBuilder()
	b.add("burst", 100, 503, "retry-after", "1", "cache-control", "max-age=60")
	check(t, b.grade(fw), "cache.429", Warn) // RFC 6585 speaks of 429
	b.add("burst", 101, 429, "retry-after", "1", "cache-control", "max-age=60")
	check(t, b.grade(fw), "cache.429", Fail)
}

func TestProblemJSON(t *testing.T) {
	b := newBuilder()
	r := b.add("burst", 100, 429, "retry-after", "1")
	r.Body = `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","status":503}`
	c := check(t, b.grade(fw), "problem.json", Warn)
	if !strings.Contains(c.Actual, "problem status 503 on a 429") {
		t.Errorf("%s", c.Actual)
	}
	// A body cut at 1 KiB is judged by its media type.
	r.Body = `{"type":"about:blank","detail":"` + strings.Repeat("x", 1100)
	r.Body = r.Body[:1024]
	check(t, b.grade(fw), "problem.json", Pass)
}

// The JSON shape other tools read.
func TestReportJSON(t *testing.T) {
	b := newBuilder()
	b.burst([]int{4, 3, 2, 1, 0}, 2)
	out, err := json.Marshal(b.grade(fw))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Letter string   `json:"letter"`
		Score  *int     `json:"score"`
		Caps   []string `json:"caps"`
		Checks []struct {
			ID, Outcome, Severity, Source, Expected, Actual string
			Seqs                                            []int
		} `json:"checks"`
		Rubric string `json:"rubric_version"`
	}
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	if m.Letter == "" || m.Score == nil || m.Caps == nil || len(m.Checks) != len(rubric) || m.Rubric != RubricVersion {
		t.Fatalf("%s", out)
	}
	for _, c := range m.Checks {
		if c.ID == "" || c.Source == "" || !slices.Contains([]string{Pass, Warn, Fail, Skip}, c.Outcome) {
			t.Errorf("check %+v", c)
		}
	}
}

// The server's own headers say a burst spanned a window reset (two
// X-RateLimit-Reset values one policy window apart) even when the inference
// was misled by that very burst: the burst is not judged as over-admitting.
func TestBurstAcrossResetByHeadersAlone(t *testing.T) {
	b := newBuilder()
	policy := []string{"ratelimit-policy", `"default";q=5;w=10`}
	for i, r := range []int{4, 3, 2, 1, 0} {
		b.add("burst", 100+0.01*float64(i), 200, xq(5, r, resetAt, policy...)...)
	}
	for i, r := range []int{4, 3, 2, 1, 0} {
		b.add("burst", 100.06+0.01*float64(i), 200, xq(5, r, resetAt+10, policy...)...)
	}
	misled := probe.Inference{Family: "token_bucket", RatePerS: 1, Burst: 10, Confidence: 0.02}
	check(t, b.grade(misled), "burst.over-admission", Skip)
	// One reset value: the same ten admissions are an over-admission.
	b = newBuilder()
	for i, r := range []int{4, 3, 2, 1, 0, 4, 3, 2, 1, 0} {
		b.add("burst", 100+0.01*float64(i), 200, xq(5, r, resetAt, policy...)...)
	}
	check(t, b.grade(misled), "burst.over-admission", Fail)
}

// reset.accurate: capacity is back, and the quota whole, when a reset waited
// for in silence says.
func TestResetAccurate(t *testing.T) {
	epoch := func(msFromT0 float64) string { return fmt.Sprint(t0.Add(ms(msFromT0)).Unix()) }
	for _, tc := range []struct {
		name     string
		build    func(b *builder)
		want     string
		contains string
	}{
		{"whole when it said", func(b *builder) {
			b.add("trace", 100, 429, xq(5, 0, resetAt)...)
			b.add("reset-wait", 10001, 200, xq(5, 4, resetAt+10)...)
		}, Pass, "all 1 stated resets"},
		{"rejected after the stated instant", func(b *builder) {
			b.add("trace", 100, 429, xq(5, 0, resetAt)...)
			b.add("reset-wait", 10021, 429, xq(5, 0, resetAt+1)...)
		}, Fail, "sent in silence 21 ms after that instant, was rejected"},
		{"admitted but not whole", func(b *builder) {
			b.add("trace", 100, 429, xq(5, 0, resetAt)...)
			b.add("reset-wait", 10001, 200, xq(5, 1, resetAt+10)...)
		}, Fail, "had only 1 of 5 left"},
		{"RateLimit t: more quota, not necessarily whole", func(b *builder) {
			b.add("trace", 100, 429, "ratelimit-policy", `"p";q=5;w=10`, "ratelimit", `"p";r=0;t=2`)
			b.add("reset-wait", 2102, 200, "ratelimit-policy", `"p";q=5;w=10`, "ratelimit", `"p";r=1;t=2`)
		}, Pass, "RateLimit t 2"},
		{"RateLimit t early", func(b *builder) {
			b.add("trace", 100, 429, "ratelimit-policy", `"p";q=5;w=10`, "ratelimit", `"p";r=0;t=0`)
			b.add("reset-wait", 120, 429, "ratelimit-policy", `"p";q=5;w=10`, "ratelimit", `"p";r=0;t=0`)
		}, Fail, "RateLimit t 0"},
		{"the knocking in between is no test", func(b *builder) {
			b.add("trace", 100, 429, xq(5, 0, resetAt)...)
			b.add("trace", 5000, 429, xq(5, 0, resetAt+5)...) // a restarted window
			b.add("trace", 10021, 429, xq(5, 0, resetAt+10)...)
		}, Skip, "no request was sent in silence"},
		{"a whole quota with a reset ahead", func(b *builder) {
			b.add("trace", 100, 200, xq(5, 5, resetAt)...)
			b.add("trace", 200, 429, xq(5, 0, resetAt)...)
		}, Fail, "5 of 5 left (the quota is whole) yet X-RateLimit-Reset"},
		// Requests the view leaves out may have drawn on the quota: a
		// trial of another identity while the scope is untested, or a
		// failed request of the probe's own (the server may have decided
		// it) — a stated reset is then not waited for in silence.
		{"another identity's trial in between, scope untested", func(b *builder) {
			b.add("trace", 100, 429, xq(5, 0, resetAt)...)
			b.add("scope-ip", 5000, 200, xq(5, 4, resetAt+5)...)
			b.add("reset-wait", 10001, 200, xq(5, 1, resetAt+10)...)
		}, Skip, "no request was sent in silence"},
		{"a failed request of the probe's own in between", func(b *builder) {
			b.add("trace", 100, 429, xq(5, 0, resetAt)...)
			f := b.add("trace", 5000, 0)
			f.Error, f.Headers, f.Body = "timeout waiting for 127.0.0.1:1", nil, ""
			b.add("reset-wait", 10001, 200, xq(5, 1, resetAt+10)...)
		}, Skip, "no request was sent in silence"},
		{"delta seconds from the response", func(b *builder) {
			b.add("trace", 100, 429, "x-ratelimit-limit", "5", "x-ratelimit-remaining", "0", "x-ratelimit-reset", "3")
			b.add("reset-wait", 3102, 200, "x-ratelimit-limit", "5", "x-ratelimit-remaining", "4", "x-ratelimit-reset", epoch(13000))
		}, Pass, ""},
	} {
		b := newBuilder()
		tc.build(b)
		c, _ := b.grade(fw).Check("reset.accurate")
		if c.Outcome != tc.want || !strings.Contains(c.Actual, tc.contains) {
			t.Errorf("%s: %s (%s), want %s containing %q", tc.name, c.Outcome, c.Actual, tc.want, tc.contains)
		}
		if c.Outcome == Fail && len(c.Seqs) == 0 {
			t.Errorf("%s: no seqs", tc.name)
		}
	}
	check(t, newBuilder().grade(fw), "reset.accurate", Skip)
}

// X-Rate-Limit-Limit: 5.00 beside RateLimit-Limit: 5 is a wart, not an
// inconsistency; the vendor field -Duration is read; texts name the fields
// actually sent.
func TestNonIntegerLimitAndFieldNames(t *testing.T) {
	b := newBuilder()
	for i, rem := range []int{4, 3} {
		b.add("trace", 100+100*float64(i), 200, "x-rate-limit-limit", "5.00", "x-rate-limit-remaining", fmt.Sprint(rem), "x-rate-limit-duration", "1",
			"ratelimit-limit", "5", "ratelimit-remaining", fmt.Sprint(rem), "ratelimit-reset", "1")
	}
	b.add("trace", 300, 429, "retry-after", "1")
	rep := b.grade(fw)
	c := check(t, rep, "quota.consistent", Warn)
	for _, want := range []string{`X-Rate-Limit-Limit "5.00" is not an integer; read as 5`, "X-Rate-Limit-Duration 1"} {
		if !strings.Contains(c.Actual, want) {
			t.Errorf("consistent %q lacks %q", c.Actual, want)
		}
	}
	c = check(t, rep, "limit.agrees", Pass)
	if !strings.Contains(c.Actual, "X-Rate-Limit-Limit 5") || !strings.Contains(c.Actual, "RateLimit-Limit 5") || strings.Contains(c.Actual, "RateLimit-Policy") {
		t.Errorf("limit.agrees %q should name X-Rate-Limit-Limit and RateLimit-Limit", c.Actual)
	}
	// An IETF draft-06 reset beyond twice the window is RateLimit-Reset, not "RateLimit t".
	b = newBuilder()
	b.add("trace", 100, 200, "ratelimit-limit", "5", "ratelimit-remaining", "4", "ratelimit-reset", "30")
	b.add("trace", 200, 429, "retry-after", "10")
	c = check(t, b.grade(fw), "reset.sane", Fail)
	if !strings.Contains(c.Actual, "RateLimit-Reset 30") {
		t.Errorf("reset.sane %q", c.Actual)
	}
}

// A window restarted by every over-limit request: the inference (whose
// models count no rejected request) stretches its limit and window to
// explain the lockout, but the advertised policy — 10 per 2 s, with the
// restart — reproduces every decision: the limit agrees.
func TestLimitAgreesWithARestartedWindow(t *testing.T) {
	lim, err := limiter.New(limiter.Config{Algo: limiter.FixedWindow, Limit: 10, Window: 2 * time.Second, Align: limiter.AlignWall, Penalty: limiter.PenaltyRestart})
	if err != nil {
		t.Fatal(err)
	}
	b := newBuilder()
	send := func(phase string, at float64) *results.Result {
		d := lim.Allow("", t0.Add(ms(at+0.5))) // decided half a round trip after the send
		kv := xq(10, d.Remaining, t0.Add(ms(at)+d.Reset+time.Second-1).Unix(), "ratelimit-policy", `"default";q=10;w=2`)
		if !d.Allowed {
			return b.add(phase, at, 429, append(kv, "retry-after", fmt.Sprint(int(d.RetryAfter.Seconds()+0.999)))...)
		}
		return b.add(phase, at, 200, kv...)
	}
	// Calibration at the end of one wall window, the burst in the next:
	// 13 admitted in under a second, which a long first-aligned window of
	// 12 or 13 explains better than 10 without the restart.
	for _, at := range []float64{1500, 1700, 1900} {
		send("calibrate", at)
	}
	for i := range 30 {
		send("burst", 2100+0.01*float64(i))
	}
	at := 2200.0
	for cycle := range 3 {
		for ; at < 2200+float64(cycle+1)*6000; at += 50 { // knocking: locked out
			send("trace", at)
		}
		last := at - 50
		at = last + 2011 // silent for the Retry-After
		for range 12 {
			send("retry-wait", at)
			at += 20
		}
	}
	// What the inference said of such a probe: limit 12 per 12.6 s. With 10
	// in its place it gets more decisions wrong; with the advertised policy
	// and the restart, none but the boundary's.
	inf := probe.Inference{Family: limiter.FixedWindow, Limit: 12, WindowS: 12.6, Alignment: limiter.AlignFirst, Confidence: 0.62}
	c := check(t, b.grade(inf), "limit.agrees", Pass)
	if !strings.Contains(c.Actual, "explains the decisions as well") {
		t.Errorf("%s", c.Actual)
	}
}
