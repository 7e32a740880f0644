package headers

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func TestParseXRateLimitVendors(t *testing.T) {
	gitHubDate := time.Unix(1372697273, 0).UTC()
	tests := []struct {
		name      string
		h         http.Header
		date      time.Time
		spelling  string
		limit     int64
		remaining int64
		unit      ResetUnit
		resetAt   time.Time
		resetIn   time.Duration
		inKnown   bool
		finding   string
	}{
		{
			name: "GitHub epoch seconds",
			h: hdr("x-ratelimit-limit", "5000", "x-ratelimit-remaining", "4999", "x-ratelimit-used", "1",
				"x-ratelimit-reset", "1372700873", "x-ratelimit-resource", "core"),
			date: gitHubDate, spelling: SpellingXRateLimit, limit: 5000, remaining: 4999,
			unit: ResetEpochSeconds, resetAt: time.Unix(1372700873, 0), resetIn: time.Hour, inKnown: true,
		},
		{
			name:     "X/Twitter dashed spelling",
			h:        hdr("x-rate-limit-limit", "900", "x-rate-limit-remaining", "899", "x-rate-limit-reset", "1700000900"),
			date:     time.Unix(1700000000, 0),
			spelling: SpellingXRateDashed, limit: 900, remaining: 899,
			unit: ResetEpochSeconds, resetAt: time.Unix(1700000900, 0), resetIn: 15 * time.Minute, inKnown: true,
		},
		{
			name:     "Okta without a Date header",
			h:        hdr("X-Rate-Limit-Limit", "600", "X-Rate-Limit-Remaining", "599", "X-Rate-Limit-Reset", "1609459200"),
			spelling: SpellingXRateDashed, limit: 600, remaining: 599,
			unit: ResetEpochSeconds, resetAt: time.Unix(1609459200, 0), inKnown: false,
		},
		{
			name:     "Discord fractional epoch seconds",
			h:        hdr("X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "1", "X-RateLimit-Reset", "1470173023.123", "X-RateLimit-Reset-After", "1.2", "X-RateLimit-Bucket", "abcd1234"),
			date:     time.Unix(1470173022, 0),
			spelling: SpellingXRateLimit, limit: 5, remaining: 1,
			unit: ResetEpochSeconds, resetAt: time.Unix(1470173023, 123e6), resetIn: 1123 * time.Millisecond, inKnown: true,
		},
		{
			name:     "throttled delta seconds",
			h:        hdr("X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "9", "X-RateLimit-Reset", "60"),
			spelling: SpellingXRateLimit, limit: 10, remaining: 9,
			unit: ResetDeltaSeconds, resetIn: time.Minute, inKnown: true,
		},
		{
			name:     "delta seconds anchored on Date",
			h:        hdr("X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "9", "X-RateLimit-Reset", "0.5"),
			date:     rfcDate,
			spelling: SpellingXRateLimit, limit: 10, remaining: 9,
			unit: ResetDeltaSeconds, resetAt: rfcDate.Add(500 * time.Millisecond), resetIn: 500 * time.Millisecond, inKnown: true,
		},
		{
			name:     "epoch milliseconds",
			h:        hdr("X-RateLimit-Limit", "100", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1700000030123"),
			date:     time.Unix(1700000000, 0),
			spelling: SpellingXRateLimit, limit: 100, remaining: 0,
			unit: ResetEpochMillis, resetAt: time.UnixMilli(1700000030123), resetIn: 30123 * time.Millisecond, inKnown: true,
		},
		{
			name:     "sethvargo RFC1123 UTC date",
			h:        hdr("X-RateLimit-Limit", "100", "X-RateLimit-Remaining", "99", "X-RateLimit-Reset", "Mon, 02 Jan 2006 15:04:05 UTC"),
			date:     time.Date(2006, 1, 2, 15, 3, 5, 0, time.UTC),
			spelling: SpellingXRateLimit, limit: 100, remaining: 99,
			unit: ResetDate, resetAt: time.Date(2006, 1, 2, 15, 4, 5, 0, time.UTC), resetIn: time.Minute, inKnown: true,
			finding: "date in UTC (Go time.RFC1123)",
		},
		{
			name:     "reset in the past",
			h:        hdr("X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "10", "X-RateLimit-Reset", "1700000000"),
			date:     time.Unix(1700000100, 0),
			spelling: SpellingXRateLimit, limit: 10, remaining: 10,
			unit: ResetEpochSeconds, resetAt: time.Unix(1700000000, 0), resetIn: -100 * time.Second, inKnown: true,
			finding: "before the response Date",
		},
		{
			name:     "remaining above limit",
			h:        hdr("X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "11", "X-RateLimit-Reset", "5"),
			spelling: SpellingXRateLimit, limit: 10, remaining: 11,
			unit: ResetDeltaSeconds, resetIn: 5 * time.Second, inKnown: true,
			finding: "exceeds",
		},
		{
			name:     "used + remaining != limit",
			h:        hdr("X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "50", "X-RateLimit-Used", "5"),
			spelling: SpellingXRateLimit, limit: 60, remaining: 50,
			finding: "≠",
		},
		{
			name:     "both spellings",
			h:        hdr("X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "50", "X-Rate-Limit-Limit", "60"),
			spelling: SpellingXRateLimit, limit: 60, remaining: 50,
			finding: "both X-RateLimit-* and X-Rate-Limit-*",
		},
		{
			name:     "non-canonical map keys",
			h:        http.Header{"x-ratelimit-limit": {"5"}, "x-ratelimit-remaining": {"4"}},
			spelling: SpellingXRateLimit, limit: 5, remaining: 4,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := ParseXRateLimit(tt.h, tt.date)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if x.Spelling != tt.spelling || x.Limit.Value != tt.limit || x.Remaining.Value != tt.remaining {
				t.Fatalf("got spelling %q limit %d remaining %d", x.Spelling, x.Limit.Value, x.Remaining.Value)
			}
			if x.ResetUnit != tt.unit || !x.ResetAt.Equal(tt.resetAt) || x.ResetIn != tt.resetIn || x.ResetInKnown != tt.inKnown {
				t.Fatalf("reset: unit %q at %v in %v known %v; want %q %v %v %v",
					x.ResetUnit, x.ResetAt, x.ResetIn, x.ResetInKnown, tt.unit, tt.resetAt, tt.resetIn, tt.inKnown)
			}
			if tt.finding == "" && len(x.Findings) > 0 {
				t.Fatalf("unexpected findings %q", x.Findings)
			}
			if tt.finding != "" && !containsSub(x.Findings, tt.finding) {
				t.Fatalf("findings %q lack %q", x.Findings, tt.finding)
			}
		})
	}
}

func TestParseXRateLimitGitHubFields(t *testing.T) {
	x, err := ParseXRateLimit(hdr("X-RateLimit-Limit", "5000", "X-RateLimit-Used", "1", "X-RateLimit-Remaining", "4999", "X-RateLimit-Resource", "core"), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if !x.Used.Present || x.Used.Value != 1 || x.Used.Raw != "1" {
		t.Errorf("Used = %+v", x.Used)
	}
	if x.Resource != (TextField{Present: true, Value: "core"}) {
		t.Errorf("Resource = %+v", x.Resource)
	}
	if x.Reset.Present || x.ResetUnit != "" {
		t.Errorf("absent Reset = %+v unit %q", x.Reset, x.ResetUnit)
	}
}

func TestParseXRateLimitAbsent(t *testing.T) {
	x, err := ParseXRateLimit(hdr("RateLimit", `"default";r=1`), time.Now())
	if err != nil || x.Spelling != "" || x.Limit.Present || x.Reset.Present || len(x.Findings) != 0 {
		t.Fatalf("got %+v, %v", x, err)
	}
}

// A malformed field has its own error; the others are still read.
func TestParseXRateLimitMalformed(t *testing.T) {
	tests := []struct {
		name  string
		h     http.Header
		field func(XRateLimit) error
		want  string
	}{
		{"limit not a number", hdr("X-RateLimit-Limit", "abc", "X-RateLimit-Remaining", "4"), func(x XRateLimit) error { return x.Limit.Err }, "not a non-negative integer"},
		{"negative remaining", hdr("X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "-1"), func(x XRateLimit) error { return x.Remaining.Err }, "negative"},
		{"decimal point without digits", hdr("X-RateLimit-Limit", "5.", "X-RateLimit-Remaining", "4"), func(x XRateLimit) error { return x.Limit.Err }, "not a whole number"},
		{"duration not a number", hdr("X-Rate-Limit-Remaining", "4", "X-Rate-Limit-Duration", "1m"), func(x XRateLimit) error { return x.Duration.Err }, "not a number"},
		{"signed limit", hdr("X-RateLimit-Limit", "+5", "X-RateLimit-Remaining", "4"), func(x XRateLimit) error { return x.Limit.Err }, "sign"},
		{"IETF policy list in X- field", hdr("X-RateLimit-Limit", "10, 10;w=1", "X-RateLimit-Remaining", "4"), func(x XRateLimit) error { return x.Limit.Err }, "a list of values"},
		{"two field lines", hdr("X-RateLimit-Limit", "5", "X-RateLimit-Limit", "6", "X-RateLimit-Remaining", "4"), func(x XRateLimit) error { return x.Limit.Err }, "2 field lines"},
		{"huge limit", hdr("X-RateLimit-Limit", "99999999999999999999", "X-RateLimit-Remaining", "4"), func(x XRateLimit) error { return x.Limit.Err }, "implausibly large"},
		{"empty limit", hdr("X-RateLimit-Limit", "", "X-RateLimit-Remaining", "4"), func(x XRateLimit) error { return x.Limit.Err }, "empty value"},
		{"reset exponent", hdr("X-RateLimit-Remaining", "4", "X-RateLimit-Reset", "1e9"), func(x XRateLimit) error { return x.Reset.Err }, "not a number"},
		{"reset negative", hdr("X-RateLimit-Remaining", "4", "X-RateLimit-Reset", "-5"), func(x XRateLimit) error { return x.Reset.Err }, "negative"},
		{"reset Inf", hdr("X-RateLimit-Remaining", "4", "X-RateLimit-Reset", "Inf"), func(x XRateLimit) error { return x.Reset.Err }, "neither a number nor a date"},
		{"reset trailing dot", hdr("X-RateLimit-Remaining", "4", "X-RateLimit-Reset", "5."), func(x XRateLimit) error { return x.Reset.Err }, "not a number"},
		{"reset huge", hdr("X-RateLimit-Remaining", "4", "X-RateLimit-Reset", "99999999999999999999"), func(x XRateLimit) error { return x.Reset.Err }, "implausibly large"},
		{"reset two lines", hdr("X-RateLimit-Remaining", "4", "X-RateLimit-Reset", "5", "X-RateLimit-Reset", "6"), func(x XRateLimit) error { return x.Reset.Err }, "2 field lines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := ParseXRateLimit(tt.h, time.Time{})
			if err == nil {
				t.Fatal("want an error")
			}
			fe := tt.field(x)
			if fe == nil || !strings.Contains(fe.Error(), tt.want) {
				t.Fatalf("field error %v, want %q", fe, tt.want)
			}
			if !strings.Contains(err.Error(), fe.Error()) {
				t.Fatalf("joined error %q lacks field error %q", err, fe)
			}
			if !x.Remaining.Present || x.Remaining.Err != nil && tt.name != "negative remaining" {
				t.Fatalf("Remaining was not read alongside: %+v", x.Remaining)
			}
		})
	}
}

// A decimal limit is a wart, read and reported, not an error; the vendor
// field -Duration is read as the window.
func TestParseXRateLimitDecimalAndDuration(t *testing.T) {
	x, err := ParseXRateLimit(hdr("X-Rate-Limit-Limit", "5.00", "X-Rate-Limit-Remaining", "4", "X-Rate-Limit-Duration", "1"), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if x.Limit.Value != 5 || !x.Limit.NonInteger || x.Remaining.NonInteger || !x.Duration.Present || x.Duration.Seconds != 1 {
		t.Fatalf("%+v", x)
	}
	if len(x.Findings) != 1 || !strings.Contains(x.Findings[0], `X-Rate-Limit-Limit "5.00" is not an integer; read as 5`) {
		t.Fatalf("findings %q", x.Findings)
	}
	x, _ = ParseXRateLimit(hdr("X-RateLimit-Duration", "60"), time.Time{})
	if x.Spelling != SpellingXRateLimit || x.Duration.Seconds != 60 {
		t.Fatalf("-Duration alone: %+v", x)
	}
}
