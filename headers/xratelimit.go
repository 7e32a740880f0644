package headers

// X-RateLimit-* is a vendor convention, not a standard: there is no grammar
// to violate, only conventions to recognise (see headers.md). The parser
// therefore accepts what vendors send, works out what a Reset number means,
// and reports inconsistencies as findings.

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header-name prefixes of the two spellings in use.
const (
	SpellingXRateLimit  = "X-RateLimit"  // GitHub, Discord, throttled, express-rate-limit
	SpellingXRateDashed = "X-Rate-Limit" // X/Twitter, Okta
)

// ResetUnit says how an X-RateLimit-Reset value was interpreted.
type ResetUnit string

// Reset units. A number above 1e12 is taken as epoch milliseconds, above 1e9
// as epoch seconds, otherwise as seconds from now (headers.md).
const (
	ResetEpochMillis  ResetUnit = "epoch-ms"
	ResetEpochSeconds ResetUnit = "epoch-s"
	ResetDeltaSeconds ResetUnit = "delta-s"
	ResetDate         ResetUnit = "date" // a date string (sethvargo/go-limiter)
)

const (
	epochSecondsThreshold = 1e9
	epochMillisThreshold  = 1e12
	// maxResetNumber bounds Reset so every later conversion stays in range
	// (1e16 ms is the year 318857).
	maxResetNumber = 1e16
	// maxXInteger bounds Limit/Remaining/Used well inside int64.
	maxXInteger = 1e15
)

// IntField is one integer-valued X-RateLimit field.
type IntField struct {
	Present bool   // the field was sent
	Raw     string // the field value as sent (lines joined with ", ")
	Value   int64  // valid when Present and Err is nil
	Err     error  // why Raw is not a non-negative number
	// NonInteger is set when Raw was a decimal ("5.00", as one Okta-style
	// library sends): a wart, not an error; Value is it rounded to the
	// nearest integer.
	NonInteger bool
}

// SecondsField is a field holding a number of seconds, such as the vendor
// field X-Rate-Limit-Duration (the window length).
type SecondsField struct {
	Present bool
	Raw     string
	Seconds float64 // valid when Present and Err is nil
	Err     error
}

// ResetField is the X-RateLimit-Reset field.
type ResetField struct {
	Present bool
	Raw     string
	// Value is the number as sent (seconds or milliseconds, possibly
	// fractional); zero for a date.
	Value float64
	Err   error
}

// TextField is a free-text field such as X-RateLimit-Resource.
type TextField struct {
	Present bool
	Value   string
}

// XRateLimit is what the X-RateLimit-* / X-Rate-Limit-* fields said.
type XRateLimit struct {
	// Spelling is SpellingXRateLimit or SpellingXRateDashed, whichever was
	// read, or "" when no field of either was present. When both were sent,
	// X-RateLimit is read and BothSpellings is set.
	Spelling      string
	BothSpellings bool

	Limit     IntField
	Remaining IntField
	Used      IntField // GitHub
	Reset     ResetField
	Resource  TextField // GitHub
	// Duration is the vendor field -Duration: the window in seconds
	// (express-rate-limit-style libraries sending X-Rate-Limit-*).
	Duration SecondsField

	// ResetUnit is how Reset was read; "" when Reset is absent or invalid.
	ResetUnit ResetUnit
	// ResetAt is the absolute reset time: from the epoch value or date, or
	// Date + delta; zero when it cannot be known.
	ResetAt time.Time
	// ResetIn is the time until reset, relative to the response Date header
	// (for epoch values and dates) or the delta itself. ResetInKnown is false
	// when an absolute value came without a Date header to measure from.
	ResetIn      time.Duration
	ResetInKnown bool

	// Findings are inconsistencies between fields (Remaining > Limit, Used +
	// Remaining ≠ Limit, a reset in the past, both spellings sent).
	Findings []string
}

// ParseXRateLimit reads the X-RateLimit-Limit/-Remaining/-Reset/-Used/
// -Resource fields, or their X-Rate-Limit-* spelling, from h. date is the
// response's Date header (zero if absent). Absent fields have Present false;
// a malformed field carries its own Err and does not stop the others from
// being read. The returned error joins the per-field errors.
func ParseXRateLimit(h http.Header, date time.Time) (XRateLimit, error) {
	var x XRateLimit
	names := []string{"-Limit", "-Remaining", "-Reset", "-Used", "-Resource", "-Duration"}
	has := func(prefix string) bool {
		for _, n := range names {
			if len(fieldLines(h, prefix+n)) > 0 {
				return true
			}
		}
		return false
	}
	a, b := has(SpellingXRateLimit), has(SpellingXRateDashed)
	switch {
	case a:
		x.Spelling = SpellingXRateLimit
		if b {
			x.BothSpellings = true
			x.Findings = append(x.Findings, "both X-RateLimit-* and X-Rate-Limit-* fields were sent; X-RateLimit-* was read")
		}
	case b:
		x.Spelling = SpellingXRateDashed
	default:
		return x, nil
	}
	p := x.Spelling
	x.Limit = parseIntField(p+"-Limit", fieldLines(h, p+"-Limit"))
	x.Remaining = parseIntField(p+"-Remaining", fieldLines(h, p+"-Remaining"))
	x.Used = parseIntField(p+"-Used", fieldLines(h, p+"-Used"))
	if lines := fieldLines(h, p+"-Resource"); len(lines) > 0 {
		x.Resource = TextField{Present: true, Value: trimOWS(strings.Join(lines, ", "))}
	}
	x.parseReset(p+"-Reset", fieldLines(h, p+"-Reset"), date)
	x.Duration = parseSecondsField(p+"-Duration", fieldLines(h, p+"-Duration"))
	for _, f := range []struct {
		name string
		f    IntField
	}{{p + "-Limit", x.Limit}, {p + "-Remaining", x.Remaining}, {p + "-Used", x.Used}} {
		if f.f.NonInteger {
			x.Findings = append(x.Findings, fmt.Sprintf("%s %q is not an integer; read as %d", f.name, f.f.Raw, f.f.Value))
		}
	}
	x.crossCheck()

	var errs []error
	for _, e := range []error{x.Limit.Err, x.Remaining.Err, x.Reset.Err, x.Used.Err, x.Duration.Err} {
		if e != nil {
			errs = append(errs, e)
		}
	}
	return x, errors.Join(errs...)
}

func parseIntField(name string, lines []string) IntField {
	if len(lines) == 0 {
		return IntField{}
	}
	f := IntField{Present: true, Raw: strings.Join(lines, ", ")}
	if len(lines) > 1 {
		f.Err = fmt.Errorf("%s %q: sent as %d field lines; expected one integer", name, f.Raw, len(lines))
		return f
	}
	v := trimOWS(lines[0])
	if isDecimalNumber(v) && !allDigits(v) {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || n > maxXInteger {
			f.Err = fmt.Errorf("%s %q: implausibly large (more than 10^15)", name, f.Raw)
			return f
		}
		f.Value, f.NonInteger = int64(math.Round(n)), true
		return f
	}
	if !allDigits(v) {
		f.Err = fmt.Errorf("%s %q: %s", name, f.Raw, diagnoseNumber(v, false))
		return f
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n > maxXInteger {
		f.Err = fmt.Errorf("%s %q: implausibly large (more than 10^15)", name, f.Raw)
		return f
	}
	f.Value = n
	return f
}

func parseSecondsField(name string, lines []string) SecondsField {
	if len(lines) == 0 {
		return SecondsField{}
	}
	f := SecondsField{Present: true, Raw: strings.Join(lines, ", ")}
	v := trimOWS(f.Raw)
	if len(lines) > 1 || !isDecimalNumber(v) {
		f.Err = fmt.Errorf("%s %q: %s", name, f.Raw, diagnoseNumber(v, true))
		return f
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n > maxXInteger {
		f.Err = fmt.Errorf("%s %q: implausibly large", name, f.Raw)
		return f
	}
	f.Seconds = n
	return f
}

// diagnoseNumber explains why v is not a non-negative integer (or, with
// fraction, a non-negative decimal).
func diagnoseNumber(v string, fraction bool) string {
	switch {
	case v == "":
		return "empty value"
	case strings.Contains(v, ","):
		return "a list of values; expected a single number"
	case v[0] == '-':
		return "negative"
	case v[0] == '+':
		return "a number must not carry a sign"
	case !fraction && strings.Contains(v, "."):
		return "not a whole number"
	}
	if fraction {
		return "not a number (expected 1*DIGIT [\".\" 1*DIGIT])"
	}
	return "not a non-negative integer"
}

// isDecimalNumber matches 1*DIGIT [ "." 1*DIGIT ]; strconv.ParseFloat alone
// would also take "Inf", "1e9", "0x1p4" and underscores.
func isDecimalNumber(v string) bool {
	intPart, frac, hasDot := strings.Cut(v, ".")
	return allDigits(intPart) && (!hasDot || allDigits(frac))
}

func (x *XRateLimit) parseReset(name string, lines []string, date time.Time) {
	if len(lines) == 0 {
		return
	}
	f := ResetField{Present: true, Raw: strings.Join(lines, ", ")}
	defer func() { x.Reset = f }()
	if len(lines) > 1 {
		f.Err = fmt.Errorf("%s %q: sent as %d field lines; expected one value", name, f.Raw, len(lines))
		return
	}
	v := trimOWS(lines[0])
	if v != "" && isAlpha(v[0]) {
		x.parseResetDate(name, v, date, &f)
		return
	}
	if !isDecimalNumber(v) {
		f.Err = fmt.Errorf("%s %q: %s", name, f.Raw, diagnoseNumber(v, true))
		return
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n > maxResetNumber {
		f.Err = fmt.Errorf("%s %q: implausibly large", name, f.Raw)
		return
	}
	f.Value = n
	switch {
	case n > epochMillisThreshold:
		x.ResetUnit = ResetEpochMillis
		x.ResetAt = unixFloat(n / 1000)
	case n > epochSecondsThreshold:
		x.ResetUnit = ResetEpochSeconds
		x.ResetAt = unixFloat(n)
	default:
		x.ResetUnit = ResetDeltaSeconds
		x.ResetIn = time.Duration(math.Round(n * float64(time.Second)))
		x.ResetInKnown = true
		if !date.IsZero() {
			x.ResetAt = date.Add(x.ResetIn)
		}
		return
	}
	if !date.IsZero() {
		x.ResetIn = x.ResetAt.Sub(date)
		x.ResetInKnown = true
		if x.ResetIn < 0 {
			x.Findings = append(x.Findings, fmt.Sprintf("%s is %s before the response Date", name, -x.ResetIn))
		}
	}
}

// parseResetDate handles a Reset sent as a date. That is no convention for
// X-RateLimit-Reset, but sethvargo/go-limiter sends Go's time.RFC1123 in UTC;
// it is read (as GMT) and reported.
func (x *XRateLimit) parseResetDate(name, v string, date time.Time, f *ResetField) {
	d, err := parseHTTPDate(v, date)
	if err != nil {
		fixed, utc := strings.CutSuffix(v, " UTC")
		if !utc {
			f.Err = fmt.Errorf("%s %q: neither a number nor a date: %v", name, f.Raw, err)
			return
		}
		if d, err = parseHTTPDate(fixed+" GMT", date); err != nil {
			f.Err = fmt.Errorf("%s %q: neither a number nor a date: %v", name, f.Raw, err)
			return
		}
		x.Findings = append(x.Findings, fmt.Sprintf("%s %q is a date in UTC (Go time.RFC1123), not an HTTP-date; read as GMT", name, f.Raw))
	} else {
		x.Findings = append(x.Findings, fmt.Sprintf("%s %q is a date; clients expect a number of seconds", name, f.Raw))
	}
	x.ResetUnit = ResetDate
	x.ResetAt = d.Time
	if !date.IsZero() {
		x.ResetIn = d.Time.Sub(date)
		x.ResetInKnown = true
		if x.ResetIn < 0 {
			x.Findings = append(x.Findings, fmt.Sprintf("%s is %s before the response Date", name, -x.ResetIn))
		}
	}
}

// unixFloat converts fractional epoch seconds (Discord sends milliseconds
// after the point) to a time, rounding to the millisecond so that float noise
// does not show.
func unixFloat(sec float64) time.Time {
	whole := math.Floor(sec)
	ms := math.Round((sec - whole) * 1000)
	return time.Unix(int64(whole), int64(ms)*int64(time.Millisecond)).UTC()
}

func (x *XRateLimit) crossCheck() {
	ok := func(f IntField) bool { return f.Present && f.Err == nil }
	if ok(x.Limit) && ok(x.Remaining) && x.Remaining.Value > x.Limit.Value {
		x.Findings = append(x.Findings, fmt.Sprintf("%s-Remaining %d exceeds %s-Limit %d", x.Spelling, x.Remaining.Value, x.Spelling, x.Limit.Value))
	}
	if ok(x.Limit) && ok(x.Remaining) && ok(x.Used) && x.Used.Value+x.Remaining.Value != x.Limit.Value {
		x.Findings = append(x.Findings, fmt.Sprintf("%s-Used %d + -Remaining %d ≠ -Limit %d", x.Spelling, x.Used.Value, x.Remaining.Value, x.Limit.Value))
	}
}
