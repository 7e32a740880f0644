// Package launch turns a target string into a URL to attack, starting what
// it names: a builtin: reference server in-process, or (later) an nginx from
// a config. Plain http(s) URLs pass through.
package launch

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/ratecheck/ratecheck/targets/refserver"
)

// Target is a started target. Close stops whatever was started.
type Target struct {
	Spec  string // as the user wrote it
	URL   string
	close func() error
}

// Close stops the target; safe to call on a URL target.
func (t *Target) Close() error {
	if t.close == nil {
		return nil
	}
	c := t.close
	t.close = nil
	return c()
}

// UsageError is a target string the user must fix.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Open starts or validates the target spec.
func Open(_ context.Context, spec string) (*Target, error) {
	switch {
	case strings.HasPrefix(spec, refserver.BuiltinPrefix):
		s, err := refserver.StartBuiltin(spec)
		if err != nil {
			return nil, &UsageError{err}
		}
		return &Target{Spec: spec, URL: s.URL, close: s.Close}, nil
	case strings.HasPrefix(spec, "http://") || strings.HasPrefix(spec, "https://"):
		u, err := url.Parse(spec)
		if err != nil || u.Host == "" {
			return nil, &UsageError{fmt.Errorf("target %q is not a valid URL: write e.g. http://127.0.0.1:8080/", spec)}
		}
		return &Target{Spec: spec, URL: spec}, nil
	}
	return nil, &UsageError{fmt.Errorf("target %q: use an http(s) URL or builtin:ALGO?key=value (e.g. builtin:token_bucket?rate=10/s&burst=20)", spec)}
}
