package attack

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A port that speaks TLS is named, with the https:// URL to use; a plain
// one, or an https:// target, gets no hint.
func TestHTTPSHint(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer tlsSrv.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer plain.Close()
	asHTTP := strings.Replace(tlsSrv.URL, "https://", "http://", 1) + "/x"
	if got := HTTPSHint(asHTTP); !strings.Contains(got, "speaks TLS: use an https:// URL ("+tlsSrv.URL+"/x)") {
		t.Errorf("TLS port: %q", got)
	}
	for _, u := range []string{plain.URL, tlsSrv.URL, "::bad"} {
		if got := HTTPSHint(u); got != "" {
			t.Errorf("%s: %q", u, got)
		}
	}
}
