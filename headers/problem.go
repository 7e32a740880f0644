package headers

// RFC 9457 problem details, as a rate limiter may send them with a 429 or
// 503 (the RateLimit drafts -09/-10 register quota-exceeded and friends with a
// "violated-policies" extension).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/url"
	"strconv"
)

// MediaTypeProblemJSON is the media type of JSON problem details (RFC 9457 §3).
const MediaTypeProblemJSON = "application/problem+json"

// AboutBlank is the problem type assumed when "type" is absent (RFC 9457 §4.2.1).
const AboutBlank = "about:blank"

// Problem types registered by draft-ietf-httpapi-ratelimit-headers-10 §5.
const (
	ProblemQuotaExceeded            = "https://iana.org/assignments/http-problem-types#quota-exceeded"
	ProblemTemporaryReducedCapacity = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"
	ProblemAbnormalUsageDetected    = "https://iana.org/assignments/http-problem-types#abnormal-usage-detected"
)

// Problem is a parsed RFC 9457 problem details object.
type Problem struct {
	// Type is the problem type URI reference; AboutBlank when absent or
	// not a string. It is "" only when the body sent "type": "".
	Type string
	// TypePresent is set when the body carried a usable "type" member.
	TypePresent bool
	Title       string
	// Status is the advisory status code, nil when absent or not an integer.
	// RFC 9457 §3.1.2 wants it to equal the response's actual status; the
	// caller knows that status and can compare.
	Status   *int
	Detail   string
	Instance string
	// Extensions holds every member other than the five standard ones, as
	// decoded by encoding/json with numbers kept as json.Number
	// (RFC 9457 §3.2).
	Extensions map[string]any
	// ViolatedPolicies is the "violated-policies" extension (draft-10 §5)
	// when it is an array of strings; it stays in Extensions too.
	ViolatedPolicies []string
	// Findings are members that had the wrong JSON type and were ignored,
	// as RFC 9457 §3.1 requires, and other oddities that do not stop parsing.
	Findings []string
}

// ParseProblem parses a problem details response. contentType is the
// Content-Type field value. A wrong media type is an error, but a body that
// is still a JSON object is parsed anyway so that the caller can grade it.
// Members with the wrong type are ignored and listed in Findings, never
// fatal (RFC 9457 §3.1).
func ParseProblem(contentType string, body []byte) (Problem, error) {
	var errs []error
	if err := checkProblemMediaType(contentType); err != nil {
		errs = append(errs, err)
	}
	p, err := parseProblemBody(body)
	if err != nil {
		errs = append(errs, err)
	}
	return p, errors.Join(errs...)
}

func checkProblemMediaType(contentType string) error {
	if contentType == "" {
		return fmt.Errorf("problem details: no Content-Type; expected %s (RFC 9457 §3)", MediaTypeProblemJSON)
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return fmt.Errorf("problem details: Content-Type %q: %v", contentType, err)
	}
	switch mt {
	case MediaTypeProblemJSON:
		return nil
	case "application/problem+xml":
		return fmt.Errorf("problem details: Content-Type %q is the XML format (RFC 9457 Appendix B), which is not read", contentType)
	}
	return fmt.Errorf("problem details: Content-Type %q; problem details use %s (RFC 9457 §3)", contentType, MediaTypeProblemJSON)
}

func parseProblemBody(body []byte) (Problem, error) {
	p := Problem{Type: AboutBlank}
	if len(bytes.TrimSpace(body)) == 0 {
		return p, errors.New("problem details: empty body; expected a JSON object (RFC 9457 §3)")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return p, fmt.Errorf("problem details: body is not JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return p, errors.New("problem details: data after the JSON object")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return p, fmt.Errorf("problem details: body is a JSON %s; RFC 9457 §3 requires an object", jsonKind(v))
	}
	for _, k := range duplicateKeys(body) {
		p.Findings = append(p.Findings, fmt.Sprintf("member %q appears more than once; the last value was used", k))
	}

	str := func(key string) (string, bool) {
		raw, ok := obj[key]
		if !ok {
			return "", false
		}
		s, ok := raw.(string)
		if !ok {
			p.Findings = append(p.Findings, fmt.Sprintf("%q is a JSON %s, not a string; ignored (RFC 9457 §3.1)", key, jsonKind(raw)))
		}
		return s, ok
	}
	if s, ok := str("type"); ok {
		p.Type, p.TypePresent = s, true
		if s == "" {
			// A valid (empty) URI reference, but it resolves to the
			// response's own URI, which identifies no problem type.
			p.Findings = append(p.Findings, "\"type\" is an empty string; use \"about:blank\" or omit it (RFC 9457 §3.1.1)")
		} else if _, err := url.Parse(s); err != nil {
			p.Findings = append(p.Findings, fmt.Sprintf("\"type\" %q is not a URI reference (RFC 9457 §3.1.1)", s))
		}
	}
	p.Title, _ = str("title")
	p.Detail, _ = str("detail")
	if s, ok := str("instance"); ok {
		p.Instance = s
		if _, err := url.Parse(s); err != nil {
			p.Findings = append(p.Findings, fmt.Sprintf("\"instance\" %q is not a URI reference (RFC 9457 §3.1.5)", s))
		}
	}
	if raw, ok := obj["status"]; ok {
		p.readStatus(raw)
	}

	for k, val := range obj {
		switch k {
		case "type", "title", "status", "detail", "instance":
			continue
		}
		if p.Extensions == nil {
			p.Extensions = map[string]any{}
		}
		p.Extensions[k] = val
	}
	if raw, ok := obj["violated-policies"]; ok {
		p.readViolatedPolicies(raw)
	}
	return p, nil
}

// readStatus accepts a JSON number that is an integer (RFC 9457 §3.1.2).
func (p *Problem) readStatus(raw any) {
	n, ok := raw.(json.Number)
	if !ok {
		p.Findings = append(p.Findings, fmt.Sprintf("\"status\" is a JSON %s, not a number; ignored (RFC 9457 §3.1)", jsonKind(raw)))
		return
	}
	i, err := strconv.ParseInt(n.String(), 10, 32)
	if err != nil {
		p.Findings = append(p.Findings, fmt.Sprintf("\"status\" %s is not an integer status code; ignored (RFC 9457 §3.1.2)", n))
		return
	}
	s := int(i)
	p.Status = &s
	if s < 100 || s > 599 {
		p.Findings = append(p.Findings, fmt.Sprintf("\"status\" %d is not an HTTP status code (100-599)", s))
	}
}

func (p *Problem) readViolatedPolicies(raw any) {
	arr, ok := raw.([]any)
	if !ok {
		p.Findings = append(p.Findings, fmt.Sprintf("\"violated-policies\" is a JSON %s; draft-10 §5 defines an array of strings", jsonKind(raw)))
		return
	}
	names := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			p.Findings = append(p.Findings, fmt.Sprintf("\"violated-policies\"[%d] is a JSON %s, not a string; ignored", i, jsonKind(e)))
			continue
		}
		names = append(names, s)
	}
	p.ViolatedPolicies = names
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// duplicateKeys lists top-level member names that occur more than once.
// encoding/json silently keeps the last; other parsers keep the first, so a
// duplicate means clients may disagree (RFC 8259 §4: names SHOULD be unique).
func duplicateKeys(body []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	seen := map[string]int{}
	var dups []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return dups
		}
		k, ok := t.(string)
		if !ok {
			return dups
		}
		if seen[k]++; seen[k] == 2 {
			dups = append(dups, k)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return dups
		}
	}
	return dups
}
