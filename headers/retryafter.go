package headers

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Retry-After forms.
const (
	RetryAfterDelay = "delay" // delay-seconds
	RetryAfterDate  = "date"  // HTTP-date
)

// MaxRetryAfterSeconds caps delay-seconds. RFC 9110 §10.2.3 sets no limit;
// the cap borrows RFC 9111 §1.2.2's rule for delta-seconds (treat anything
// larger as 2^31) so that huge values cannot overflow time.Duration.
const MaxRetryAfterSeconds = 1 << 31

// epochLikeSeconds is where a delay stops being plausible and starts looking
// like a Unix timestamp (about 31.7 years).
const epochLikeSeconds = 1_000_000_000

// RetryAfter is a parsed Retry-After field value (RFC 9110 §10.2.3).
type RetryAfter struct {
	// Form is RetryAfterDelay or RetryAfterDate.
	Form string
	// Delay is how long the client is asked to wait. For the delay form it is
	// the delay-seconds value (capped at MaxRetryAfterSeconds). For the date
	// form it is At minus the response's Date header, clamped at zero, and
	// zero when no Date header was given.
	Delay time.Duration
	// At is the retry time: the HTTP-date itself, or the response Date plus
	// Delay for the delay form (zero when no Date header was given).
	At time.Time
	// Obsolete is set for rfc850-date and asctime-date, which recipients must
	// accept but senders must not generate (RFC 9110 §5.6.7).
	Obsolete bool
	// Capped is set when delay-seconds exceeded MaxRetryAfterSeconds.
	Capped bool
	// Findings are remarks on a value that parsed but is dubious (zero delay,
	// an epoch timestamp sent as delay-seconds, a date in the past, a
	// day-name that disagrees with the date).
	Findings []string
}

// ParseRetryAfter parses a Retry-After value. date is the response's Date
// header (zero if absent); it anchors a date value and resolves the
// two-digit year of rfc850-date (the clock is used for that alone when date
// is zero). Surrounding whitespace is ignored because it
// is not part of a field value (RFC 9110 §5.5); anything else that is not
// exactly delay-seconds or an HTTP-date is an error that names the rule it
// breaks.
func ParseRetryAfter(value string, date time.Time) (RetryAfter, error) {
	v := strings.Trim(value, " \t")
	if v == "" {
		return RetryAfter{}, fmt.Errorf("retry-after %q: empty value; expected delay-seconds or an HTTP-date (RFC 9110 §10.2.3)", value)
	}
	if allDigits(v) {
		return parseDelaySeconds(v, date), nil
	}
	if isAlpha(v[0]) {
		d, err := parseHTTPDate(v, date)
		if err != nil {
			return RetryAfter{}, fmt.Errorf("retry-after %q: not an HTTP-date: %v", value, err)
		}
		return dateRetryAfter(d, date), nil
	}
	return RetryAfter{}, fmt.Errorf("retry-after %q: %s (RFC 9110 §10.2.3)", value, diagnoseDelay(v))
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// parseDelaySeconds reads 1*DIGIT, saturating instead of overflowing.
func parseDelaySeconds(v string, date time.Time) RetryAfter {
	var n int64
	capped := false
	for i := 0; i < len(v); i++ {
		n = n*10 + int64(v[i]-'0')
		if n > MaxRetryAfterSeconds {
			n, capped = MaxRetryAfterSeconds, true
			break
		}
	}
	ra := RetryAfter{Form: RetryAfterDelay, Delay: time.Duration(n) * time.Second, Capped: capped}
	if !date.IsZero() {
		ra.At = date.Add(ra.Delay)
	}
	switch {
	case capped:
		ra.Findings = append(ra.Findings, fmt.Sprintf("delay-seconds %s exceeds 2^31 and was capped (RFC 9111 §1.2.2 by analogy)", truncate(v, 24)))
	case n >= epochLikeSeconds:
		ra.Findings = append(ra.Findings, fmt.Sprintf("delay-seconds %d looks like a Unix timestamp; Retry-After takes a delay or an HTTP-date", n))
	case n == 0:
		ra.Findings = append(ra.Findings, "delay-seconds 0 is valid but gives the client no back-off")
	}
	return ra
}

func dateRetryAfter(d httpDate, date time.Time) RetryAfter {
	ra := RetryAfter{Form: RetryAfterDate, At: d.Time, Obsolete: d.Obsolete()}
	if d.Obsolete() {
		ra.Findings = append(ra.Findings, fmt.Sprintf("obsolete %s; senders must use IMF-fixdate (RFC 9110 §5.6.7)", d.Form))
	}
	if d.WeekdayMismatch {
		ra.Findings = append(ra.Findings, fmt.Sprintf("day-name does not match the date (%s is a %s)", d.Time.Format("2006-01-02"), d.Time.Weekday()))
	}
	if !date.IsZero() {
		delay := d.Time.Sub(date) // Sub saturates rather than overflowing
		if delay < 0 {
			ra.Findings = append(ra.Findings, fmt.Sprintf("date is %s before the response Date; the client may retry at once", -delay))
			delay = 0
		}
		ra.Delay = delay
	}
	return ra
}

// diagnoseDelay explains why a value that does not start with a letter is
// not delay-seconds, naming the mistakes seen from real servers.
func diagnoseDelay(v string) string {
	lead := 0
	for lead < len(v) && isDigit(v[lead]) {
		lead++
	}
	rest := v[lead:]
	switch {
	case strings.Contains(v, ","):
		return "a list of values; Retry-After carries exactly one delay-seconds or HTTP-date"
	case v[0] == '-':
		return "delay-seconds cannot be negative (1*DIGIT, no sign)"
	case v[0] == '+':
		return "delay-seconds must not carry a sign (1*DIGIT)"
	case lead > 0 && rest[0] == '.':
		return "delay-seconds must be a whole number of seconds"
	case lead > 0 && allAlpha(strings.TrimLeft(rest, " \t")):
		return fmt.Sprintf("delay-seconds takes no unit suffix (found %q)", strings.TrimLeft(rest, " \t"))
	case strings.ContainsAny(v, " \t"):
		return "whitespace inside delay-seconds"
	}
	return "neither delay-seconds (1*DIGIT) nor an HTTP-date"
}

func allAlpha(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isAlpha(s[i]) {
			return false
		}
	}
	return s != ""
}

// ReadRetryAfterLeniently reads a Retry-After value the way a forgiving
// client would, so that its accuracy can be judged whatever its format's
// verdict: a valid value as ParseRetryAfter reads it, and besides a
// fractional number of seconds ("1.263", Shopify's "2.0") or an RFC 1123
// date in UTC instead of GMT (Go's time.RFC1123, sethvargo/go-limiter). Lenient
// is set when the value is not valid; ok is false when even a forgiving
// client could not read it.
func ReadRetryAfterLeniently(value string, date time.Time) (ra RetryAfter, lenient, ok bool) {
	if ra, err := ParseRetryAfter(value, date); err == nil {
		return ra, false, true
	}
	v := strings.Trim(value, " \t")
	if isDecimalNumber(v) {
		sec, err := strconv.ParseFloat(v, 64)
		if err != nil || sec > MaxRetryAfterSeconds {
			return RetryAfter{}, true, false
		}
		ra := RetryAfter{Form: RetryAfterDelay, Delay: time.Duration(math.Round(sec * float64(time.Second)))}
		if !date.IsZero() {
			ra.At = date.Add(ra.Delay)
		}
		return ra, true, true
	}
	if fixed, utc := strings.CutSuffix(v, " UTC"); utc {
		if d, err := parseHTTPDate(fixed+" GMT", date); err == nil {
			return dateRetryAfter(d, date), true, true
		}
	}
	return RetryAfter{}, true, false
}
