package refserver

import (
	"strings"
	"testing"
)

// serve's settings are set in turn over the defaults and checked as a
// builtin: spec is.
func TestConfigure(t *testing.T) {
	o, err := Configure([][2]string{{"algo", "fixed_window"}, {"limit", "5"}, {"window", "2s"}, {"status", "503"}})
	if err != nil || o.Limiter.Algo != "fixed_window" || o.Status != 503 || !o.RetryAfter {
		t.Errorf("%+v, %v", o, err)
	}
	if _, err := Configure([][2]string{{"status", "200"}}); err == nil {
		t.Error("status 200 accepted")
	}
	if _, err := Configure([][2]string{{"key", "forwarded"}}); err == nil || !strings.Contains(err.Error(), "needs scope=ip") {
		t.Errorf("a key without scope=ip: %v", err)
	}
}
