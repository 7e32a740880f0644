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

// wire serialises the request as HTTP/1.1 bytes with key as the value of
// KeyHeader, and the extra header lines of a shot. Built once per distinct
// key and reused: the hot path then only writes a prepared slice.
// Wire is the request as it goes on an HTTP/1.1 connection, with key in
// the key header and extra header lines: what a simulated server reads.
func (r *Request) Wire(key string, extra ...string) []byte { return r.wire(key, extra...) }

func (r *Request) wire(key string, extra ...string) []byte {
	var b bytes.Buffer
	b.WriteString(r.Method)
	b.WriteByte(' ')
	b.WriteString(r.URL.RequestURI())
	b.WriteString(" HTTP/1.1\r\nHost: ")
	b.WriteString(r.host())
	b.WriteString("\r\n")
	if r.Header.Get("User-Agent") == "" {
		b.WriteString("User-Agent: ratecheck\r\n")
	}
	for name, values := range r.Header {
		if strings.EqualFold(name, "Host") {
			continue // written first, once
		}
		for _, v := range values {
			b.WriteString(name + ": " + v + "\r\n")
		}
	}
	if r.KeyHeader != "" && key != "" {
		b.WriteString(r.KeyHeader + ": " + key + "\r\n")
	}
	for _, line := range extra {
		b.WriteString(line + "\r\n")
	}
	if len(r.Body) > 0 || r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
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
