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
// KeyHeader. Built once per distinct key and reused: the hot path then only
// writes a prepared slice.
func (r *Request) wire(key string) []byte {
	var b bytes.Buffer
	b.WriteString(r.Method)
	b.WriteByte(' ')
	b.WriteString(r.URL.RequestURI())
	b.WriteString(" HTTP/1.1\r\nHost: ")
	b.WriteString(r.URL.Host)
	b.WriteString("\r\nUser-Agent: ratecheck\r\n")
	for name, values := range r.Header {
		if strings.EqualFold(name, "Host") {
			continue
		}
		for _, v := range values {
			b.WriteString(name + ": " + v + "\r\n")
		}
	}
	if r.KeyHeader != "" && key != "" {
		b.WriteString(r.KeyHeader + ": " + key + "\r\n")
	}
	if len(r.Body) > 0 || r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
		b.WriteString("Content-Length: " + strconv.Itoa(len(r.Body)) + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(r.Body)
	return b.Bytes()
}
