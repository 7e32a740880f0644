package attack

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A spec that cannot be sent is a *ConfigError naming its flags as Names
// says; a good one builds its request and options.
func TestRequestSpec(t *testing.T) {
	flags := map[string]string{"Options.MaxRequests": "--max-requests", "Options.MaxDuration": "--max-duration", "Options.Timeout": "--timeout",
		"RequestSpec.Methods": "--bypass-methods", "RequestSpec.Keys": "--keys", "RequestSpec.KeyHeader": "--key-header",
		"RequestSpec.SourceAddrs": "--source-addrs", "TLSOptions.CACertFile": "--cacert", "TLSOptions.CertFile": "--cert", "TLSOptions.KeyFile": "--key"}
	good := RequestSpec{Method: "post", Headers: []string{"A: 1"}, KeyHeader: "X-Key", Keys: 3, Timeout: time.Second, SourceAddrs: "127.0.0.1",
		MaxRequests: 10, MaxDuration: time.Minute, Methods: []string{"PUT"}, Names: func(f string) string { return flags[f] }}
	for want, change := range map[string]func(*RequestSpec){
		"--max-requests must be ≥ 1": func(s *RequestSpec) { s.MaxRequests = 0 },
		`--bypass-methods "put": write HTTP methods joined by commas, e.g. POST,PUT`:    func(s *RequestSpec) { s.Methods = []string{"put"} },
		"--max-duration must be positive":                                               func(s *RequestSpec) { s.MaxDuration = 0 },
		"--timeout must be positive":                                                    func(s *RequestSpec) { s.Timeout = -1 },
		"--keys must be ≥ 0":                                                            func(s *RequestSpec) { s.Keys = -1 },
		"--keys needs --key-header NAME to say where the key goes":                      func(s *RequestSpec) { s.KeyHeader = "" },
		"--cert and --key go together: give the client certificate and its private key": func(s *RequestSpec) { s.TLS.CertFile = "c.pem" },
		`--source-addrs: source "nope" is not an IP address: write addresses like 127.0.0.2 or a prefix like 127.0.0.0/28, separated by commas`: func(s *RequestSpec) { s.SourceAddrs = "nope" },
	} {
		s := good
		change(&s)
		var ce *ConfigError
		if err := s.Check(); !errors.As(err, &ce) || err.Error() != want {
			t.Errorf("%v; want %q", err, want)
		}
	}
	s := good
	s.TLS.CACertFile = "/nonexistent.pem"
	if err := s.Check(); err == nil || !strings.HasPrefix(err.Error(), "TLS options (--cacert, --cert, --key): ") {
		t.Errorf("TLS: %v", err)
	}
	if err := good.Check(); err != nil {
		t.Fatal(err)
	}
	r, err := good.Request("http://127.0.0.1:1/x")
	if err != nil || r.Method != "POST" || r.Header.Get("A") != "1" || r.KeyHeader != "X-Key" {
		t.Errorf("request %+v, %v", r, err)
	}
	o := good.Options()
	if o.Timeout != time.Second || o.MaxRequests != 10 || o.Keys != 3 || len(o.Sources) != 1 || o.Names("Options.Timeout") != "--timeout" {
		t.Errorf("options %+v", o)
	}
	if good.SourceAddrs = ""; good.Options().Sources != nil {
		t.Error("no --source-addrs binds sources")
	}
}
