package attack

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// Request is the template every shot is built from.
type Request struct {
	Method string
	URL    *url.URL
	Header http.Header
	Body   []byte
	// KeyHeader, when set, carries each simulated client's key value
	// (e.g. X-Api-Key) so per-key scope can be tested.
	KeyHeader string
}

// ValidMethods says whether each of ms is an HTTP method token of
// capital letters, as a shot's Variation may send instead of the
// request's own (lower case would be another method to the server).
func ValidMethods(ms []string) bool {
	for _, m := range ms {
		if m == "" || strings.ContainsFunc(m, func(r rune) bool { return r < 'A' || r > 'Z' }) {
			return false
		}
	}
	return true
}

// NewRequest validates the pieces a user typed: method, URL, "Name: value"
// headers and a body (literal, or @file).
func NewRequest(method, rawURL string, headers []string, body string) (*Request, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("target %q is not an http(s) URL with a host, e.g. http://127.0.0.1:8080/", rawURL)
	}
	if u.Path == "" {
		u.Path = "/"
	}
	u.RawQuery = escapeQuery(u.RawQuery)
	if method == "" {
		method = http.MethodGet
	}
	if strings.ContainsAny(method, " \r\n\t:") {
		return nil, fmt.Errorf("method %q is not a valid HTTP method token", method)
	}
	r := &Request{Method: strings.ToUpper(method), URL: u, Header: http.Header{}}
	for _, h := range headers {
		name, value, ok := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return nil, fmt.Errorf("header %q: write it as 'Name: value'", h)
		}
		r.Header.Add(name, strings.TrimSpace(value))
	}
	if strings.HasPrefix(body, "@") {
		b, err := os.ReadFile(body[1:])
		if err != nil {
			return nil, fmt.Errorf("body %s: %w", body, err)
		}
		r.Body = b
	} else if body != "" {
		r.Body = []byte(body)
	}
	return r, nil
}

// Variation is how one shot's request differs from the run's own (the
// probe's scope and bypass trials); the zero value changes nothing.
type Variation struct {
	Method string // the method, when not the request's own
	Target string // the request-target (path and query), when not the own
	// Extra are header lines ("Name: value") added to this request; a
	// name among them replaces the request's own header of that name.
	Extra []string
	Drop  []string // names of the request's own headers left out (Cookie)
}

// varies reports a variation that changes something.
func (v Variation) varies() bool {
	return v.Method != "" || v.Target != "" || len(v.Extra) > 0 || len(v.Drop) > 0
}

// method and target are v's, or the request's own.
func (r *Request) method(v Variation) string {
	if v.Method != "" {
		return v.Method
	}
	return r.Method
}

func (r *Request) target(v Variation) string {
	if v.Target != "" {
		return v.Target
	}
	return r.URL.RequestURI()
}

// fields calls add with every header field of the request varied by v, in
// the order they go on the wire, but Host (HTTP/1.1 writes it first,
// HTTP/2 carries it as :authority) and Content-Length.
func (r *Request) fields(key string, v Variation, add func(name, value string)) {
	replaced := map[string]bool{}
	for _, line := range v.Extra {
		name, _, _ := strings.Cut(line, ":")
		replaced[strings.ToLower(strings.TrimSpace(name))] = true
	}
	for _, name := range v.Drop {
		replaced[strings.ToLower(name)] = true
	}
	if r.Header.Get("User-Agent") == "" && !replaced["user-agent"] {
		add("User-Agent", "ratecheck")
	}
	for name, values := range r.Header {
		if strings.EqualFold(name, "Host") || replaced[strings.ToLower(name)] {
			continue
		}
		for _, value := range values {
			add(name, value)
		}
	}
	if r.KeyHeader != "" && key != "" {
		add(r.KeyHeader, key)
	}
	for _, line := range v.Extra {
		name, value, _ := strings.Cut(line, ":")
		add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
}

// bodyLength says whether the request carries Content-Length: a body, or
// a method whose body may be empty but is expected.
func (r *Request) bodyLength(method string) bool {
	return len(r.Body) > 0 || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch
}

// Wire is the request as it goes on an HTTP/1.1 connection, with key in
// the key header and varied by v: what a simulated server reads.
func (r *Request) Wire(key string, v Variation) []byte { return r.wire(key, v) }

// wire serialises the request as HTTP/1.1 bytes with key as the value of
// KeyHeader, varied by v. Built once per distinct key and reused (the
// engine's wires): the hot path then only writes a prepared slice.
func (r *Request) wire(key string, v Variation) []byte {
	var b bytes.Buffer
	method := r.method(v)
	b.WriteString(method + " " + r.target(v) + " HTTP/1.1\r\nHost: " + r.host() + "\r\n")
	r.fields(key, v, func(name, value string) { b.WriteString(name + ": " + value + "\r\n") })
	if r.bodyLength(method) {
		b.WriteString("Content-Length: " + strconv.Itoa(len(r.Body)) + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(r.Body)
	return b.Bytes()
}

// host is the Host header: the user's, when given (a virtual host, a
// gateway routing on it), else the URL's authority.
func (r *Request) host() string {
	if h := r.Header.Get("Host"); h != "" {
		return h
	}
	return r.URL.Host
}

// escapeQuery percent-encodes the bytes that may not appear in a request
// line's query (RFC 3986 §3.4): a space would split the request line, and
// quotes, brackets and non-ASCII bytes are refused by strict servers. What
// is already encoded, and every character the query may hold, stays as
// typed — the limiter sees the query the user meant.
func escapeQuery(q string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		if queryByte(c) {
			if b.Len() > 0 {
				b.WriteByte(c)
			}
			continue
		}
		if b.Len() == 0 {
			b.WriteString(q[:i])
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	if b.Len() == 0 {
		return q
	}
	return b.String()
}

// queryByte: unreserved, sub-delims, ':', '@', '/', '?' and '%' (taken to
// start an escape the user wrote).
func queryByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!$&'()*+,;=:@/?%", c) >= 0
}
