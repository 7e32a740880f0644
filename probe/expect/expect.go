// Package expect states what a rate limiter should be — "family=token_bucket",
// "rate=10/s±10%", "status=429" — and checks a probe's findings against it.
// Everything here is a pure function of its arguments: Parse reads an
// expectation, Evaluate compares a list of them with Facts gathered from one
// probe, and the caller decides what to do with the outcomes (ratecheck check
// turns them into an exit code).
//
// An expectation the probe did not exercise (no rejection seen, so no status
// to compare; no second key sent, so no scope; an inconclusive inference) is
// Untested, never passed; so is a number whose measured ± reaches past the
// tolerance (interval.go).
package expect

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"
)

// Keys an expectation can state.
const (
	KeyFamily      = "family"       // a targets family: token_bucket, fixed_window, ...
	KeyRate        = "rate"         // sustained rate: 10/s, 600/m; ± tolerance
	KeyBurst       = "burst"        // bucket capacity / nginx queue; ± tolerance
	KeyLimit       = "limit"        // L of a window family; ± tolerance
	KeyWindow      = "window"       // W of a window family: 60s, 1m; ± tolerance
	KeyMaxInflight = "max-inflight" // a concurrency cap; ± tolerance
	KeyStatus      = "status"       // the rejection status: 429, or 429,503
	KeyRetryAfter  = "retry-after"  // present or absent on every rejection
	KeyScope       = "scope"        // per_key, per_ip, per_connection or global (per-key spellings too)
	KeyMinGrade    = "min-grade"    // the response-contract grade is at least this letter
	KeyBypass      = "bypass"       // none: no bypass trial got around the limit
)

// keys lists every key, in the order outcomes are reported.
var keys = [...]string{KeyFamily, KeyRate, KeyBurst, KeyLimit, KeyWindow, KeyMaxInflight,
	KeyStatus, KeyRetryAfter, KeyScope, KeyMinGrade, KeyBypass}

// Keys lists every key, in the order outcomes are reported (a new slice).
func Keys() []string { return append([]string(nil), keys[:]...) }

// Outcomes of one expectation.
const (
	Pass     = "pass"
	Fail     = "fail"
	Untested = "untested" // the run did not exercise it: never a pass
)

// Default relative tolerances when none is written: the rate and the
// window are continuous measurements and never come out round; counts
// (burst, limit, max-inflight) are exact unless a tolerance is given.
const (
	DefaultRateTolerance   = 0.10
	DefaultWindowTolerance = 0.10
)

// Expectation is one parsed KEY=VALUE.
type Expectation struct {
	Key string `json:"key"`
	// Text is the expectation as written, e.g. "rate=10/s±10%".
	Text string `json:"text"`
	// Words holds the value of family, status, retry-after, scope and
	// min-grade (status: every accepted code as a string).
	Words []string `json:"words,omitempty"`
	// Num is the numeric value: per second (rate), a count (burst, limit,
	// max-inflight) or seconds (window).
	Num float64 `json:"num,omitempty"`
	// Tol is the tolerance in Num's unit; RelTol, when > 0, is the
	// tolerance as a share of Num as written ("10%"). HasTol says a
	// tolerance was written (else the key's default applies).
	Tol    float64 `json:"tol,omitempty"`
	RelTol float64 `json:"rel_tol,omitempty"`
	HasTol bool    `json:"has_tol,omitempty"`
}

// NormalizeKey lower-cases a key and accepts '_' for '-' (YAML style:
// retry_after, max_inflight, min_grade).
func NormalizeKey(k string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(k)), "_", "-")
}

// Parse reads one "KEY=VALUE" expectation.
func Parse(s string) (Expectation, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return Expectation{}, fmt.Errorf("expectation %q: write it as KEY=VALUE, e.g. family=token_bucket or rate=10/s±10%% (keys: %s)", s, strings.Join(keys[:], ", "))
	}
	return ParseKV(k, v)
}

// ParseKV reads one expectation given as a key and a value.
func ParseKV(key, value string) (Expectation, error) {
	k := NormalizeKey(key)
	v := strings.TrimSpace(value)
	e := Expectation{Key: k, Text: k + "=" + v}
	if !slices.Contains(keys[:], k) {
		return e, fmt.Errorf("unknown expectation key %q: use one of %s", key, strings.Join(keys[:], ", "))
	}
	if v == "" {
		return e, fmt.Errorf("expectation %s: the value is empty", k)
	}
	bad := func(format string, a ...any) (Expectation, error) {
		return e, fmt.Errorf("expectation %s: %s", e.Text, fmt.Sprintf(format, a...))
	}
	switch k {
	case KeyFamily:
		f := strings.ToLower(v)
		if !slices.Contains(limiter.Families(), f) {
			return bad("unknown family %q: use one of %s", v, strings.Join(limiter.Families(), ", "))
		}
		e.Words = []string{f}
	case KeyStatus:
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			n, err := strconv.Atoi(part)
			if err != nil || n < 100 || n > 599 {
				return bad("%q is not an HTTP status (write e.g. 429, or 429,503 for either)", part)
			}
			e.Words = append(e.Words, strconv.Itoa(n))
		}
	case KeyRetryAfter:
		w := strings.ToLower(v)
		if w != "present" && w != "absent" {
			return bad("use present or absent")
		}
		e.Words = []string{w}
	case KeyScope:
		w := strings.ReplaceAll(strings.ToLower(v), "-", "_")
		if !slices.Contains(scopeWords, w) {
			return bad("use per_key, per_ip, per_connection or global (per-key, per-ip and per-connection also work)")
		}
		e.Words = []string{w}
	case KeyBypass:
		if w := strings.ToLower(v); w != "none" {
			return bad("use none (no bypass trial gets around the limit)")
		}
		e.Words = []string{"none"}
	case KeyMinGrade:
		w := strings.ToUpper(v)
		if !slices.Contains(gradeLetters, w) {
			return bad("use a letter: %s", strings.Join(gradeLetters, ", "))
		}
		e.Words = []string{w}
	default:
		num, tol, err := splitTolerance(v)
		if err != nil {
			return bad("%v", err)
		}
		parse := numParser(k)
		if k == KeyRate {
			e.Num, err = limiter.ParseRate(num) // a rate needs its unit; a tolerance may be bare
		} else {
			e.Num, err = parse(num)
		}
		if err != nil {
			return bad("%v", err)
		}
		if tol != "" {
			e.HasTol = true
			if pct, ok := strings.CutSuffix(tol, "%"); ok {
				p, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
				if err != nil || p < 0 || math.IsNaN(p) || math.IsInf(p, 0) {
					return bad("tolerance %q is not a percentage", tol)
				}
				e.RelTol = p / 100
				e.Tol = e.Num * e.RelTol
			} else if e.Tol, err = parse(tol); err != nil {
				return bad("tolerance: %v", err)
			}
		}
	}
	return e, nil
}

// splitTolerance cuts "10/s±10%" (or "10/s+-10%", "10/s +/- 1/s") into its
// value and tolerance.
func splitTolerance(v string) (num, tol string, err error) {
	for _, sep := range []string{"±", "+/-", "+-"} {
		if a, b, ok := strings.Cut(v, sep); ok {
			a, b = strings.TrimSpace(a), strings.TrimSpace(b)
			if b == "" {
				return "", "", errors.New("the tolerance after ± is empty")
			}
			return a, b, nil
		}
	}
	return v, "", nil
}

// numParser reads a value (or an absolute tolerance) of key in its unit.
func numParser(key string) func(string) (float64, error) {
	switch key {
	case KeyRate:
		return func(s string) (float64, error) {
			if !strings.Contains(s, "/") { // a bare tolerance "1" means 1/s
				f, err := strconv.ParseFloat(s, 64)
				if err != nil || f < 0 {
					return 0, fmt.Errorf("%q is not a rate (write e.g. 10/s or 600/m)", s)
				}
				return f, nil
			}
			return limiter.ParseRate(s)
		}
	case KeyWindow:
		return func(s string) (float64, error) {
			d, err := time.ParseDuration(s)
			if err != nil || d < 0 {
				return 0, fmt.Errorf("%q is not a duration (write e.g. 60s or 1m)", s)
			}
			return d.Seconds(), nil
		}
	}
	return func(s string) (float64, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%q is not a whole number ≥ 0", s)
		}
		return float64(n), nil
	}
}

// ParseAll parses every expectation, stopping at the first error.
func ParseAll(ss []string) ([]Expectation, error) {
	out := make([]Expectation, 0, len(ss))
	for _, s := range ss {
		e, err := Parse(s)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// tolerance is the absolute tolerance of e and how to say it.
func (e Expectation) tolerance() (abs float64, text string) {
	switch {
	case e.HasTol && e.RelTol > 0:
		return e.Tol, fmt.Sprintf("± %s%%", fnum(e.RelTol*100))
	case e.HasTol:
		return e.Tol, "± " + e.unit(e.Tol)
	case e.Key == KeyRate:
		return e.Num * DefaultRateTolerance, fmt.Sprintf("± %s%% (default)", fnum(DefaultRateTolerance*100))
	case e.Key == KeyWindow:
		return e.Num * DefaultWindowTolerance, fmt.Sprintf("± %s%% (default)", fnum(DefaultWindowTolerance*100))
	}
	return 0, ""
}

// unit formats a number in e's unit.
func (e Expectation) unit(v float64) string { return fnum(v) + e.unitSuffix() }

// unitSuffix is e's unit as written after a number: "/s", "s" or none.
func (e Expectation) unitSuffix() string {
	switch e.Key {
	case KeyRate:
		return "/s"
	case KeyWindow:
		return "s"
	}
	return ""
}

// Expected says what e asks for, in words.
func (e Expectation) Expected() string {
	switch e.Key {
	case KeyFamily:
		return e.Words[0]
	case KeyStatus:
		return "every rejection is " + strings.Join(e.Words, " or ")
	case KeyRetryAfter:
		if e.Words[0] == "present" {
			return "Retry-After on every rejection"
		}
		return "no Retry-After on any rejection"
	case KeyScope:
		return e.Words[0]
	case KeyMinGrade:
		return "grade " + e.Words[0] + " or better"
	case KeyBypass:
		return "no bypass trial gets around the limit"
	}
	tol, text := e.tolerance()
	s := e.unit(e.Num)
	if text != "" {
		s += " " + text
		if tol > 0 {
			s += fmt.Sprintf(" (%s – %s)", e.unit(math.Max(0, e.Num-tol)), e.unit(e.Num+tol))
		}
	}
	return s
}

func fnum(v float64) string {
	return strings.TrimRight(strings.TrimRight(strconv.FormatFloat(v, 'f', 3, 64), "0"), ".")
}

// scopeWords are the scopes an expectation can name (probe.Scope*); the
// hyphenated spellings of earlier versions read as these.
var scopeWords = []string{"per_key", "per_ip", "per_connection", "global"}
