package headers

import (
	"strings"
	"testing"
	"time"
)

var rfcDate = time.Date(1994, time.November, 6, 8, 49, 37, 0, time.UTC)

func TestParseRetryAfterValid(t *testing.T) {
	respDate := rfcDate.Add(-37 * time.Second)
	tests := []struct {
		name     string
		in       string
		date     time.Time
		form     string
		delay    time.Duration
		at       time.Time
		obsolete bool
		capped   bool
		finding  string // substring of a finding; "" means no findings
	}{
		{"delay", "120", time.Time{}, RetryAfterDelay, 120 * time.Second, time.Time{}, false, false, ""},
		{"delay with Date", "120", respDate, RetryAfterDelay, 120 * time.Second, respDate.Add(120 * time.Second), false, false, ""},
		{"leading zeros", "007", time.Time{}, RetryAfterDelay, 7 * time.Second, time.Time{}, false, false, ""},
		{"surrounding OWS is not part of the value", " \t30 ", time.Time{}, RetryAfterDelay, 30 * time.Second, time.Time{}, false, false, ""},
		{"zero", "0", time.Time{}, RetryAfterDelay, 0, time.Time{}, false, false, "no back-off"},
		{"epoch seconds sent as a delay", "1700000000", time.Time{}, RetryAfterDelay, 1700000000 * time.Second, time.Time{}, false, false, "Unix timestamp"},
		{"huge delay is capped", "99999999999999999999999999", time.Time{}, RetryAfterDelay, MaxRetryAfterSeconds * time.Second, time.Time{}, false, true, "capped"},
		{"IMF-fixdate", "Sun, 06 Nov 1994 08:49:37 GMT", respDate, RetryAfterDate, 37 * time.Second, rfcDate, false, false, ""},
		{"IMF-fixdate without Date", "Sun, 06 Nov 1994 08:49:37 GMT", time.Time{}, RetryAfterDate, 0, rfcDate, false, false, ""},
		{"rfc850-date", "Sunday, 06-Nov-94 08:49:37 GMT", respDate, RetryAfterDate, 37 * time.Second, rfcDate, true, false, "obsolete rfc850-date"},
		{"asctime-date", "Sun Nov  6 08:49:37 1994", respDate, RetryAfterDate, 37 * time.Second, rfcDate, true, false, "obsolete asctime-date"},
		{"asctime-date two-digit day", "Thu Nov 10 08:49:37 1994", time.Time{}, RetryAfterDate, 0, time.Date(1994, 11, 10, 8, 49, 37, 0, time.UTC), true, false, "obsolete"},
		{"date in the past is clamped", "Sun, 06 Nov 1994 08:49:37 GMT", rfcDate.Add(time.Hour), RetryAfterDate, 0, rfcDate, false, false, "before the response Date"},
		{"day-name disagrees with date", "Mon, 06 Nov 1994 08:49:37 GMT", time.Time{}, RetryAfterDate, 0, rfcDate, false, false, "day-name does not match"},
		{"leap second", "Sat, 31 Dec 2016 23:59:60 GMT", time.Time{}, RetryAfterDate, 0, time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC), false, false, ""},
		{"29 February in a leap year", "Thu, 29 Feb 2024 00:00:00 GMT", time.Time{}, RetryAfterDate, 0, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRetryAfter(tt.in, tt.date)
			if err != nil {
				t.Fatalf("ParseRetryAfter(%q): %v", tt.in, err)
			}
			if got.Form != tt.form || got.Delay != tt.delay || !got.At.Equal(tt.at) || got.Obsolete != tt.obsolete || got.Capped != tt.capped {
				t.Fatalf("ParseRetryAfter(%q) = %+v; want form %s delay %v at %v obsolete %v capped %v",
					tt.in, got, tt.form, tt.delay, tt.at, tt.obsolete, tt.capped)
			}
			if tt.finding == "" && len(got.Findings) > 0 {
				t.Fatalf("unexpected findings %q", got.Findings)
			}
			if tt.finding != "" && !containsSub(got.Findings, tt.finding) {
				t.Fatalf("findings %q lack %q", got.Findings, tt.finding)
			}
		})
	}
}

// RFC 9110 §5.6.7: a two-digit year more than 50 years in the future is the
// most recent past year with those digits.
func TestRFC850TwoDigitYear(t *testing.T) {
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		in   string
		year int
	}{
		{"Sunday, 06-Nov-94 08:49:37 GMT", 1994},
		{"Sunday, 06-Nov-30 08:49:37 GMT", 2030},
		{"Sunday, 06-Nov-75 08:49:37 GMT", 2075},
		{"Sunday, 06-Nov-76 08:49:37 GMT", 1976},
	} {
		got, err := ParseRetryAfter(tt.in, now)
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if got.At.Year() != tt.year {
			t.Errorf("%q: year %d, want %d", tt.in, got.At.Year(), tt.year)
		}
	}
}

func TestParseRetryAfterInvalid(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "empty value"},
		{"only whitespace", "  ", "empty value"},
		{"Shopify decimal", "2.0", `retry-after "2.0": delay-seconds must be a whole number of seconds (RFC 9110 §10.2.3)`},
		{"fraction", "1.5", "whole number"},
		{"negative", "-1", "cannot be negative"},
		{"plus sign", "+5", "must not carry a sign"},
		{"unit suffix", "120s", `no unit suffix (found "s")`},
		{"unit word", "120 seconds", "no unit suffix"},
		{"whitespace inside", "1 20", "whitespace inside"},
		{"list", "120, 60", "a list of values"},
		{"list of dates", "Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT", "not an HTTP-date"},
		{"hex", "0x10", "neither delay-seconds"},
		{"sethvargo RFC1123 UTC", "Mon, 02 Jan 2006 15:04:05 UTC", "uses UTC; HTTP-date requires GMT"},
		{"lowercase gmt", "Sun, 06 Nov 1994 08:49:37 gmt", `"GMT" (case-sensitive`},
		{"numeric zone", "Sun, 06 Nov 1994 08:49:37 +0000", `zone "+0000" is not allowed`},
		{"RFC1123Z", "Sun, 06 Nov 1994 08:49:37 -0700", "HTTP-date requires GMT"},
		{"no zone", "Sun, 06 Nov 1994 08:49:37", "SP before the zone"},
		{"lowercase day-name", "sun, 06 Nov 1994 08:49:37 GMT", `must be written exactly "Sun"`},
		{"uppercase month", "Sun, 06 NOV 1994 08:49:37 GMT", `must be written exactly "Nov"`},
		{"not a month", "Sun, 06 Foo 1994 08:49:37 GMT", "is not a month"},
		{"single-digit day", "Sun, 6 Nov 1994 08:49:37 GMT", "day must be exactly two digits"},
		{"two-digit year in IMF-fixdate", "Sun, 06 Nov 94 08:49:37 GMT", "year must be exactly four digits"},
		{"31 February", "Sun, 31 Feb 1994 08:49:37 GMT", "does not exist"},
		{"29 February in a common year", "Sun, 29 Feb 2023 08:49:37 GMT", "does not exist"},
		{"hour 25", "Sun, 06 Nov 1994 25:49:37 GMT", "out of range"},
		{"single-digit hour", "Sun, 06 Nov 1994 8:49:37 GMT", "hour must be two digits"},
		{"trailing text", "Sun, 06 Nov 1994 08:49:37 GMTx", "after \"GMT\""},
		{"ISO 8601", "1994-11-06T08:49:37Z", "neither delay-seconds"},
		{"long day-name in IMF-fixdate", "Sunday, 06 Nov 1994 08:49:37 GMT", "'-' after the day"},
		{"short day-name in rfc850", "Sun, 06-Nov-94 08:49:37 GMT", "SP after the day"},
		{"asctime with zone", "Sun Nov  6 08:49:37 1994 GMT", "carries no zone"},
		{"asctime single-digit day without pad", "Sun Nov 6 08:49:37 1994", "asctime-date day"},
		{"word", "tomorrow", "expected ',' or SP"},
		{"non-ASCII", "１２０", "neither delay-seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRetryAfter(tt.in, rfcDate)
			if err == nil {
				t.Fatalf("ParseRetryAfter(%q) = %+v, want error containing %q", tt.in, got, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseRetryAfter(%q) error %q, want it to contain %q", tt.in, err, tt.want)
			}
		})
	}
}

func containsSub(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func TestReadRetryAfterLeniently(t *testing.T) {
	date := rfcDate.Add(-37 * time.Second)
	for _, tc := range []struct {
		in      string
		lenient bool
		ok      bool
		delay   time.Duration
		at      time.Time
	}{
		{"2", false, true, 2 * time.Second, date.Add(2 * time.Second)},
		{"Sun, 06 Nov 1994 08:49:37 GMT", false, true, 37 * time.Second, rfcDate},
		{"1.263", true, true, 1263 * time.Millisecond, date.Add(1263 * time.Millisecond)},
		{" 2.0 ", true, true, 2 * time.Second, date.Add(2 * time.Second)},
		{"Sun, 06 Nov 1994 08:49:37 UTC", true, true, 37 * time.Second, rfcDate},
		{"5s", true, false, 0, time.Time{}},
		{"-1", true, false, 0, time.Time{}},
		{"soon", true, false, 0, time.Time{}},
		{"1e3", true, false, 0, time.Time{}},
	} {
		ra, lenient, ok := ReadRetryAfterLeniently(tc.in, date)
		if lenient != tc.lenient || ok != tc.ok || ok && (ra.Delay != tc.delay || !ra.At.Equal(tc.at)) {
			t.Errorf("%q: %+v lenient %v ok %v; want delay %s at %s lenient %v ok %v", tc.in, ra, lenient, ok, tc.delay, tc.at, tc.lenient, tc.ok)
		}
	}
}
