//go:build unix

package nginx_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"github.com/ratecheck/ratecheck/internal/testenv"
	"math"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/probe/bypass"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/nginx"
)

// selfSignedFiles writes a certificate for 127.0.0.1 that is its own CA,
// and its key, as PEM files.
func selfSignedFiles(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

const httpsProbeMaxTime = 8 * time.Second

// probeNginx starts conf on a fresh nginx (over TLS when certFile is set)
// and probes it as `ratecheck probe` does.
func probeNginx(t *testing.T, conf, certFile, keyFile string) probe.Inference {
	t.Helper()
	return probeNginxWith(t, conf, nginx.Options{TLSCertFile: certFile, TLSKeyFile: keyFile}, false)
}

// probeNginxWith is probeNginx with nginx's options given, the probe
// speaking HTTP/2 when http2 is set.
func probeNginxWith(t *testing.T, conf string, opt nginx.Options, http2 bool) probe.Inference {
	t.Helper()
	certFile := opt.TLSCertFile
	opt.Keep = os.Getenv("KEEP") != ""
	inst, err := nginx.Start(context.Background(), conf, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := inst.Stop(); err != nil {
			t.Error(err)
		}
	}()
	req, err := attack.NewRequest("GET", inst.URL, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := probe.Run(context.Background(), req, probe.Options{MaxTime: httpsProbeMaxTime,
		Engine: attack.Options{TLS: attack.TLSOptions{CACertFile: certFile}, HTTP2: http2}})
	if err != nil {
		t.Fatal(err)
	}
	if errs, first := failedOf(res.Observation.Results); errs > 0 {
		t.Fatalf("%s: %d requests failed: %s", inst.URL, errs, first)
	}
	return res.Inference
}

// failedOf counts the requests that got no answer, but a bypass trial's:
// the http2 trial against a listener without HTTP/2 is refused in ALPN, as
// it should be (the trial is then "not served").
func failedOf(rs []results.Result) (n int, first string) {
	for _, r := range rs {
		if r.Error != "" && !bypass.IsTrial(r.Phase) {
			if n == 0 {
				first = r.Error
			}
			n++
		}
	}
	return n, first
}

// A probe over https against nginx with TLS reads the limiter exactly as
// over http: the same family, the same burst, and rates that agree within
// their stated errors (10 r/s is the configured truth). Bursts over TLS
// reach nginx at one instant, as over http, so shaping is not mistaken for
// added latency nor policing for shaping.
func TestProbeOverHTTPSMatchesHTTP(t *testing.T) {
	testenv.NeedNginx(t)
	t.Parallel() // the probes mostly wait on their own nginx
	certFile, keyFile := selfSignedFiles(t)
	for _, c := range []struct {
		conf, family string
		burst        int
	}{
		{"burst.conf", "leaky_shaping", 5},
		{"burst-nodelay.conf", "token_bucket", 6},
	} {
		t.Run(c.conf, func(t *testing.T) {
			t.Parallel()
			conf := filepath.Join("..", "..", "testdata", "nginx", c.conf)
			plain := probeNginx(t, conf, "", "")
			tls := probeNginx(t, conf, certFile, keyFile)
			for _, inf := range []probe.Inference{plain, tls} {
				if inf.Family != c.family || inf.Burst != c.burst || math.Abs(inf.RatePerS-10) > inf.RateErr+0.5 {
					t.Fatalf("over http: %s; over https: %s — want %s, burst %d, 10/s", plain.Summary(), tls.Summary(), c.family, c.burst)
				}
			}
			if math.Abs(plain.RatePerS-tls.RatePerS) > plain.RateErr+tls.RateErr+0.5 {
				t.Fatalf("rates disagree: http %s, https %s", plain.Summary(), tls.Summary())
			}
			t.Logf("http: %s | https: %s", plain.Summary(), tls.Summary())
		})
	}
}

// A real nginx over TLS offering HTTP/2 beside HTTP/1.1, whose zone counts
// HTTP/1.x clients only, is got around by the same request over HTTP/2 —
// and, probed over HTTP/2, by HTTP/1.1 not at all (it is counted); the
// honest zone on the address holds against either version.
func TestProbeFindsNginxHTTP2Bypass(t *testing.T) {
	testenv.NeedNginx(t)
	t.Parallel()
	certFile, keyFile := selfSignedFiles(t)
	for _, c := range []struct {
		conf  string
		http2 bool   // the probe speaks HTTP/2
		trial string // the trial that must find a way around; "" for none
	}{
		{"bypass-http1-only.conf", false, "http2"},
		{"status-429.conf", false, ""},
		{"status-429.conf", true, ""},
	} {
		t.Run(fmt.Sprintf("%s/http2=%v", c.conf, c.http2), func(t *testing.T) {
			t.Parallel() // each probe mostly waits on its own nginx
			conf := filepath.Join("..", "..", "testdata", "nginx", c.conf)
			s := probeNginxWith(t, conf, nginx.Options{TLSCertFile: certFile, TLSKeyFile: keyFile, HTTP2: true}, c.http2).Bypass
			if s == nil {
				t.Fatal("no bypass trial ran")
			}
			other := map[bool]string{false: "http2", true: "http1.1"}[c.http2]
			ran := false
			for _, r := range s.Trials {
				t.Logf("%s", r.Line())
				ran = ran || r.Trial == other
				if r.Outcome == bypass.Found && r.Trial != c.trial {
					t.Errorf("%s found a way around that %s does not have", r.Trial, c.conf)
				}
			}
			if !ran {
				t.Fatalf("the %s trial did not run: %s", other, s.Summary())
			}
			if c.trial != "" && !slices.ContainsFunc(s.Found(), func(r bypass.Result) bool { return r.Trial == c.trial }) {
				t.Errorf("%s: %s did not get around the limit; %s", c.conf, c.trial, s.Summary())
			}
		})
	}
}
