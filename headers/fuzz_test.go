package headers

import (
	"encoding/json"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Seeds live both here and in testdata/fuzz/<FuzzName>/ (vendor examples and
// any crashers found, kept as regression inputs).

// maxUnix keeps fuzzed Date headers within years 1970..9999 so that dates
// re-format as four-digit years.
const maxUnix = 253402300799

func fuzzDate(unix int64) time.Time {
	if unix == 0 {
		return time.Time{}
	}
	if unix < 0 {
		unix = -(unix + 1)
	}
	return time.Unix(unix%maxUnix, 0).UTC()
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{
		"120", "0", "007", "2.0", "-1", "+5", "120s", "1 20", "120, 60", "1700000000",
		"99999999999999999999999999",
		"Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
		"Mon, 02 Jan 2006 15:04:05 UTC", "Sat, 31 Dec 2016 23:59:60 GMT", "",
	} {
		f.Add(s, int64(0))
		f.Add(s, int64(784111777))
	}
	f.Fuzz(func(t *testing.T, value string, unix int64) {
		date := fuzzDate(unix)
		ra, err := ParseRetryAfter(value, date)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "retry-after ") {
				t.Fatalf("error does not name the field: %v", err)
			}
			if !reflect.DeepEqual(ra, RetryAfter{}) {
				t.Fatalf("error with a non-zero value: %+v", ra)
			}
			return
		}
		if ra.Delay < 0 {
			t.Fatalf("negative delay %v for %q", ra.Delay, value)
		}
		switch ra.Form {
		case RetryAfterDelay:
			// Round trip: the canonical delay-seconds parses to the same delay.
			if ra.Delay > MaxRetryAfterSeconds*time.Second || ra.Delay%time.Second != 0 {
				t.Fatalf("delay %v out of range for %q", ra.Delay, value)
			}
			canon := strconv.FormatInt(int64(ra.Delay/time.Second), 10)
			again, err := ParseRetryAfter(canon, date)
			if err != nil || again.Delay != ra.Delay || again.Form != RetryAfterDelay {
				t.Fatalf("round trip %q -> %q: %+v, %v", value, canon, again, err)
			}
			if !ra.Capped {
				if want := strings.TrimLeft(strings.Trim(value, " \t"), "0"); want != strings.TrimLeft(canon, "0") {
					t.Fatalf("delay %q parsed as %s", value, canon)
				}
			}
		case RetryAfterDate:
			// Round trip: the IMF-fixdate of At parses to the same instant.
			canon := ra.At.UTC().Format(http.TimeFormat)
			again, err := ParseRetryAfter(canon, date)
			if err != nil || !again.At.Equal(ra.At) || again.Obsolete {
				t.Fatalf("round trip %q -> %q: %+v, %v", value, canon, again, err)
			}
			if date.IsZero() && ra.Delay != 0 {
				t.Fatalf("delay %v without a Date header", ra.Delay)
			}
		default:
			t.Fatalf("unknown form %q", ra.Form)
		}
	})
}

func FuzzXRateLimit(f *testing.F) {
	f.Add("5000", "4999", "1372700873", "1", int64(1372697273))
	f.Add("5", "1", "1470173023.123", "", int64(1470173022))
	f.Add("10", "9", "60", "", int64(0))
	f.Add("100", "99", "Mon, 02 Jan 2006 15:04:05 UTC", "", int64(1136214185))
	f.Add("100", "0", "1700000030123", "", int64(1700000000))
	f.Add("10, 10;w=1", "-1", "1e9", "x", int64(0))
	f.Fuzz(func(t *testing.T, limit, remaining, reset, used string, unix int64) {
		h := http.Header{}
		set := func(name, v string) {
			if v != "" {
				h.Set(name, v)
			}
		}
		set("X-RateLimit-Limit", limit)
		set("X-RateLimit-Remaining", remaining)
		set("X-RateLimit-Reset", reset)
		set("X-RateLimit-Used", used)
		x, err := ParseXRateLimit(h, fuzzDate(unix))
		sent := limit != "" || remaining != "" || reset != "" || used != ""
		if (x.Spelling != "") != sent {
			t.Fatalf("Spelling %q with fields %v", x.Spelling, sent)
		}
		allOK := true
		for _, c := range []struct {
			raw string
			f   IntField
		}{{limit, x.Limit}, {remaining, x.Remaining}, {used, x.Used}} {
			if c.f.Present != (c.raw != "") {
				t.Fatalf("Present %v for %q", c.f.Present, c.raw)
			}
			if !c.f.Present {
				continue
			}
			if c.f.Err != nil {
				allOK = false
				continue
			}
			// Invariant: a parsed integer is non-negative and is what was
			// sent (rounded, for a decimal).
			if c.f.NonInteger {
				if n, _ := strconv.ParseFloat(trimOWS(c.raw), 64); c.f.Value < 0 || float64(c.f.Value) != math.Round(n) {
					t.Fatalf("%q parsed as %d", c.raw, c.f.Value)
				}
				continue
			}
			if c.f.Value < 0 || strconv.FormatInt(c.f.Value, 10) != canonDigits(trimOWS(c.raw)) {
				t.Fatalf("%q parsed as %d", c.raw, c.f.Value)
			}
		}
		if x.Reset.Present != (reset != "") {
			t.Fatalf("Reset.Present %v for %q", x.Reset.Present, reset)
		}
		if x.Reset.Err != nil {
			allOK = false
		}
		if (x.ResetUnit != "") != (x.Reset.Present && x.Reset.Err == nil) {
			t.Fatalf("ResetUnit %q with Reset %+v", x.ResetUnit, x.Reset)
		}
		if x.ResetUnit == ResetDeltaSeconds && (x.ResetIn < 0 || !x.ResetInKnown) {
			t.Fatalf("delta reset gives ResetIn %v known %v", x.ResetIn, x.ResetInKnown)
		}
		if (err == nil) != allOK {
			t.Fatalf("joined error %v but fields ok=%v", err, allOK)
		}
	})
}

// canonDigits strips leading zeros from a digit string.
func canonDigits(s string) string {
	s = strings.TrimLeft(s, "0")
	if s == "" {
		return "0"
	}
	return s
}

var knownGenerations = map[string]bool{
	"": true, GenerationDraft01to03: true, GenerationDraft04to06: true, GenerationDraft01to06: true,
	GenerationDraft07: true, GenerationDraft08to10: true,
}

func FuzzIETF(f *testing.F) {
	f.Add(`"default";r=50;t=30`, `"burst";q=100;w=60,"daily";q=1000;w=86400`, "", "", "")
	f.Add(`"5-in-1min"; r=0; t=42`, `"5-in-1min"; q=5; w=60; pk=:ZGVmYXVsdA==:`, "", "", "")
	f.Add("limit=5, remaining=0, reset=42", "5;w=60", "", "", "")
	f.Add("", "5;w=60", "5", "4", "42")
	f.Add("", "", "10, 10;w=1, 1000;w=3600", "5", "1")
	f.Add(`"p";r=150`, `"p";q=100;w=0`, "", "", "")
	f.Fuzz(func(t *testing.T, rl, policy, limit, remaining, reset string) {
		h := http.Header{}
		set := func(name, v string) {
			if v != "" {
				h.Set(name, v)
			}
		}
		set("RateLimit", rl)
		set("RateLimit-Policy", policy)
		set("RateLimit-Limit", limit)
		set("RateLimit-Remaining", remaining)
		set("RateLimit-Reset", reset)
		got, err := ParseIETF(h)
		sent := len(h) > 0
		if got.Present != sent {
			t.Fatalf("Present %v with %d fields", got.Present, len(h))
		}
		if !sent && (err != nil || got.Generation != "") {
			t.Fatalf("nothing sent but %+v, %v", got, err)
		}
		if !knownGenerations[got.Generation] {
			t.Fatalf("unknown generation %q", got.Generation)
		}
		for _, sl := range got.Current {
			if sl.Policy != "" && got.Generation != GenerationDraft08to10 {
				t.Fatalf("named service limit in %s", got.Generation)
			}
		}
		// Deterministic: the same headers give the same result and findings
		// in the same order.
		again, err2 := ParseIETF(h)
		if !reflect.DeepEqual(got, again) || (err == nil) != (err2 == nil) {
			t.Fatalf("not deterministic:\n%+v\n%+v", got, again)
		}
		// Splitting a field into two lines at a top-level comma must not
		// change policies or limits (RFC 9651 §4.2).
		if l, perr := ParseList(policy); perr == nil && len(l) >= 2 {
			first, _ := SerializeList(l[:1])
			rest, _ := SerializeList(l[1:])
			h2 := h.Clone()
			h2.Del("RateLimit-Policy")
			h2.Add("RateLimit-Policy", first)
			h2.Add("RateLimit-Policy", rest)
			split, _ := ParseIETF(h2)
			if !reflect.DeepEqual(split.Policies, got.Policies) {
				t.Fatalf("split lines changed policies:\n%+v\n%+v", split.Policies, got.Policies)
			}
		}
	})
}

func FuzzStructuredList(f *testing.F) {
	for _, s := range []string{
		"sugar, tea, rum", `("foo" "bar"), ("baz"), ("bat" "one"), ()`,
		`("foo"; a=1;b=2);lvl=5, ("bar" "baz");lvl=1`, `abc;a=1;b=2; cde_456, (ghi;jk=4 l);q="9";r=w`,
		`"burst";q=100;w=60,"daily";q=1000;w=86400`, `"peruser";q=65535;qu="content-bytes";w=10;pk=:sdfjLJUOUH==:`,
		"10, 10;w=1, 1000;w=3600", `1.5, -0.0, @1659578233, %"f%c3%bc", ?0, :iZ==:`, "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseList(s)
		if err != nil {
			return
		}
		out, err := SerializeList(l)
		if err != nil {
			t.Fatalf("parsed %q but cannot serialise %#v: %v", s, l, err)
		}
		l2, err := ParseList(out)
		if err != nil {
			t.Fatalf("serialised %q as %q, which does not parse: %v", s, out, err)
		}
		if !reflect.DeepEqual(normList(l), normList(l2)) {
			t.Fatalf("round trip changed the value:\n%q -> %q\n%#v\n%#v", s, out, l, l2)
		}
		if out2, _ := SerializeList(l2); out2 != out {
			t.Fatalf("serialisation is not canonical: %q then %q", out, out2)
		}
	})
}

func FuzzStructuredDictionary(f *testing.F) {
	for _, s := range []string{
		`en="Applepie", da=:w4ZibGV0w6ZydGUK:`, `a=?0, b, c; foo=bar`, `rating=1.5, feelings=(joy sadness)`,
		`a=(1 2), b=3, c=4;aa=bb, d=(5 6);valid`, "limit=100, remaining=50, reset=5", "a=1,b=2,a=3", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDictionary(s)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, e := range d {
			if seen[e.Key] {
				t.Fatalf("duplicate key %q survived parsing %q", e.Key, s)
			}
			seen[e.Key] = true
		}
		out, err := SerializeDictionary(d)
		if err != nil {
			t.Fatalf("parsed %q but cannot serialise: %v", s, err)
		}
		d2, err := ParseDictionary(out)
		if err != nil {
			t.Fatalf("serialised %q as %q, which does not parse: %v", s, out, err)
		}
		if !reflect.DeepEqual(normDict(d), normDict(d2)) {
			t.Fatalf("round trip changed the value:\n%q -> %q\n%#v\n%#v", s, out, d, d2)
		}
		if out2, _ := SerializeDictionary(d2); out2 != out {
			t.Fatalf("serialisation is not canonical: %q then %q", out, out2)
		}
	})
}

// normList and normDict make empty and nil Params compare equal; parsing
// never yields empty non-nil Params, but keep the comparison about values.
func normList(l List) List {
	out := make(List, len(l))
	for i, m := range l {
		out[i] = normMember(m)
	}
	return out
}

func normDict(d Dictionary) Dictionary {
	out := make(Dictionary, len(d))
	for i, e := range d {
		out[i] = DictEntry{Key: e.Key, Member: normMember(e.Member)}
	}
	return out
}

func normMember(m Member) Member {
	norm := func(it Item) Item {
		if len(it.Params) == 0 {
			it.Params = nil
		}
		return it
	}
	if m.Inner == nil {
		return Member{Item: norm(m.Item)}
	}
	il := &InnerList{Items: make([]Item, len(m.Inner.Items)), Params: m.Inner.Params}
	for i, it := range m.Inner.Items {
		il.Items[i] = norm(it)
	}
	if len(il.Params) == 0 {
		il.Params = nil
	}
	return Member{Inner: il}
}

func FuzzProblem(f *testing.F) {
	f.Add("application/problem+json", []byte(`{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request cannot be satisfied as assigned quota has been exceeded","violated-policies":["daily","bandwidth"]}`))
	f.Add("application/problem+json; charset=utf-8", []byte(`{"title":"Too Many Requests","status":429,"detail":"retry later","instance":"/x"}`))
	f.Add("application/json", []byte(`{"status":"429"}`))
	f.Add("application/problem+json", []byte(`{"status":429,"status":1e400,"violated-policies":[1,"a"]}`))
	f.Add("text/html", []byte(`<html>429</html>`))
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		p, err := ParseProblem(ct, body)
		if p.Type == "" && !p.TypePresent {
			t.Fatalf("empty Type without a type member (must default to %s)", AboutBlank)
		}
		if !p.TypePresent && p.Type != AboutBlank {
			t.Fatalf("Type %q without a type member", p.Type)
		}
		for _, k := range []string{"type", "title", "status", "detail", "instance"} {
			if _, ok := p.Extensions[k]; ok {
				t.Fatalf("standard member %q among extensions", k)
			}
		}
		if err != nil {
			return
		}
		// Round trip: re-encode the usable members and parse again.
		m := map[string]any{}
		for k, v := range p.Extensions {
			m[k] = v
		}
		if p.TypePresent {
			m["type"] = p.Type
		}
		if p.Status != nil {
			m["status"] = *p.Status
		}
		for k, v := range map[string]string{"title": p.Title, "detail": p.Detail, "instance": p.Instance} {
			if v != "" {
				m[k] = v
			}
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("re-encoding %#v: %v", m, err)
		}
		q, err := ParseProblem(MediaTypeProblemJSON, b)
		if err != nil {
			t.Fatalf("re-encoded %s does not parse: %v", b, err)
		}
		p.Findings, q.Findings = nil, nil
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip changed the problem:\n%#v\n%#v", p, q)
		}
	})
}
