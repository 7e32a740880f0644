package attack

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"time"
)

// stdClient sends through net/http: the https path, where HTTP/2 is used
// when the server offers it in ALPN.
type stdClient struct {
	c *http.Client
}

func newStdClient(timeout time.Duration, insecure bool, maxConns int) *stdClient {
	tr := &http.Transport{
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        maxConns,
		MaxIdleConnsPerHost: maxConns,
		DisableCompression:  true,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: insecure}, //nolint:gosec // the user asked for --insecure
	}
	return &stdClient{c: &http.Client{
		Transport: tr,
		Timeout:   timeout,
		// A limiter's answer is the response itself: never follow redirects.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (s *stdClient) do(ctx context.Context, req *http.Request, start time.Time, r *Result) {
	req = req.WithContext(ctx)
	r.Sent = time.Since(start)
	resp, err := s.c.Do(req)
	if err != nil {
		r.Done = time.Since(start)
		r.Error = describeNetErr(req.URL.Host, unwrapURLErr(err))
		return
	}
	defer resp.Body.Close()
	r.FirstByte = time.Since(start)
	r.Status = resp.StatusCode
	for name, values := range resp.Header {
		lower := strings.ToLower(name)
		if keepHeader(lower) {
			if r.Headers == nil {
				r.Headers = map[string]string{}
			}
			r.Headers[lower] = strings.Join(values, ", ")
		}
	}
	if !r.Admitted() {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, bodyKeep))
		r.Body = string(b)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		r.Error = "server closed the connection mid-response"
	}
	r.Done = time.Since(start)
}

func unwrapURLErr(err error) error {
	type unwrapper interface{ Unwrap() error }
	if u, ok := err.(unwrapper); ok && u.Unwrap() != nil {
		return u.Unwrap()
	}
	return err
}
