package proc

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"time"
)

// DefaultStartTimeout bounds a server's configuration check and the wait
// for it to answer, unless the runner's options say otherwise.
const DefaultStartTimeout = 5 * time.Second

// Preflight is how every runner's Start begins: the platform can run
// name, *timeout gets its default when unset, and find resolves the
// binary.
func Preflight(name string, timeout *time.Duration, find func() (string, error)) (string, error) {
	if err := PlatformCheck(name); err != nil {
		return "", err
	}
	if *timeout <= 0 {
		*timeout = DefaultStartTimeout
	}
	return find()
}

// CheckConfig runs a server's configuration check (what: "nginx -t",
// "haproxy -c", for messages) in dir, bounded by timeout and ctx, and
// returns its output. refused is the check's own failure (out explains
// it); err means there is no answer: ctx ended or the time ran out.
func CheckConfig(ctx context.Context, timeout time.Duration, dir, what, bin string, args ...string) (out string, refused, err error) {
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, bin, args...)
	cmd.Dir = dir
	b, runErr := cmd.CombinedOutput()
	switch {
	case runErr == nil:
		return string(b), nil, nil
	case ctx.Err() != nil:
		return "", nil, ctx.Err()
	case tctx.Err() != nil:
		return "", nil, fmt.Errorf("%s did not finish within %v", what, timeout)
	}
	return string(b), runErr, nil
}

// Get sends a GET and returns the response with its body read and closed:
// a readiness probe wants only the status and headers.
func Get(client *http.Client, url string) (*http.Response, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp, nil
}
